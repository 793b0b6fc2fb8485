package battleye_test

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/testutil"
)

var players = []battleye.Player{
	{Slot: 0, Addr: netip.MustParseAddrPort("192.0.2.10:2304"), Ping: 47, GUID: "0123456789abcdef0123456789abcdef", Verified: true, Name: "Survivor"},
	{Slot: 1, Addr: netip.MustParseAddrPort("198.51.100.7:2304"), Ping: 80, GUID: "fedcba9876543210fedcba9876543210", Name: "Jörg (Lobby) x", Lobby: true},
}

func startFake(t *testing.T, p betest.Profile, faults betest.Faults, config ...func(*battleye.Server)) *betest.Server {
	t.Helper()
	s := betest.NewUnstartedServer(p, "secret", &betest.SimHandler{Players: players})
	s.Faults = faults
	s.BE.PartSize = 100
	for _, f := range config {
		f(s.BE)
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func dial(t *testing.T, s *betest.Server, opts *battleye.Options) *battleye.Client {
	t.Helper()
	c, err := battleye.Dial(testutil.Context(t), s.Addr().String(), "secret", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestPlayersRoundTrip(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	c := dial(t, s, nil)
	out, err := c.Exec(testutil.Context(t), "players")
	if err != nil {
		t.Fatal(err)
	}
	got, err := battleye.ParsePlayers(out)
	if err != nil || len(got) != 2 || got[1].Name != "Jörg (Lobby) x" || !got[1].Lobby || got[0].GUID != players[0].GUID {
		t.Fatalf("players: %+v, %v\n%s", got, err, out)
	}
	if c.Mode() != battleye.ModeClassic {
		t.Errorf("Mode = %v after a text answer, want classic", c.Mode())
	}
	var _ console.Session = c
}

func TestWrongPasswordIsAuthFailed(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	_, err := battleye.Dial(testutil.Context(t), s.Addr().String(), "wrong", nil)
	if !errors.Is(err, battleye.ErrAuthFailed) || !errors.Is(err, console.ErrAuthFailed) {
		t.Fatalf("wrong password: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "battleye: login "+s.Addr().String()) {
		t.Errorf("message %q does not name the operation and the server", err)
	}
	// One answer, one login: a wrong password is never sent again.
	if n := s.Received(); n != 1 {
		t.Errorf("%d datagrams for one wrong password", n)
	}
}

func TestSilenceIsNoResponseNotAuth(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{Disabled: true})
	_, err := battleye.Dial(testutil.Context(t), s.Addr().String(), "secret", &battleye.Options{Timeout: 300 * time.Millisecond})
	var ne net.Error
	switch {
	case !errors.Is(err, battleye.ErrNoResponse) || errors.Is(err, battleye.ErrAuthFailed):
		t.Fatalf("disabled RCon: %v, want ErrNoResponse and not ErrAuthFailed", err)
	case !errors.Is(err, console.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout():
		t.Fatalf("disabled RCon: %v is not a timeout", err)
	}
}

func TestClosedPortIsUnreachable(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	_, err = battleye.Dial(testutil.Context(t), addr, "secret", &battleye.Options{Timeout: 2 * time.Second})
	if !errors.Is(err, battleye.ErrUnreachable) {
		t.Fatalf("closed port: %v, want ErrUnreachable", err)
	}
}

// A multi-part answer comes back whole whatever the network does to its
// parts.
func TestMultiPartFaults(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]betest.Faults{
		"plain":     {},
		"lost":      {DropPart: 2},
		"duplicate": {DuplicateParts: true},
		"reordered": {ReorderParts: true},
		"bad CRC":   {BadCRC: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := startFake(t, betest.DayZ, f)
			c := dial(t, s, nil)
			r, err := c.Do(testutil.Context(t), "big 1000")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Body) != 1000 || r.Parts != 10 || strings.Trim(string(r.Body), "x\n") != "" {
				t.Fatalf("answer of %d bytes in %d parts", len(r.Body), r.Parts)
			}
			if f.BadCRC && c.Dropped() == 0 {
				t.Error("no corrupted datagram was dropped")
			}
		})
	}
}

func TestChatEventAcknowledgedOnceDespiteResends(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{LoseAcks: 1}, func(s *battleye.Server) { s.ResendInterval = 50 * time.Millisecond })
	c := dial(t, s, nil)
	if err := c.Send(testutil.Context(t), "say -1 hello there"); err != nil {
		t.Fatal(err)
	}
	var e console.Event
	select {
	case e = <-c.Events():
	case <-testutil.Context(t).Done():
		t.Fatal("no event")
	}
	if e.Kind != console.KindChat || e.Channel != "global" || e.Player != "RCon admin #0" || e.Text != "hello there" || string(e.Raw) != "RCon admin #0: (Global) hello there" {
		t.Errorf("event %+v", e)
	}
	// The first ack was lost: the server sent the message again, the
	// client acknowledged the copy and dropped it.
	for s.Acks() < 2 {
		select {
		case <-testutil.Context(t).Done():
			t.Fatalf("%d acks", s.Acks())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if s.Resent() == 0 {
		t.Error("the server sent nothing again")
	}
	select {
	case e := <-c.Events():
		t.Errorf("duplicate event %+v", e)
	default:
	}
}

func TestConcurrentCommands(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.Arma3, betest.Faults{})
	c := dial(t, s, nil)
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			want := fmt.Sprintf("n%d", i)
			if got, err := c.Exec(testutil.Context(t), "echo "+want); err != nil || got != want {
				t.Errorf("echo %s = %q, %v", want, got, err)
			}
		})
	}
	wg.Wait()
}

func TestInvalidCommandsAndClose(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	c := dial(t, s, nil)
	for _, cmd := range []string{"", "a\x00b"} {
		if _, err := c.Exec(testutil.Context(t), cmd); !errors.Is(err, battleye.ErrInvalidCommand) {
			t.Errorf("Exec(%q) = %v", cmd, err)
		}
	}
	c.Close()
	if _, err := c.Exec(testutil.Context(t), "players"); !errors.Is(err, console.ErrClosed) {
		t.Errorf("Exec after Close = %v", err)
	}
	if _, ok := <-c.Events(); ok {
		t.Error("Events open after Close")
	}
}

// The Debug hook never sees the password.
func TestDebugMasksPassword(t *testing.T) {
	t.Parallel()
	s := startFake(t, betest.DayZ, betest.Faults{})
	var mu sync.Mutex
	seen := 0
	c := dial(t, s, &battleye.Options{Debug: func(dir string, _ netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if strings.Contains(string(b), "secret") {
			t.Errorf("Debug(%s) saw the password: %q", dir, b)
		}
	}})
	c.Exec(testutil.Context(t), "version")
	mu.Lock()
	defer mu.Unlock()
	if seen < 4 {
		t.Errorf("Debug saw %d datagrams", seen)
	}
}
