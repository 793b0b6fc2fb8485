// Package ogptest runs fake Open Game Protocol (OGP v0.91) servers on
// loopback for tests, in the shape of net/http/httptest: NewServer starts
// one, Addr says where, Close stops it. Each [Profile] plays one kind of
// server or one quirk: the v0.91 specification, the later SDK's v1
// layout, split answers sent out of order with duplicates, error answers
// (banned, invalid value, challenge churn), the two forms an error 3
// answer may take, and lost requests. [LookupProfile] finds a profile by
// name. Unlike a2stest, it does not ship inside gsq: `gsq serve` answers
// OGP with ogp.Server and the simulated content of internal/sim, and its
// --profile picks A2S quirks only.
package ogptest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/ogp"
)

// Profile describes a fake server.
type Profile struct {
	Name    string
	Dialect ogp.Dialect
	// Answer is everything the server supports; the server sends the part
	// a query asks for. Nil means SampleAnswer(Dialect, 4).
	Answer *ogp.Answer
	// Reorder sends the datagrams of each answer in reverse order and
	// sends the first of them twice.
	Reorder bool
	// Banned answers error 0 to everything.
	Banned bool
	// InvalidValue answers error 2 to every Default Query.
	InvalidValue bool
	// ChurnEvery forgets every issued challenge before every ChurnEvery-th
	// datagram received (0: never), so clients must re-challenge.
	ChurnEvery int
	// Error3 is the form of the error 3 (invalid challenge) answers; the
	// zero value is the specification's.
	Error3 Error3Form
	// DropEvery drops every DropEvery-th datagram received without an
	// answer (0: none), so clients must resend.
	DropEvery int
}

// Error3Form is how a fake server's error 3 answers carry the new
// challenge.
type Error3Form uint8

// Error 3 forms.
const (
	// Error3Spec is the specification's form, which ogp.Server sends:
	// the challenge in the answer's header and in the copy of the request
	// that follows the error code.
	Error3Spec Error3Form = iota
	// Error3HeaderOnly carries the challenge in the header only, with no
	// copy of the request.
	Error3HeaderOnly
	// Error3CopyOnly carries the challenge in the copy of the request
	// only; the header has no challenge field.
	Error3CopyOnly
)

// Profiles returns the built-in profiles.
func Profiles() []Profile {
	big := SampleAnswer(ogp.V091, 60)
	return []Profile{
		{Name: "v0.91", Dialect: ogp.V091},
		{Name: "v1", Dialect: ogp.V1, Answer: SampleAnswer(ogp.V1, 4)},
		{Name: "split-out-of-order", Dialect: ogp.V091, Answer: big, Reorder: true},
		{Name: "banned", Banned: true},
		{Name: "invalid-value", InvalidValue: true},
		{Name: "challenge-churn", ChurnEvery: 2},
		{Name: "challenge-header-only", Error3: Error3HeaderOnly},
		{Name: "challenge-copy-only", Error3: Error3CopyOnly},
		{Name: "lossy", DropEvery: 2},
	}
}

// ProfileNames returns the names of the built-in profiles.
func ProfileNames() []string {
	var names []string
	for _, p := range Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// LookupProfile returns the built-in profile called name. Its error lists
// the known names.
func LookupProfile(name string) (Profile, error) {
	for _, p := range Profiles() {
		if p.Name == name {
			return p, nil
		}
	}
	return Profile{}, fmt.Errorf("ogptest: unknown profile %q (known: %s)", name, strings.Join(ProfileNames(), ", "))
}

// SampleAnswer is a server with every section filled and players
// players, in the layout of dialect d.
func SampleAnswer(d ogp.Dialect, players int) *ogp.Answer {
	a := &ogp.Answer{
		GameID:  7,
		Request: ogp.RequestAll,
		Info: ogp.ServerInfo{
			Fields:        ogp.InfoAll,
			GameName:      ogp.Text("Test Game"),
			Flags:         ogp.ServerFlags{Dedicated: true, OS: ogp.OSLinux},
			Mod:           ogp.ModInfo{Name: ogp.Text("Capture"), Dir: ogp.Text("ctf")},
			ConnectPort:   7777,
			HostName:      ogp.Text("gsq ogptest server"),
			HostNameColor: ogp.ColorInfo{{Delta: 0, Value: 0x0C}, {Delta: 4, Value: ogp.ColorResetText}, {Delta: 2, Value: ogp.ColorText16, RGB565: 0xF800}},
			Map:           ogp.MapInfo{Name: ogp.Text("Fortress"), File: ogp.Text("ctf_fort")},
			NextMap:       ogp.MapInfo{Name: ogp.Text("Canyon"), File: ogp.Text("")},
			GameType:      ogp.Text("CTF"),
			GameMode:      ogp.Text("classic"),
			PlayerCount:   uint32(players),
			SlotMax:       300,
			BotCount:      1,
			ReservedSlots: 2,
		},
		Teams: ogp.TeamList{Fields: ogp.TeamAll, Teams: []ogp.Team{
			{Name: ogp.Text("Red"), NameColor: ogp.ColorInfo{{Value: 0x04}}, Score: -130, AveragePing: 40, PlayerCount: uint32((players + 1) / 2), Color: 0xF800},
			{Name: ogp.Text("Blue"), Score: 254, AveragePing: 55, AverageLoss: 1, PlayerCount: uint32(players / 2), Color: 0x001F},
		}},
		Players: ogp.PlayerList{Fields: ogp.PlayerAll},
		Rules: []ogp.Rule{
			{Key: ogp.Text("timelimit"), Value: ogp.Text("30")},
			{Key: ogp.Text("motd"), Value: ogp.Text("héllo")},
		},
		AddOns: ogp.AddOnList{Fields: ogp.AddOnAll, AddOns: []ogp.AddOn{
			{Flags: ogp.AddOnActive | ogp.AddOnAdminTool, ShortName: ogp.Text("adm"), LongName: ogp.Text("Admin Mod"), Version: ogp.Text("2.1")},
		}},
		Limits: []ogp.Limit{
			{Type: ogp.LimitTime, HasLeft: true, Limit: 1800, Left: 754},
			{Type: ogp.LimitTeamScore, Limit: 70000},
		},
	}
	if d == ogp.V1 {
		a.Info.Flags.Password = true
		a.Info.ModFields = ogp.ModAll
		a.Info.Mod = ogp.ModInfo{Name: a.Info.Mod.Name, Identifier: ogp.Text("capture"), Size: 123456,
			Version: ogp.Text("1.2"), URL: ogp.Text("https://example.invalid/capture"), Author: ogp.Text("gsq")}
		a.Info.MapFields = ogp.MapAll
		a.Info.Map.FileSize = 4096
		a.Info.Map.FileMD5 = [16]byte{0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e}
		a.Info.Map.Version = ogp.Text("3")
		a.Info.Map.URL = ogp.Text("https://example.invalid/fort")
		a.Info.Map.Author = ogp.Text("mapper")
		a.Info.NextMap = ogp.MapInfo{Name: ogp.Text("Canyon"), File: ogp.Text("ctf_canyon"), FileSize: 8192,
			Version: ogp.Text("1"), URL: ogp.Text(""), Author: ogp.Text("")}
		a.Info.HostNameColor = nil // the SDK never sends colours
		a.Teams.Teams[0].NameColor = nil
		a.Request &^= ogp.RequestColoredNames
	}
	for i := range players {
		p := ogp.Player{
			Flags: ogp.StateAlive, Slot: uint32(i), Name: ogp.Text(fmt.Sprintf("player-%02d-with-a-long-name", i)),
			Team: int32(i % 2), Class: ogp.Text("scout"), Race: ogp.Text("human"),
			Score: int32(i*7 - 20), Frags: int32(i - 3), Kills: uint32(i), Deaths: uint32(i / 2), Suicides: 1, TeamKills: 0,
			ID: uint32(1000 + i), GlobalID: ogp.Text(fmt.Sprintf("G%d", i)), Ping: uint16(20 + i), Loss: 0,
			Model: ogp.Text("soldier"), Time: uint16(60 * i),
		}
		if d == ogp.V1 {
			p.Address = []byte{127, 0, 0, byte(i + 1)}
		} else {
			p.IPv4 = 0x7F000001 + uint32(i)
		}
		if i == 0 {
			p.Flags |= ogp.StateBot
			p.Name = ogp.Text("Zoë")
			p.NameColor = ogp.ColorInfo{{Value: ogp.ColorBold}, {Delta: 2, Value: ogp.ColorBold}}
			if d == ogp.V1 {
				p.NameColor = nil
			}
		}
		a.Players.Players = append(a.Players.Players, p)
	}
	return a
}

// Server is a running fake server.
type Server struct {
	// OGP is the server answering; its fields may be changed before the
	// first query.
	OGP *ogp.Server

	profile  Profile
	conn     *net.UDPConn
	received atomic.Int64
	dropped  atomic.Int64
	done     chan struct{}
	once     sync.Once
}

// NewServer starts a fake server for p on 127.0.0.1 at a free port. It
// panics if it cannot listen, like httptest.NewServer.
func NewServer(p Profile) *Server {
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		panic(fmt.Sprintf("ogptest: listen: %v", err))
	}
	answer := p.Answer
	if answer == nil {
		answer = SampleAnswer(p.Dialect, 4)
	}
	s := &Server{profile: p, conn: conn, done: make(chan struct{})}
	s.OGP = &ogp.Server{
		Dialect:   p.Dialect,
		RateLimit: -1,
		Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
			if p.InvalidValue {
				return nil, &ogp.ServerError{Code: ogp.ErrorInvalidValue}
			}
			return answer, nil
		}),
	}
	if p.Banned {
		s.OGP.Banned = func(netip.Addr) bool { return true }
	}
	go s.loop()
	return s
}

// Addr is the server's address.
func (s *Server) Addr() netip.AddrPort { return s.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

// Received is the number of OGP datagrams the server has received,
// dropped ones included.
func (s *Server) Received() int64 { return s.received.Load() }

// Dropped is the number of datagrams the profile's DropEvery dropped.
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Close stops the server and waits for it.
func (s *Server) Close() {
	s.once.Do(func() {
		s.conn.Close()
		<-s.done
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.OGP.Shutdown(ctx)
	})
}

// collector gathers the datagrams of one answer.
type collector struct {
	pkts [][]byte
}

func (c *collector) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	c.pkts = append(c.pkts, append([]byte(nil), b...))
	return len(b), nil
}

func (s *Server) loop() {
	defer close(s.done)
	buf := make([]byte, 65535)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if !ogp.Is(buf[:n]) {
			continue
		}
		count := s.received.Add(1)
		if s.profile.DropEvery > 0 && count%int64(s.profile.DropEvery) == 0 {
			s.dropped.Add(1)
			continue
		}
		if s.profile.ChurnEvery > 0 && count%int64(s.profile.ChurnEvery) == 0 {
			s.OGP.RotateChallenge()
			s.OGP.RotateChallenge()
		}
		var c collector
		s.OGP.HandlePacket(&c, from, buf[:n])
		if s.profile.Reorder && len(c.pkts) > 0 {
			slices.Reverse(c.pkts)
			c.pkts = append([][]byte{c.pkts[0]}, c.pkts...)
		}
		for _, p := range c.pkts {
			s.conn.WriteToUDPAddrPort(reshapeError3(p, s.profile.Error3), from)
		}
	}
}

// reshapeError3 rewrites an error 3 answer p into form f.
func reshapeError3(p []byte, f Error3Form) []byte {
	h, body, err := ogp.ParseHeader(p)
	if f == Error3Spec || err != nil || h.Type != ogp.TypeError || len(body) == 0 || body[0] != byte(ogp.ErrorInvalidChallenge) {
		return p
	}
	switch f {
	case Error3HeaderOnly:
		body = body[:1]
	case Error3CopyOnly:
		h.Flags &^= ogp.FlagChallenge
	}
	out, _ := h.AppendBinary(nil)
	return append(out, body...)
}
