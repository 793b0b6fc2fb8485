package rcontest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

const pw = "hunter2"

// clientOptions are the client options that know each profile in
// advance: an rcon game profile, or the dialect.
var clientOptions = map[rcontest.Profile]rcon.Options{
	rcontest.SRCDS:      {Profile: "srcds"},
	rcontest.CS2:        {Dialect: rcon.DialectCS2},
	rcontest.Minecraft:  {Dialect: rcon.DialectMinecraft},
	rcontest.Factorio:   {Profile: "factorio"},
	rcontest.Palworld:   {Profile: "palworld"},
	rcontest.Conan:      {Profile: "conan"},
	rcontest.Squad:      {Profile: "squad"},
	rcontest.ARK:        {Profile: "ark"},
	rcontest.RustLegacy: {Profile: "rust-legacy"},
	rcontest.GoMC:       {Dialect: rcon.DialectMinecraft},
}

func start(t testing.TB, p rcontest.Profile, f rcontest.Faults) *rcontest.Server {
	t.Helper()
	s := rcontest.NewUnstartedServer(p, pw, nil)
	s.Faults = f
	s.Logf = t.Logf
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func dial(t testing.TB, s *rcontest.Server, password string) (*rcon.Client, error) {
	t.Helper()
	opts := clientOptions[s.Profile]
	opts.Timeout = 10 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rcon.Dial(ctx, s.Addr().String(), password, &opts)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

func raw(t testing.TB, s *rcontest.Server) *rcontest.RawConn {
	t.Helper()
	c, err := rcontest.DialRaw(context.Background(), s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func pkt(id int32, typ rcon.PacketType, body string) rcon.Packet {
	return rcon.Packet{ID: id, Type: typ, Body: []byte(body)}
}

// expect reads len(want) packets and compares them.
func expect(t testing.TB, c *rcontest.RawConn, want ...rcon.Packet) {
	t.Helper()
	for i, w := range want {
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if p.ID != w.ID || p.Type != w.Type || string(p.Body) != string(w.Body) {
			t.Fatalf("packet %d = {%d %v %.60q}, want {%d %v %.60q}", i, p.ID, p.Type, p.Body, w.ID, w.Type, w.Body)
		}
	}
}

func expectClosed(t testing.TB, c *rcontest.RawConn) {
	t.Helper()
	p, err := c.ReadPacket()
	if err == nil {
		t.Fatalf("got %+v, want the connection closed", p)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open: %v", err)
	}
}

// TestProfilesWithClient runs a conversation against every profile with
// a client that knows the server in advance (an rcon game profile or
// the dialect), so it tests nothing by itself.
func TestProfilesWithClient(t *testing.T) {
	t.Parallel()
	for _, p := range rcontest.Profiles() {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			s := start(t, p, rcontest.Faults{})
			c, err := dial(t, s, pw)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			empty := ""
			if p == rcontest.ARK {
				empty = "Server received, But no response!! \n "
			}
			for _, step := range []struct{ cmd, want string }{
				{"echo héllo", "héllo\n"},
				{"big 10000", rcontest.BigOutput(10000)},
				{"big 0", empty},
				{"say hi", "Console: hi\n"},
			} {
				got, err := c.Exec(ctx, step.cmd)
				if err != nil || got != step.want {
					t.Errorf("Exec(%q) = %d bytes %.40q, %v; want %d bytes", step.cmd, len(got), got, err, len(step.want))
				}
			}
		})
	}
}

var tail = string([]byte{0, 0, 0, 1, 0, 0, 0})

// exchange is one write of packets and the packets it must bring. One
// that brings nothing waits until the server has read its packets, so
// that the next write cannot share its read.
type exchange struct {
	send []rcon.Packet
	want []rcon.Packet
}

// waitReceived waits until n requests have reached s.
func waitReceived(t *testing.T, s *rcontest.Server, n int64) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.Received() < n; {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests reached the server, want %d", s.Received(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestProfilesRaw(t *testing.T) {
	t.Parallel()
	login := pkt(5, rcon.TypeAuth, pw)
	cmd := func(id int32, body string) rcon.Packet { return pkt(id, rcon.TypeExecCommand, body) }
	probe := func(id int32) rcon.Packet { return pkt(id, rcon.TypeResponseValue, "") }
	one := func(p ...rcon.Packet) []rcon.Packet { return p }
	chat := pkt(0, rcon.TypeChatValue, "[ChatAll] [SteamID:76561198000000000] Player : hello from squad")
	tests := []struct {
		profile rcontest.Profile
		steps   []exchange
	}{
		{rcontest.SRCDS, []exchange{
			{one(cmd(6, "echo a")), one(pkt(6, 0, ""))}, // before the login
			{one(login, cmd(6, "echo a"), probe(7)), one(pkt(5, 0, ""), pkt(5, 2, ""), pkt(6, 0, "a\n"), pkt(7, 0, ""), pkt(7, 0, tail))},
		}},
		{rcontest.CS2, []exchange{
			{one(login, cmd(6, "big 5000")), one(pkt(5, 2, ""), pkt(6, 0, rcontest.BigOutput(5000)))},
		}},
		{rcontest.Factorio, []exchange{
			{one(login, cmd(6, ""), probe(7), cmd(8, "echo f")), one(pkt(5, 0, ""), pkt(5, 2, ""), pkt(8, 0, "f\n"))},
		}},
		{rcontest.Palworld, []exchange{
			{one(login), one(pkt(0, 2, ""))},
			{one(cmd(6, "echo p"), probe(7), cmd(8, "echo q")), one(pkt(0, 0, "p\n"), pkt(0, 0, "q\n"))},
		}},
		{rcontest.Conan, []exchange{
			{one(login, cmd(6, "echo c"), probe(7)), one(pkt(42, 0, ""), pkt(42, 2, ""), pkt(42, 0, "c\n"), pkt(42, 0, ""), pkt(42, 0, tail))},
		}},
		{rcontest.ARK, []exchange{
			{one(login), one(pkt(5, 0, ""), pkt(5, 2, ""))},
			// The probe comes in the command's read: dropped.
			{one(cmd(6, "big 0"), probe(7)), one(pkt(6, 0, "Server received, But no response!! \n "))},
			{one(probe(8)), one(pkt(8, 0, ""), pkt(8, 0, tail))},
		}},
		{rcontest.RustLegacy, []exchange{
			{one(login), one(pkt(5, 0, ""), pkt(5, 2, ""))},
			// Only the first packet of a read counts; text is single bytes.
			{one(cmd(6, "echo é€"), cmd(7, "echo dropped")), one(
				pkt(-1, rcon.TypeRustConsole, "[rcon] executing: echo \xe9\xac"), pkt(6, 0, "\xe9\xac\n"), pkt(-1, 0, ""))},
			{one(cmd(9, "say hi")), one(pkt(-1, rcon.TypeRustConsole, "[rcon] executing: say hi"), pkt(-1, 0, "Console: hi\n"), pkt(-1, 0, ""))},
			{one(pkt(10, rcon.TypeRustUTF8, "")), nil},
			{one(cmd(11, "echo é€")), one(pkt(-1, rcon.TypeRustConsole, "[rcon] executing: echo é€"), pkt(11, 0, "é€\n"), pkt(-1, 0, ""))},
		}},
		{rcontest.Squad, []exchange{
			{one(login, cmd(6, "echo s")), one(pkt(5, 0, ""), pkt(5, 2, ""), chat, pkt(6, 0, "s\n"))},
		}},
		{rcontest.GoMC, []exchange{
			{one(login), one(pkt(5, 2, ""))},
			{one(cmd(6, "big 5000")), one(pkt(6, 0, rcontest.BigOutput(5000)[:4096]), pkt(6, 0, rcontest.BigOutput(5000)[4096:]))},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.profile.String(), func(t *testing.T) {
			t.Parallel()
			s := start(t, tt.profile, rcontest.Faults{})
			c := raw(t, s)
			for _, step := range tt.steps {
				before := s.Received()
				if err := c.Send(step.send...); err != nil {
					t.Fatal(err)
				}
				expect(t, c, step.want...)
				if len(step.want) == 0 {
					waitReceived(t, s, before+int64(len(step.send)))
				}
			}
		})
	}
}

// TestDropsAndHangups checks the counters of what a profile drops and
// the connections it closes.
func TestDropsAndHangups(t *testing.T) {
	t.Parallel()
	t.Run("rust-legacy drops all but the first packet of a read", func(t *testing.T) {
		t.Parallel()
		s := start(t, rcontest.RustLegacy, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Login(1, pw); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(pkt(2, rcon.TypeExecCommand, "echo a"), pkt(3, rcon.TypeExecCommand, "echo b"), pkt(4, 0, "")); err != nil {
			t.Fatal(err)
		}
		expect(t, c, pkt(-1, rcon.TypeRustConsole, "[rcon] executing: echo a"), pkt(2, 0, "a\n"), pkt(-1, 0, ""))
		if s.Received() != 4 || s.Dropped() != 2 {
			t.Errorf("Received() = %d, Dropped() = %d; want 4 and 2", s.Received(), s.Dropped())
		}
	})
	t.Run("gomc hangs up on a probe", func(t *testing.T) {
		t.Parallel()
		s := start(t, rcontest.GoMC, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Login(1, pw); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(pkt(2, 0, "")); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
		if s.Hangups() != 1 {
			t.Errorf("Hangups() = %d", s.Hangups())
		}
	})
	t.Run("gomc hangs up after a wrong password", func(t *testing.T) {
		t.Parallel()
		s := start(t, rcontest.GoMC, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Send(pkt(1, rcon.TypeAuth, "wrong")); err != nil {
			t.Fatal(err)
		}
		expect(t, c, pkt(-1, 2, ""))
		expectClosed(t, c)
	})
	t.Run("squad closes on a wrong password", func(t *testing.T) {
		t.Parallel()
		s := start(t, rcontest.Squad, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Send(pkt(1, rcon.TypeAuth, "wrong")); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
		if s.Hangups() != 1 {
			t.Errorf("Hangups() = %d", s.Hangups())
		}
	})
}

// TestSquadMalformedMirror checks the exact bytes of Squad's answer to a
// probe: the extra packet's size field says 10 but 17 bytes follow.
func TestSquadMalformedMirror(t *testing.T) {
	t.Parallel()
	s := start(t, rcontest.Squad, rcontest.Faults{})
	c := raw(t, s)
	if err := c.Login(1, pw); err != nil {
		t.Fatal(err)
	}
	if err := c.Send(pkt(9, rcon.TypeResponseValue, "")); err != nil {
		t.Fatal(err)
	}
	want := []byte{
		10, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, // mirror
		10, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, // size 10, 17 bytes
	}
	got := make([]byte, len(want))
	nc := c.NetConn()
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for n := 0; n < len(got); {
		k, err := nc.Read(got[n:])
		if err != nil {
			t.Fatalf("after %d bytes: %v", n, err)
		}
		n += k
	}
	if string(got) != string(want) {
		t.Fatalf("got % x\nwant % x", got, want)
	}
}

func TestMinecraftVanillaParser(t *testing.T) {
	t.Parallel()
	t.Run("one packet per read works", func(t *testing.T) {
		s := start(t, rcontest.Minecraft, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Send(pkt(1, rcon.TypeAuth, pw)); err != nil {
			t.Fatal(err)
		}
		expect(t, c, pkt(1, 2, ""))
		if err := c.Send(pkt(2, rcon.TypeResponseValue, "")); err != nil {
			t.Fatal(err)
		}
		expect(t, c, pkt(2, 0, "Unknown request 0"))
	})
	t.Run("coalesced packets drop the connection", func(t *testing.T) {
		s := start(t, rcontest.Minecraft, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Send(pkt(1, rcon.TypeAuth, pw), pkt(2, rcon.TypeExecCommand, "echo x")); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
		if s.Hangups() != 1 {
			t.Errorf("Hangups() = %d", s.Hangups())
		}
	})
	t.Run("split packet drops the connection", func(t *testing.T) {
		s := start(t, rcontest.Minecraft, rcontest.Faults{})
		c := raw(t, s)
		// The write of the second piece may fail: the server is gone.
		_ = c.SendPieces([]int{6}, pkt(1, rcon.TypeAuth, pw))
		expectClosed(t, c)
	})
	t.Run("request above 1460 bytes drops the connection", func(t *testing.T) {
		s := start(t, rcontest.Minecraft, rcontest.Faults{})
		c := raw(t, s)
		if err := c.Send(pkt(1, rcon.TypeAuth, strings.Repeat("p", 1447))); err != nil {
			t.Fatal(err)
		}
		expectClosed(t, c)
	})
	t.Run("fragments cut every 4096 UTF-16 units", func(t *testing.T) {
		s := rcontest.NewServer(rcontest.Minecraft, pw, rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, _ string) {
			w.WriteString(strings.Repeat("a", 4095) + "😀" + strings.Repeat("b", 4096))
		}))
		defer s.Close()
		c := raw(t, s)
		if err := c.Login(1, pw); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(pkt(2, rcon.TypeExecCommand, "x")); err != nil {
			t.Fatal(err)
		}
		// Java cuts the surrogate pair: '?' ends the first fragment and
		// starts the second; 4096+4096+2 units make a third of 1 unit.
		expect(t, c,
			pkt(2, 0, strings.Repeat("a", 4095)+"?"),
			pkt(2, 0, "?"+strings.Repeat("b", 4095)),
			pkt(2, 0, "b"))
	})
}

func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		faults rcontest.Faults
	}{
		{"byte by byte", rcontest.Faults{Segments: []int{1}, SegmentDelay: time.Microsecond}},
		{"split size words", rcontest.Faults{Segments: []int{2, 4093, 3}}},
		{"coalesced", rcontest.Faults{Coalesce: true}},
		{"delayed", rcontest.Faults{Delay: 20 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := start(t, rcontest.SRCDS, tt.faults)
			c, err := dial(t, s, pw)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, n := range []int{0, 4086, 4087, 12000} {
				got, err := c.Exec(ctx, fmt.Sprint("big ", n))
				if err != nil || got != rcontest.BigOutput(n) {
					t.Fatalf("big %d: %d bytes, %v", n, len(got), err)
				}
			}
		})
	}
}

func TestFaultCoalesceRaw(t *testing.T) {
	t.Parallel()
	s := start(t, rcontest.SRCDS, rcontest.Faults{Coalesce: true})
	c := raw(t, s)
	if err := c.Send(pkt(1, rcon.TypeAuth, pw), pkt(2, 2, "echo a"), pkt(3, 2, "echo b"), pkt(4, 0, "")); err != nil {
		t.Fatal(err)
	}
	// All answers arrive, in order, whatever the reads look like.
	expect(t, c, pkt(1, 0, ""), pkt(1, 2, ""), pkt(2, 0, "a\n"), pkt(3, 0, "b\n"), pkt(4, 0, ""), pkt(4, 0, tail))
}

func TestFaultDropEvery(t *testing.T) {
	t.Parallel()
	// On CS2 the client waits for the one answer packet, so a swallowed
	// command times out (a probing client would see the probe's mirror
	// and return empty output).
	s := start(t, rcontest.CS2, rcontest.Faults{DropEvery: 2})
	c, err := dial(t, s, pw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got, err := c.Exec(ctx, "echo 1"); err != nil || got != "1\n" {
		t.Fatalf("first command: %q, %v", got, err)
	}
	short, cancel2 := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel2()
	if _, err := c.Exec(short, "echo 2"); !errors.Is(err, rcon.ErrTimeout) {
		t.Fatalf("swallowed command: %v, want ErrTimeout", err)
	}
}

func TestFaultDropAfterBytes(t *testing.T) {
	t.Parallel()
	// Login takes 28 bytes; the drop falls inside the answer's size word.
	s := start(t, rcontest.SRCDS, rcontest.Faults{DropAfterBytes: 30})
	opts := rcon.Options{NoReconnect: true}
	c, err := rcon.Dial(context.Background(), s.Addr().String(), pw, &opts)
	if err == nil {
		defer c.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "echo x"); !errors.Is(err, rcon.ErrConnClosed) {
		t.Fatalf("Exec = %v, want ErrConnClosed", err)
	}
	if s.Hangups() != 1 {
		t.Errorf("Hangups() = %d", s.Hangups())
	}
}

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	for _, p := range rcontest.Profiles() {
		got, err := rcontest.LookupProfile(strings.ToUpper(p.String()))
		if err != nil || got != p {
			t.Errorf("LookupProfile(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := rcontest.LookupProfile("quake"); err == nil || !strings.Contains(err.Error(), strings.Join(rcontest.ProfileNames(), ", ")) {
		t.Errorf("LookupProfile(quake) = %v, want an error listing the names", err)
	}
	if s := rcontest.Profile(99).String(); s != "Profile(99)" {
		t.Errorf("String() = %q", s)
	}
}
