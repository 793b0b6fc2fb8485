package sdtd_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/sdtd/sdtdtest"
)

var players = []sdtd.Player{
	{EntityID: 171, Name: "Ann", Position: "(1.0, 2.0, 3.0)", Health: 100, Level: 3, PlatformID: "Steam_76561198000000001", CrossID: "EOS_1", IP: "203.0.113.5", Ping: 30},
	{EntityID: 172, Name: "Bo, the builder", Position: "(4.0, 5.0, 6.0)", Health: 80, Level: 9, PlatformID: "Steam_76561198000000002", CrossID: "EOS_2", IP: "203.0.113.6", Ping: 45},
}

func start(t *testing.T, config func(*sdtd.Server), h *sdtdtest.SimHandler) *sdtdtest.Server {
	t.Helper()
	if h == nil {
		h = &sdtdtest.SimHandler{Players: players}
	}
	s := sdtdtest.NewUnstartedServer("secret", h)
	if config != nil {
		config(s.Telnet)
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func dial(t *testing.T, s *sdtdtest.Server, opts *sdtd.Options) *sdtd.Client {
	t.Helper()
	c, err := sdtd.Dial(testutil.Context(t), s.Addr().String(), "secret", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestLoginBannerAndPlayers(t *testing.T) {
	t.Parallel()
	s := start(t, nil, nil)
	c := dial(t, s, nil)
	b := c.Banner()
	if !strings.HasPrefix(b.Version, "V 1.0 (b333)") || b.Values["World"] != "Navezgane" {
		t.Errorf("banner %+v", b)
	}
	ps, err := c.Players(testutil.Context(t))
	if err != nil || len(ps) != 2 || ps[1].Name != "Bo, the builder" || ps[0].PlatformID != players[0].PlatformID {
		t.Fatalf("Players = %+v, %v", ps, err)
	}
	out, err := c.Exec(testutil.Context(t), "nosuchcommand")
	if err != nil || out != "*** ERROR: unknown command 'nosuchcommand'" {
		t.Errorf("unknown command: %q, %v", out, err)
	}
	var _ console.Session = c
}

// A wrong password is sent once, never again; the server's lockout, which
// a success does not reset, then refuses even the right password.
func TestLockoutIsNeverProvoked(t *testing.T) {
	t.Parallel()
	s := start(t, func(s *sdtd.Server) { s.FailedLoginLimit = 3; s.BlockTime = time.Minute }, nil)
	addr := s.Addr().String()
	_, err := sdtd.Dial(testutil.Context(t), addr, "wrong", nil)
	if !errors.Is(err, sdtd.ErrAuthFailed) || !errors.Is(err, console.ErrAuthFailed) || errors.Is(err, sdtd.ErrLockedOut) {
		t.Fatalf("first wrong password: %v", err)
	}
	// A success in between does not reset the count.
	c, err := sdtd.Dial(testutil.Context(t), addr, "secret", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := sdtd.Dial(testutil.Context(t), addr, "wrong", nil); !errors.Is(err, sdtd.ErrAuthFailed) || errors.Is(err, sdtd.ErrLockedOut) {
		t.Fatalf("second wrong password: %v", err)
	}
	if _, err := sdtd.Dial(testutil.Context(t), addr, "wrong", nil); !errors.Is(err, sdtd.ErrLockedOut) {
		t.Fatalf("third wrong password: %v, want the server's 'Too many failed login attempts!'", err)
	}
	// Blocked: the right password is not even asked for.
	_, err = sdtd.Dial(testutil.Context(t), addr, "secret", nil)
	if !errors.Is(err, sdtd.ErrLockedOut) || !errors.Is(err, console.ErrAuthFailed) {
		t.Fatalf("while blocked: %v", err)
	}
}

// Before the login the server sends one NUL byte per log line; the
// client reads through them.
func TestNULsBeforeLogin(t *testing.T) {
	t.Parallel()
	s := start(t, nil, nil)
	// The fake's side, seen raw.
	raw, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	br := bufio.NewReader(raw)
	if line, _ := br.ReadString('\n'); line != sdtd.PasswordPrompt+"\r\n" {
		t.Fatalf("prompt %q", line)
	}
	s.Telnet.Log("a log line nobody logged in may read")
	if b, err := br.ReadByte(); err != nil || b != 0 {
		t.Fatalf("before login a log line is %q, %v; want one NUL", b, err)
	}
	// The client's side: log lines as NULs while it logs in.
	c := dial(t, s, &sdtd.Options{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		for range 3 {
			s.Telnet.Log("noise during the login")
		}
		return nc, err
	}})
	if out, err := c.Exec(testutil.Context(t), "gettime"); err != nil || out != "Day 7, 21:04" {
		t.Errorf("gettime after NULs: %q, %v", out, err)
	}
}

// Log lines in the middle of an answer are taken out of it and become
// events.
func TestLogLinesInTheMiddleOfAnAnswer(t *testing.T) {
	t.Parallel()
	s := start(t, nil, &sdtdtest.SimHandler{Players: players, LogMidAnswer: true})
	c := dial(t, s, nil)
	out, err := c.Exec(testutil.Context(t), "listplayers")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if len(lines) != 3 || lines[2] != "Total of 2 in the game" || strings.Contains(out, "Chat") {
		t.Fatalf("answer %q", out)
	}
	for i := range 2 {
		select {
		case e := <-c.Events():
			if e.Kind != console.KindChat || e.Player != "Zed" || e.Channel != "global" {
				t.Errorf("event %+v", e)
			}
		case <-testutil.Context(t).Done():
			t.Fatalf("event %d missing", i)
		}
	}
}

// Another admin's commands show as their echo lines: events, never part
// of this client's answers.
func TestTwoAdmins(t *testing.T) {
	t.Parallel()
	s := start(t, nil, nil)
	a := dial(t, s, nil)
	b := dial(t, s, nil)
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if out, err := a.Exec(testutil.Context(t), "version"); err != nil || !strings.HasPrefix(out, "Game version:") || strings.Contains(out, "\n") {
				t.Errorf("a: %q, %v", out, err)
			}
		})
		wg.Go(func() {
			if out, err := b.Exec(testutil.Context(t), "gettime"); err != nil || out != "Day 7, 21:04" {
				t.Errorf("b: %q, %v", out, err)
			}
		})
	}
	wg.Wait()
	select {
	case e := <-a.Events():
		if e.Kind != console.KindAdmin || !strings.Contains(e.Text, "'gettime'") {
			t.Errorf("a's event %+v", e)
		}
	case <-testutil.Context(t).Done():
		t.Fatal("a saw nothing of b's commands")
	}
	// b's ten commands reach a as ten events, and b's sentinels, which
	// frame its answers, as none.
	if _, err := a.Exec(testutil.Context(t), "version"); err != nil { // b's echoes have all come by its end
		t.Fatal(err)
	}
	seen := 1
	for len(a.Events()) > 0 {
		e := <-a.Events()
		if strings.Contains(e.Text, "gsq-sentinel-") {
			t.Errorf("a got b's sentinel as an event: %+v", e)
		}
		seen++
	}
	if seen != 10 {
		t.Errorf("a saw %d of b's 10 commands", seen)
	}
}

func TestKeepAliveAndSay(t *testing.T) {
	t.Parallel()
	h := &sdtdtest.SimHandler{Players: players}
	s := start(t, nil, h)
	c := dial(t, s, &sdtd.Options{KeepAlive: 30 * time.Millisecond})
	for h.Received() < 3 {
		select {
		case <-testutil.Context(t).Done():
			t.Fatal("no keep-alive")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := c.Send(testutil.Context(t), `say "hello"`); err != nil {
		t.Fatal(err)
	}
	for {
		select {
		case e := <-c.Events():
			if e.Kind == console.KindChat {
				if e.Text != "hello" || e.Player != "Server" {
					t.Errorf("chat %+v", e)
				}
				if c.Logins() != 1 {
					t.Errorf("%d logins", c.Logins())
				}
				return
			}
		case <-testutil.Context(t).Done():
			t.Fatal("no chat event")
		}
	}
}

func TestInvalidCommands(t *testing.T) {
	t.Parallel()
	s := start(t, nil, nil)
	c := dial(t, s, nil)
	for _, cmd := range []string{"", " ", "a\nb", "exit", "EXIT"} {
		if _, err := c.Exec(testutil.Context(t), cmd); !errors.Is(err, sdtd.ErrInvalidCommand) {
			t.Errorf("Exec(%q) = %v", cmd, err)
		}
	}
	c.Close()
	if _, err := c.Exec(testutil.Context(t), "version"); !errors.Is(err, console.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}
