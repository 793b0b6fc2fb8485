package ogp_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func newServer(t *testing.T, name string) *ogptest.Server {
	t.Helper()
	p, ok := ogptest.ProfileByName(name)
	if !ok {
		t.Fatalf("no profile %q", name)
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
	srv := newServer(t, "v0.91")
	c := newClient(t, ogp.V091)
	q := ogp.Query{Request: ogp.RequestRules}
	if _, err := c.Query(ctxT(t), srv.Addr(), &q); err != nil {
		t.Fatal(err)
	}
	// challenge 0 -> error 3 -> resend with the new challenge.
	if n := srv.Packets(); n != 2 {
		t.Fatalf("first query took %d datagrams, want 2", n)
	}
	if _, err := c.Query(ctxT(t), srv.Addr(), &q); err != nil {
		t.Fatal(err)
	}
	if n := srv.Packets(); n != 3 {
		t.Fatalf("second query took %d datagrams, want 1 (cached challenge)", n-2)
	}
	// A ping teaches the challenge as well.
	srv2 := newServer(t, "v0.91")
	if _, err := c.Ping(ctxT(t), srv2.Addr()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctxT(t), srv2.Addr(), &q); err != nil {
		t.Fatal(err)
	}
	if n := srv2.Packets(); n != 2 {
		t.Fatalf("ping + query took %d datagrams, want 2", n)
	}
}

func TestErrorProfiles(t *testing.T) {
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
	p, _ := ogptest.ProfileByName("challenge-churn")
	p.ChurnEvery = 1
	always := ogptest.NewServer(p)
	defer always.Close()
	if _, err := c.Query(ctxT(t), always.Addr(), &q); !errors.Is(err, ogp.ErrTooManyChallenges) {
		t.Fatalf("always churning: err = %v", err)
	}
	if n := always.Packets(); n > 5 {
		t.Fatalf("client sent %d datagrams to an always-churning server", n)
	}
}

func TestSplitOutOfOrder(t *testing.T) {
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
		p, _ := ogptest.ProfileByName("split-out-of-order")
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

func TestTimeoutAndCancel(t *testing.T) {
	silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	addr := silent.LocalAddr().(*net.UDPAddr).AddrPort()
	c := &ogp.Client{Timeout: 50 * time.Millisecond, Retries: 1}
	defer c.Close()
	_, err = c.Ping(ctxT(t), addr)
	if !errors.Is(err, ogp.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
	buf := make([]byte, 100)
	got := 0
	silent.SetReadDeadline(time.Now().Add(time.Second))
	for {
		if _, _, err := silent.ReadFrom(buf); err != nil {
			break
		}
		got++
	}
	if got != 2 {
		t.Fatalf("silent server saw %d pings, want 2 (1 + 1 retry)", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Ping(ctx, addr); !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: err = %v", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	c2 := &ogp.Client{Timeout: time.Minute}
	defer c2.Close()
	if _, err := c2.Ping(ctx, addr); !errors.Is(err, ogp.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("ctx deadline: err = %v", err)
	}
	c.Close()
	if _, err := c.Ping(ctxT(t), addr); !errors.Is(err, ogp.ErrClientClosed) {
		t.Fatalf("closed: err = %v", err)
	}
}

func TestConcurrentQueries(t *testing.T) {
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

// raw sends b to addr and returns the datagrams that come back within a
// short bounded wait.
func raw(t *testing.T, addr netip.AddrPort, b []byte) [][]byte {
	t.Helper()
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.WriteToUDPAddrPort(b, addr); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	buf := make([]byte, 65535)
	conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	for {
		n, _, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return out
		}
		out = append(out, append([]byte(nil), buf[:n]...))
		conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	}
}

func packet(t *testing.T, h ogp.Header, body ...byte) []byte {
	b, _ := h.AppendBinary(nil)
	return append(b, body...)
}

func TestServerNeverAmplifiesBeforeChallenge(t *testing.T) {
	srv := newServer(t, "split-out-of-order") // CopyRequest off
	all := ogp.QueryAll(ogp.V091)
	body, _ := all.Append(nil, ogp.V091)
	cases := map[string][]byte{
		"query challenge 0":  packet(t, ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 9}, body...),
		"query no flags":     packet(t, ogp.Header{Type: ogp.TypeDefault}, body...),
		"tiny query":         packet(t, ogp.Header{Type: ogp.TypeDefault}, 0x01, 0x01),
		"ping":               packet(t, ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge}),
		"ping with id":       packet(t, ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 3}),
		"unknown type":       packet(t, ogp.Header{Type: 0x42}),
		"bad packet size":    packet(t, ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagSplit, MaxBytesPerPacket: 20}, body...),
		"wrong challenge":    packet(t, ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: 12345}, body...),
		"rcon":               packet(t, ogp.Header{Type: ogp.TypeRcon, Flags: ogp.FlagChallenge}, 1, 2, 3),
		"answer is ignored":  packet(t, ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagAnswer}, body...),
		"error is ignored":   packet(t, ogp.Header{Type: ogp.TypeError}, 3),
		"uplink is ignored":  packet(t, ogp.Header{Type: ogp.TypeMasterUplink}, 1, 0),
		"garbage after pref": append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0}, 0xFF, 0xFF),
	}
	answered := map[string]bool{}
	for name, req := range cases {
		got := raw(t, srv.Addr(), req)
		for _, p := range got {
			if len(p) > len(req) {
				t.Errorf("%s: %d-byte answer to a %d-byte request", name, len(p), len(req))
			}
		}
		answered[name] = len(got) > 0
	}
	for _, name := range []string{"query challenge 0", "ping", "ping with id", "bad packet size", "wrong challenge"} {
		if !answered[name] {
			t.Errorf("%s: no answer", name)
		}
	}
	for _, name := range []string{"answer is ignored", "error is ignored", "uplink is ignored", "garbage after pref", "tiny query"} {
		if answered[name] {
			t.Errorf("%s: answered", name)
		}
	}
}

func TestServerErrorAnswers(t *testing.T) {
	srv := newServer(t, "v0.91")
	ask := func(h ogp.Header, body ...byte) (ogp.Header, []byte) {
		t.Helper()
		got := raw(t, srv.Addr(), packet(t, h, body...))
		if len(got) != 1 {
			t.Fatalf("got %d datagrams", len(got))
		}
		ah, ab, err := ogp.ParseHeader(got[0])
		if err != nil {
			t.Fatal(err)
		}
		return ah, ab
	}
	// Learn the challenge with a ping.
	ph, _ := ask(ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 5})
	if ph.Flags != ogp.FlagAnswer|ogp.FlagChallenge|ogp.FlagRequestID || ph.RequestID != 5 || ph.Challenge == 0 {
		t.Fatalf("ping answer header %+v", ph)
	}
	chal := ph.Challenge
	proven := ogp.Header{Flags: ogp.FlagChallenge | ogp.FlagRequestID, Challenge: chal, RequestID: 6}
	for _, tc := range []struct {
		name string
		h    ogp.Header
		body []byte
		code ogp.ErrorCode
	}{
		{"invalid type", withType(proven, ogp.TypeRcon), []byte{1}, ogp.ErrorInvalidType},
		{"invalid query", withType(proven, ogp.TypeDefault), []byte{0x81}, ogp.ErrorInvalidQuery},
		{"invalid value", ogp.Header{Type: ogp.TypeDefault, Flags: proven.Flags | ogp.FlagSplit, Challenge: chal, MaxBytesPerPacket: 1501}, []byte{0}, ogp.ErrorInvalidValue},
	} {
		h, b := ask(tc.h, tc.body...)
		e, err := ogp.ParseErrorAnswer(b)
		if h.Type != ogp.TypeError || err != nil || e.Code != tc.code {
			t.Errorf("%s: %+v %+v %v", tc.name, h, e, err)
		}
	}
	// Error 3 with the spec's request copy (the v0.91 profile opts in).
	q := ogp.Query{Request: ogp.RequestRules}
	body, _ := q.Append(nil, ogp.V091)
	h, b := ask(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 77}, body...)
	e, err := ogp.ParseErrorAnswer(b)
	if err != nil || e.Code != ogp.ErrorInvalidChallenge || h.Challenge != chal {
		t.Fatalf("error 3: %+v %+v %v", h, e, err)
	}
	copyChal, ok := e.Challenge()
	if !ok || copyChal != chal {
		t.Fatalf("copy challenge %#x %v, want %#x", copyChal, ok, chal)
	}
	want := packet(t, ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, Challenge: chal, RequestID: 77}, body...)
	if !bytes.Equal(e.Request, want) {
		t.Fatalf("copy = % X\nwant   % X", e.Request, want)
	}
	// Sending the copy back gets the answer.
	got := raw(t, srv.Addr(), e.Request)
	if len(got) != 1 {
		t.Fatalf("resent copy: %d datagrams", len(got))
	}
	ah, ab, _ := ogp.ParseHeader(got[0])
	a, err := ogp.ParseAnswer(ab, ogp.V091)
	if err != nil || ah.Type != ogp.TypeDefault || len(a.Rules) != 2 {
		t.Fatalf("answer %+v %+v %v", ah, a, err)
	}
}

func withType(h ogp.Header, t ogp.Type) ogp.Header {
	h.Type = t
	return h
}

func TestServerLatin1(t *testing.T) {
	srv := newServer(t, "v1")
	q := ogp.Query{Request: ogp.RequestRules}
	body, _ := q.Append(nil, ogp.V1)
	ping := raw(t, srv.Addr(), packet(t, ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge}))
	ph, _, _ := ogp.ParseHeader(ping[0])
	for _, utf := range []bool{false, true} {
		h := ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: ph.Challenge}
		if utf {
			h.Flags |= ogp.FlagUTF8
		}
		got := raw(t, srv.Addr(), packet(t, h, body...))
		ah, ab, _ := ogp.ParseHeader(got[0])
		a, err := ogp.ParseAnswer(ab, ogp.V1)
		if err != nil {
			t.Fatal(err)
		}
		want := "h\xe9llo"
		if utf {
			want = "héllo"
		}
		if a.Rules[1].Value.String() != want || (ah.Flags&ogp.FlagUTF8 != 0) != utf {
			t.Errorf("utf8=%v: %q flags %v", utf, a.Rules[1].Value, ah.Flags)
		}
		if a.Rules[1].Value.UTF8() != "héllo" {
			t.Errorf("UTF8() = %q", a.Rules[1].Value.UTF8())
		}
	}
}

func TestServerRateLimitAndShutdown(t *testing.T) {
	s := &ogp.Server{RateLimit: 1e-6, NoChallenge: true, Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
		return &ogp.Answer{Request: ogp.RequestRules}, nil
	})}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(pc) }()
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	ping := packet(t, ogp.Header{Type: ogp.TypePing})
	answers := 0
	for range 4 {
		answers += len(raw(t, addr, ping))
	}
	if answers != 1 {
		t.Errorf("rate limit 1e-6/s (burst 1): %d answers to 4 pings, want 1", answers)
	}
	// Non-OGP datagrams on the same socket are ignored.
	if got := raw(t, addr, []byte("\xFF\xFF\xFF\xFFTSource Engine Query\x00")); len(got) != 0 {
		t.Errorf("answered an A2S datagram")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ogp.ErrServerClosed) {
		t.Fatalf("Serve returned %v", err)
	}
}
