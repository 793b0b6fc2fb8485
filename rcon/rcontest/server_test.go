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

// clientOptions are the client options matching each profile.
var clientOptions = map[rcontest.Profile]rcon.Options{
	rcontest.SRCDS:      {},
	rcontest.CS2:        {Dialect: rcon.DialectCS2},
	rcontest.Minecraft:  {Dialect: rcon.DialectMinecraft},
	rcontest.Factorio:   {Profile: "factorio"},
	rcontest.Palworld:   {Profile: "palworld"},
	rcontest.Conan:      {Profile: "conan"},
	rcontest.Squad:      {Profile: "squad"},
	rcontest.ARK:        {Profile: "ark"},
	rcontest.RustLegacy: {Profile: "rust-legacy"},
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

func TestProfilesWithClient(t *testing.T) {
	for _, p := range rcontest.Profiles() {
		t.Run(p.String(), func(t *testing.T) {
			s := start(t, p, rcontest.Faults{})
			c, err := dial(t, s, pw)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for cmd, want := range map[string]string{
				"echo héllo": "héllo\n",
				"big 10000":  rcontest.BigOutput(10000),
			} {
				got, err := c.Exec(ctx, cmd)
				if err != nil || got != want {
					t.Errorf("Exec(%q) = %d bytes %.40q, %v; want %d bytes", cmd, len(got), got, err, len(want))
				}
			}
			if p == rcontest.ARK {
				if got, err := c.Exec(ctx, "big 0"); err != nil || got != "Server received, But no response!!" {
					t.Errorf("ARK empty output = %q, %v", got, err)
				}
			}
		})
	}
}

func TestProfilesWrongPassword(t *testing.T) {
	want := map[rcontest.Profile]error{
		rcontest.Squad: rcon.ErrConnClosed,
		rcontest.ARK:   rcon.ErrNoAuthResponse,
	}
	for _, p := range rcontest.Profiles() {
		t.Run(p.String(), func(t *testing.T) {
			s := start(t, p, rcontest.Faults{})
			opts := clientOptions[p]
			wait := 10 * time.Second
			if p == rcontest.ARK {
				wait = time.Second // ARK never answers
			}
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			defer cancel()
			_, err := rcon.Dial(ctx, s.Addr().String(), "wrong", &opts)
			w := want[p]
			if w == nil {
				w = rcon.ErrAuthFailed
			}
			if !errors.Is(err, w) {
				t.Fatalf("Dial with a wrong password: %v, want %v", err, w)
			}
		})
	}
}

var tail = string([]byte{0, 0, 0, 1, 0, 0, 0})

func TestProfilesRaw(t *testing.T) {
	login := pkt(5, rcon.TypeAuth, pw)
	tests := []struct {
		profile rcontest.Profile
		send    []rcon.Packet
		want    []rcon.Packet
	}{
		{rcontest.SRCDS, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "echo a"), pkt(7, rcon.TypeResponseValue, "")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(5, 2, ""), pkt(6, 0, "a\n"), pkt(7, 0, ""), pkt(7, 0, tail)}},
		{rcontest.SRCDS, []rcon.Packet{pkt(6, rcon.TypeExecCommand, "echo a")}, []rcon.Packet{pkt(6, 0, "")}},
		{rcontest.CS2, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "big 5000")},
			[]rcon.Packet{pkt(5, 2, ""), pkt(6, 0, rcontest.BigOutput(5000))}},
		{rcontest.Factorio, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, ""), pkt(7, rcon.TypeResponseValue, ""), pkt(8, rcon.TypeExecCommand, "echo f")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(5, 2, ""), pkt(8, 0, "f\n")}},
		{rcontest.Palworld, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "echo p")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(5, 2, ""), pkt(0, 0, "p\n")}},
		{rcontest.Conan, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "echo c")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(42, 2, ""), pkt(42, 0, "c\n")}},
		{rcontest.ARK, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "big 0")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(5, 2, ""), pkt(6, 0, "Server received, But no response!!")}},
		{rcontest.RustLegacy, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "echo r"), pkt(7, rcon.TypeExecCommand, "say hi")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(5, 2, ""),
				pkt(-1, rcon.TypeRustConsole, "[rcon] executing: echo r"), pkt(6, 0, "r\n"),
				pkt(-1, rcon.TypeRustConsole, "[rcon] executing: say hi"), pkt(-1, 0, "Console: hi\n")}},
		{rcontest.Squad, []rcon.Packet{login, pkt(6, rcon.TypeExecCommand, "echo s")},
			[]rcon.Packet{pkt(5, 0, ""), pkt(5, 2, ""),
				pkt(0, rcon.TypeChatValue, "[ChatAll] [SteamID:76561198000000000] Player : hello from squad"), pkt(6, 0, "s\n")}},
	}
	for _, tt := range tests {
		t.Run(tt.profile.String(), func(t *testing.T) {
			s := start(t, tt.profile, rcontest.Faults{})
			c := raw(t, s)
			if err := c.Send(tt.send...); err != nil {
				t.Fatal(err)
			}
			expect(t, c, tt.want...)
		})
	}
}

// TestSquadMalformedMirror checks the exact bytes of Squad's answer to a
// probe: the extra packet's size field says 10 but 17 bytes follow.
func TestSquadMalformedMirror(t *testing.T) {
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
		if s.Dropped() != 1 {
			t.Errorf("Dropped() = %d", s.Dropped())
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
	s := start(t, rcontest.SRCDS, rcontest.Faults{Coalesce: true})
	c := raw(t, s)
	if err := c.Send(pkt(1, rcon.TypeAuth, pw), pkt(2, 2, "echo a"), pkt(3, 2, "echo b"), pkt(4, 0, "")); err != nil {
		t.Fatal(err)
	}
	// All answers arrive, in order, whatever the reads look like.
	expect(t, c, pkt(1, 0, ""), pkt(1, 2, ""), pkt(2, 0, "a\n"), pkt(3, 0, "b\n"), pkt(4, 0, ""), pkt(4, 0, tail))
}

func TestFaultDropEvery(t *testing.T) {
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
	// Login takes 28 bytes; the drop falls inside the answer's size word.
	s := start(t, rcontest.SRCDS, rcontest.Faults{DropAfterBytes: 30})
	c, err := dial(t, s, pw)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "echo x"); !errors.Is(err, rcon.ErrConnClosed) {
		t.Fatalf("Exec = %v, want ErrConnClosed", err)
	}
	if s.Dropped() != 1 {
		t.Errorf("Dropped() = %d", s.Dropped())
	}
}

func TestParseProfile(t *testing.T) {
	for _, p := range rcontest.Profiles() {
		got, err := rcontest.ParseProfile(strings.ToUpper(p.String()))
		if err != nil || got != p {
			t.Errorf("ParseProfile(%q) = %v, %v", p, got, err)
		}
	}
	if _, err := rcontest.ParseProfile("quake"); err == nil {
		t.Error("ParseProfile(quake) succeeded")
	}
	if s := rcontest.Profile(99).String(); s != "Profile(99)" {
		t.Errorf("String() = %q", s)
	}
}
