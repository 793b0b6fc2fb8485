package ogp_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func newServer(t *testing.T, name string) *ogptest.Server {
	t.Helper()
	p, err := ogptest.LookupProfile(name)
	if err != nil {
		t.Fatal(err)
	}
	s := ogptest.NewServer(p)
	t.Cleanup(s.Close)
	return s
}

func newClient(t *testing.T, d ogp.Dialect) *ogp.Client {
	t.Helper()
	c := &ogp.Client{Dialect: d, Timeout: time.Second, Retries: 2}
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// expect is what a server holding full should answer to q: the sections
// and fields both sides name, with list counts filled in.
func expect(full *ogp.Answer, q *ogp.Query, d ogp.Dialect) *ogp.Answer {
	a := *full
	a.Request &= q.Request
	a.Info.Fields &= q.Info
	a.Teams.Fields &= q.Team
	a.Players.Fields &= q.Player
	a.AddOns.Fields &= q.AddOn
	if d == ogp.V1 {
		a.Info.ModFields &= q.Mod
		a.Info.MapFields &= q.Map
	}
	// Clear what the masks exclude, field by field, by round-tripping
	// through the codec is what the test checks; here we zero by hand.
	a.Info = keepInfo(a.Info, a.Request, d)
	a.Teams = keepTeams(a.Teams, a.Request)
	a.Players = keepPlayers(a.Players, a.Request, d)
	a.AddOns = keepAddOns(a.AddOns)
	if a.Request&ogp.RequestServerInfo == 0 {
		a.Info = ogp.ServerInfo{}
	}
	if a.Request&ogp.RequestTeams == 0 {
		a.Teams = ogp.TeamList{}
	}
	if a.Request&ogp.RequestPlayers == 0 {
		a.Players = ogp.PlayerList{}
	}
	if a.Request&ogp.RequestRules == 0 {
		a.Rules = nil
	}
	if a.Request&ogp.RequestAddOns == 0 {
		a.AddOns = ogp.AddOnList{}
	}
	if a.Request&ogp.RequestLimits == 0 {
		a.Limits = nil
	}
	return &a
}

func keepInfo(s ogp.ServerInfo, r ogp.RequestFlags, d ogp.Dialect) ogp.ServerInfo {
	f := s.Fields
	var o ogp.ServerInfo
	o.Fields = f
	if f&ogp.InfoGameName != 0 {
		o.GameName = s.GameName
	}
	if f&ogp.InfoServerFlags != 0 {
		o.Flags = s.Flags
		if d == ogp.V091 {
			o.Flags.Password = false
		}
	}
	if f&ogp.InfoMod != 0 {
		o.Mod.Name = s.Mod.Name
		if d == ogp.V091 {
			o.Mod.Dir = s.Mod.Dir
		} else if len(s.Mod.Name) > 0 {
			o.ModFields = s.ModFields
			m := s.ModFields
			pick(m&ogp.ModIdentifier != 0, &o.Mod.Identifier, s.Mod.Identifier)
			pick(m&ogp.ModVersion != 0, &o.Mod.Version, s.Mod.Version)
			pick(m&ogp.ModURL != 0, &o.Mod.URL, s.Mod.URL)
			pick(m&ogp.ModAuthor != 0, &o.Mod.Author, s.Mod.Author)
			if m&ogp.ModSize != 0 {
				o.Mod.Size = s.Mod.Size
			}
		}
	}
	if f&ogp.InfoConnectPort != 0 {
		o.ConnectPort = s.ConnectPort
	}
	if f&ogp.InfoHostName != 0 {
		o.HostName = s.HostName
		if r&ogp.RequestColoredNames != 0 {
			o.HostNameColor = s.HostNameColor
		}
	}
	keepMap := func(m ogp.MapInfo) ogp.MapInfo {
		if d == ogp.V091 {
			return ogp.MapInfo{Name: m.Name, File: m.File}
		}
		mf := s.MapFields
		out := ogp.MapInfo{Name: m.Name}
		pick(mf&ogp.MapFileName != 0, &out.File, m.File)
		pick(mf&ogp.MapVersion != 0, &out.Version, m.Version)
		pick(mf&ogp.MapURL != 0, &out.URL, m.URL)
		pick(mf&ogp.MapAuthor != 0, &out.Author, m.Author)
		if mf&ogp.MapFileSize != 0 {
			out.FileSize = m.FileSize
		}
		if mf&ogp.MapFileMD5 != 0 {
			out.FileMD5 = m.FileMD5
		}
		return out
	}
	if f&ogp.InfoMap != 0 {
		o.Map = keepMap(s.Map)
		if d == ogp.V1 {
			o.MapFields = s.MapFields
		}
	}
	if f&ogp.InfoNextMap != 0 && (d == ogp.V091 || f&ogp.InfoMap != 0) {
		o.NextMap = keepMap(s.NextMap)
	}
	pick(f&ogp.InfoGameType != 0, &o.GameType, s.GameType)
	pick(f&ogp.InfoGameMode != 0, &o.GameMode, s.GameMode)
	if f&ogp.InfoPlayerCount != 0 {
		o.PlayerCount = s.PlayerCount
	}
	if f&ogp.InfoSlotMax != 0 {
		o.SlotMax = s.SlotMax
	}
	if f&ogp.InfoBotCount != 0 {
		o.BotCount = s.BotCount
	}
	if f&ogp.InfoReservedSlots != 0 {
		o.ReservedSlots = s.ReservedSlots
	}
	return o
}

func pick(ok bool, dst *ogp.Text, src ogp.Text) {
	if ok {
		*dst = src
	}
}

func keepTeams(l ogp.TeamList, r ogp.RequestFlags) ogp.TeamList {
	o := ogp.TeamList{Count: len(l.Teams), Fields: l.Fields}
	if o.Count == 0 {
		o.Fields = 0 // no mask is sent for an empty list
	}
	if o.Fields == 0 {
		return o
	}
	for _, t := range l.Teams {
		var k ogp.Team
		if l.Fields&ogp.TeamName != 0 {
			k.Name = t.Name
			if r&ogp.RequestColoredNames != 0 {
				k.NameColor = t.NameColor
			}
		}
		if l.Fields&ogp.TeamScore != 0 {
			k.Score = t.Score
		}
		if l.Fields&ogp.TeamAveragePing != 0 {
			k.AveragePing = t.AveragePing
		}
		if l.Fields&ogp.TeamAverageLoss != 0 {
			k.AverageLoss = t.AverageLoss
		}
		if l.Fields&ogp.TeamPlayerCount != 0 {
			k.PlayerCount = t.PlayerCount
		}
		if l.Fields&ogp.TeamColor != 0 {
			k.Color = t.Color
		}
		o.Teams = append(o.Teams, k)
	}
	return o
}

func keepPlayers(l ogp.PlayerList, r ogp.RequestFlags, d ogp.Dialect) ogp.PlayerList {
	o := ogp.PlayerList{Count: len(l.Players), Fields: l.Fields}
	if o.Count == 0 {
		o.Fields = 0 // no mask is sent for an empty list
	}
	if o.Fields == 0 {
		return o
	}
	f := l.Fields
	for _, p := range l.Players {
		var k ogp.Player
		if f&ogp.PlayerFlags != 0 {
			k.Flags = p.Flags
		}
		if f&ogp.PlayerSlot != 0 {
			k.Slot = p.Slot
		}
		if f&ogp.PlayerName != 0 {
			k.Name = p.Name
			if r&ogp.RequestColoredNames != 0 {
				k.NameColor = p.NameColor
			}
		}
		if f&ogp.PlayerTeam != 0 {
			k.Team = p.Team
		}
		pick(f&ogp.PlayerClass != 0, &k.Class, p.Class)
		pick(f&ogp.PlayerRace != 0, &k.Race, p.Race)
		if f&ogp.PlayerScore != 0 {
			k.Score = p.Score
		}
		if f&ogp.PlayerFrags != 0 {
			k.Frags = p.Frags
		}
		if f&ogp.PlayerKills != 0 {
			k.Kills = p.Kills
		}
		if f&ogp.PlayerDeaths != 0 {
			k.Deaths = p.Deaths
		}
		if f&ogp.PlayerSuicides != 0 {
			k.Suicides = p.Suicides
		}
		if f&ogp.PlayerTeamKills != 0 {
			k.TeamKills = p.TeamKills
		}
		if f&ogp.PlayerID != 0 {
			k.ID = p.ID
		}
		pick(f&ogp.PlayerGlobalID != 0, &k.GlobalID, p.GlobalID)
		if f&ogp.PlayerPing != 0 {
			k.Ping = p.Ping
		}
		if f&ogp.PlayerLoss != 0 {
			k.Loss = p.Loss
		}
		pick(f&ogp.PlayerModel != 0, &k.Model, p.Model)
		if f&ogp.PlayerTime != 0 {
			k.Time = p.Time
		}
		if f&ogp.PlayerAddress != 0 {
			if d == ogp.V1 {
				k.Address = p.Address
			} else {
				k.IPv4 = p.IPv4
			}
		}
		o.Players = append(o.Players, k)
	}
	return o
}

func keepAddOns(l ogp.AddOnList) ogp.AddOnList {
	o := ogp.AddOnList{Count: len(l.AddOns), Fields: l.Fields}
	if o.Count == 0 {
		o.Fields = 0 // no mask is sent for an empty list
	}
	if o.Fields == 0 {
		return o
	}
	for _, a := range l.AddOns {
		var k ogp.AddOn
		if l.Fields&ogp.AddOnFlags != 0 {
			k.Flags = a.Flags
		}
		pick(l.Fields&ogp.AddOnShortName != 0, &k.ShortName, a.ShortName)
		pick(l.Fields&ogp.AddOnLongName != 0, &k.LongName, a.LongName)
		pick(l.Fields&ogp.AddOnVersion != 0, &k.Version, a.Version)
		o.AddOns = append(o.AddOns, k)
	}
	return o
}

func sameAnswer(t *testing.T, got, want *ogp.Answer) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("answer mismatch\n got: %+v\nwant: %+v", got, want)
		gv, wv := reflect.ValueOf(*got), reflect.ValueOf(*want)
		for i := range gv.NumField() {
			if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
				t.Errorf("field %s:\n got %+v\nwant %+v", gv.Type().Field(i).Name, gv.Field(i).Interface(), wv.Field(i).Interface())
			}
		}
	}
}

func TestConversationFieldCombinations(t *testing.T) {
	t.Parallel()
	queries := map[string]ogp.Query{
		"everything":       ogp.QueryAll(ogp.V091),
		"nothing":          {},
		"info only":        {Request: ogp.RequestServerInfo, Info: ogp.InfoAll},
		"info subset":      {Request: ogp.RequestServerInfo, Info: ogp.InfoHostName | ogp.InfoPlayerCount | ogp.InfoSlotMax},
		"colored host":     {Request: ogp.RequestServerInfo | ogp.RequestColoredNames, Info: ogp.InfoHostName | ogp.InfoMap},
		"players names":    {Request: ogp.RequestPlayers, Player: ogp.PlayerName | ogp.PlayerScore | ogp.PlayerTime},
		"players no field": {Request: ogp.RequestPlayers},
		"players all":      {Request: ogp.RequestPlayers | ogp.RequestColoredNames, Player: ogp.PlayerAll},
		"teams and limits": {Request: ogp.RequestTeams | ogp.RequestLimits, Team: ogp.TeamName | ogp.TeamScore},
		"rules":            {Request: ogp.RequestRules},
		"addons":           {Request: ogp.RequestAddOns, AddOn: ogp.AddOnShortName | ogp.AddOnFlags},
		"unknown bits":     {Request: ogp.RequestRules | 1<<20, Info: 1 << 30},
	}
	for _, d := range []ogp.Dialect{ogp.V091, ogp.V1} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, map[ogp.Dialect]string{ogp.V091: "v0.91", ogp.V1: "v1"}[d])
			full := ogptest.SampleAnswer(d, 4)
			c := newClient(t, d)
			names := []string{"everything", "nothing", "info only", "info subset", "colored host", "players names",
				"players no field", "players all", "teams and limits", "rules", "addons", "unknown bits"}
			for _, name := range names {
				q := queries[name]
				if name == "everything" {
					q = ogp.QueryAll(d)
				}
				resp, err := c.Query(ctxT(t), srv.Addr(), &q)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				known := q
				known.Request &= ogp.RequestAll
				known.Info &= ogp.InfoAll
				want := expect(full, &known, d)
				if d == ogp.V1 {
					want.Request &^= ogp.RequestColoredNames // the v1 sample has no colours
				}
				t.Run(name, func(t *testing.T) { sameAnswer(t, resp.Answer, want) })
			}
		})
	}
}

func TestChallengeFlow(t *testing.T) {
	t.Parallel()
	srv := newServer(t, "v0.91")
	c := newClient(t, ogp.V091)
	q := ogp.Query{Request: ogp.RequestRules}
	resp, err := c.Query(ctxT(t), srv.Addr(), &q)
	if err != nil {
		t.Fatal(err)
	}
	// challenge 0 -> error 3 -> resend with the new challenge.
	if n := srv.Received(); n != 2 || resp.Stats != (ogp.Stats{Sent: 2, Rechallenged: 1}) {
		t.Fatalf("first query took %d datagrams (stats %+v), want 2", n, resp.Stats)
	}
	if _, err := c.Query(ctxT(t), srv.Addr(), &q); err != nil {
		t.Fatal(err)
	}
	if n := srv.Received(); n != 3 {
		t.Fatalf("second query took %d datagrams, want 1 (cached challenge)", n-2)
	}
	// A ping teaches the challenge as well.
	srv2 := newServer(t, "v0.91")
	if rtt, err := c.Ping(ctxT(t), srv2.Addr()); err != nil || rtt <= 0 {
		t.Fatalf("ping: %v, %v", rtt, err)
	}
	if _, err := c.Query(ctxT(t), srv2.Addr(), &q); err != nil {
		t.Fatal(err)
	}
	if n := srv2.Received(); n != 2 {
		t.Fatalf("ping + query took %d datagrams, want 2", n)
	}
}

// TestError3Forms: gsq's client gets through whether error 3 carries the
// new challenge in its header and the request copy (the specification's
// form), in the header only, or in the copy only.
func TestError3Forms(t *testing.T) {
	t.Parallel()
	for _, profile := range []string{"v0.91", "challenge-header-only", "challenge-copy-only"} {
		t.Run(profile, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, profile)
			var forms []string
			c := newClient(t, ogp.V091)
			c.Debug = func(dir string, _ netip.AddrPort, b []byte) {
				h, body, err := ogp.ParseHeader(b)
				if dir == "recv" && err == nil && h.Type == ogp.TypeError {
					e, _ := ogp.ParseErrorAnswer(body)
					_, inCopy := e.Challenge()
					forms = append(forms, fmt.Sprintf("header %v copy %v", h.Flags&ogp.FlagChallenge != 0, inCopy))
				}
			}
			q := ogp.Query{Request: ogp.RequestServerInfo, Info: ogp.InfoHostName}
			resp, err := c.Query(ctxT(t), srv.Addr(), &q)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Answer.Info.HostName.String() != "gsq ogptest server" || resp.Stats != (ogp.Stats{Sent: 2, Rechallenged: 1}) {
				t.Errorf("answer %q, stats %+v", resp.Answer.Info.HostName, resp.Stats)
			}
			want := map[string]string{"v0.91": "header true copy true", "challenge-header-only": "header true copy false",
				"challenge-copy-only": "header false copy true"}[profile]
			if len(forms) != 1 || forms[0] != want {
				t.Errorf("error 3 answers seen: %q, want [%q]", forms, want)
			}
		})
	}
}

// TestDialectMismatch: a client of one dialect asking a server of the
// other gets an error that says so.
func TestDialectMismatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		client  ogp.Dialect
		q       ogp.Query
		profile string
		server  ogp.Dialect
		want    string
	}{
		// The answer stops parsing at a bit v1 does not know.
		{"v1 client", ogp.V1, ogp.QueryAll(ogp.V1), "v0.91", ogp.V091, "the server answers in dialect v0.91, not v1: parse "},
		// The answer parses in v1 but leaves bytes: v1's host name bit is
		// v0.91's mod bit, answered with two strings (the mod dir "ctf" is left).
		{"v1 client, host name", ogp.V1, ogp.Query{Request: ogp.RequestServerInfo, Info: ogp.InfoHostName}, "v0.91", ogp.V091,
			"the server answers in dialect v0.91, not v1: 4 bytes left after the answer"},
		// The v1 server cannot parse the v0.91 query.
		{"v0.91 client", ogp.V091, ogp.QueryAll(ogp.V091), "v1", ogp.V1, "server answered error 4 (invalid query): the server may speak dialect v1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := newServer(t, tc.profile)
			c := newClient(t, tc.client)
			q := tc.q
			resp, err := c.Query(ctxT(t), srv.Addr(), &q)
			var de *ogp.DialectError
			if !errors.As(err, &de) || de.Client != tc.client || de.Server != tc.server || resp != nil {
				t.Fatalf("err = %v, want a *DialectError", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "ogp: query 127.0.0.1:") {
				t.Errorf("message %q does not say %q", err, tc.want)
			}
			// The same query in the server's dialect works.
			c.Dialect = tc.server
			q = ogp.QueryAll(tc.server)
			if _, err := c.Query(ctxT(t), srv.Addr(), &q); err != nil {
				t.Errorf("in the server's dialect: %v", err)
			}
		})
	}
}

func TestErrorProfiles(t *testing.T) {
	t.Parallel()
	q := ogp.QueryAll(ogp.V091)
	for _, tc := range []struct {
		profile string
		code    ogp.ErrorCode
	}{{"banned", ogp.ErrorBanned}, {"invalid-value", ogp.ErrorInvalidValue}} {
		srv := newServer(t, tc.profile)
		_, err := newClient(t, ogp.V091).Query(ctxT(t), srv.Addr(), &q)
		var se *ogp.ServerError
		if !errors.As(err, &se) || se.Code != tc.code {
			t.Errorf("%s: err = %v, want server error %d", tc.profile, err, tc.code)
		}
	}
	// Churn every 2nd datagram: each query needs a re-challenge, and gets through.
	srv := newServer(t, "challenge-churn")
	c := newClient(t, ogp.V091)
	for i := range 3 {
		if _, err := c.Query(ctxT(t), srv.Addr(), &q); err != nil {
			t.Fatalf("churn query %d: %v", i, err)
		}
	}
	// Churn on every datagram: the client gives up after a bounded number of tries.
	p, _ := ogptest.LookupProfile("challenge-churn")
	p.ChurnEvery = 1
	always := ogptest.NewServer(p)
	defer always.Close()
	if _, err := c.Query(ctxT(t), always.Addr(), &q); !errors.Is(err, ogp.ErrTooManyChallenges) {
		t.Fatalf("always churning: err = %v", err)
	}
	if n := always.Received(); n != 4 {
		t.Fatalf("client sent %d datagrams to an always-churning server, want 1 + 3 re-challenges", n)
	}
}

func TestSplitOutOfOrder(t *testing.T) {
	t.Parallel()
	srv := newServer(t, "split-out-of-order")
	c := newClient(t, ogp.V091)
	var mu sync.Mutex
	var sizes []int
	c.Debug = func(dir string, _ netip.AddrPort, b []byte) {
		if dir == "recv" {
			mu.Lock()
			sizes = append(sizes, len(b))
			mu.Unlock()
		}
	}
	for _, max := range []uint16{500, 1400} {
		sizes = nil
		c.MaxBytesPerPacket = max
		q := ogp.QueryAll(ogp.V091)
		resp, err := c.Query(ctxT(t), srv.Addr(), &q)
		if err != nil {
			t.Fatalf("max %d: %v", max, err)
		}
		p, _ := ogptest.LookupProfile("split-out-of-order")
		sameAnswer(t, resp.Answer, expect(p.Answer, &q, ogp.V091))
		mu.Lock()
		frags := 0
		for _, n := range sizes {
			if n > int(max) {
				t.Errorf("max %d: got a %d-byte datagram", max, n)
			}
			if n > 20 {
				frags++
			}
		}
		mu.Unlock()
		if frags < 3 {
			t.Errorf("max %d: only %d answer datagrams; the profile should split", max, frags)
		}
	}
}

func TestConcurrentQueries(t *testing.T) {
	t.Parallel()
	a, b := newServer(t, "v0.91"), newServer(t, "split-out-of-order")
	c := newClient(t, ogp.V091)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			srv := a
			if i%2 == 1 {
				srv = b
			}
			q := ogp.QueryAll(ogp.V091)
			if _, err := c.Query(ctxT(t), srv.Addr(), &q); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
