package webrcon_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

func sim() *webrcontest.SimHandler {
	return &webrcontest.SimHandler{
		Info: webrcon.ServerInfo{Hostname: "Facepunch Test", MaxPlayers: 100, Players: 2, Map: "Procedural Map", Framerate: 59.8, Uptime: 3600},
		Players: []webrcon.Player{
			{SteamID: "76561198000000001", DisplayName: "Ann", Ping: 30, Address: "203.0.113.5:61234", ConnectedSeconds: 90, Health: 100},
			{SteamID: "76561198000000002", DisplayName: "Бо", Ping: 45, Address: "203.0.113.6:61235", ConnectedSeconds: 10, Health: 55.5},
		},
		SaveDelay: 1500 * time.Millisecond,
	}
}

func start(t *testing.T, p webrcontest.Profile, password string) (*webrcontest.Server, *webrcontest.SimHandler) {
	t.Helper()
	h := sim()
	s := webrcontest.NewServer(p, password, h)
	t.Cleanup(s.Close)
	return s, h
}

func dial(t *testing.T, s *webrcontest.Server, password string, opts *webrcon.Options) *webrcon.Client {
	t.Helper()
	c, err := webrcon.Dial(testutil.Context(t), s.Addr().String(), password, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestServerInfoAndPlayers(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", nil)
	si, err := c.ServerInfo(testutil.Context(t))
	if err != nil || si.Hostname != "Facepunch Test" || si.MaxPlayers != 100 || si.Framerate != 59.8 {
		t.Fatalf("ServerInfo = %+v, %v", si, err)
	}
	ps, err := c.Players(testutil.Context(t))
	if err != nil || len(ps) != 2 || ps[1].DisplayName != "Бо" || ps[1].Health != 55.5 {
		t.Fatalf("Players = %+v, %v", ps, err)
	}
	var _ console.Session = c
}

// A wrong password is answered with a raw close frame in place of HTTP:
// authentication failed, never a protocol error.
func TestWrongPasswordIsAuthFailed(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	_, err := webrcon.Dial(testutil.Context(t), s.Addr().String(), "wrong", nil)
	if !errors.Is(err, webrcon.ErrAuthFailed) || !errors.Is(err, console.ErrAuthFailed) || errors.Is(err, webrcon.ErrNotWebRcon) {
		t.Fatalf("wrong password: %v", err)
	}
	if !strings.Contains(err.Error(), "88 02 03 e8") {
		t.Errorf("message %q does not show the close frame", err)
	}
}

// Passwords with the characters Rust admins are warned about survive the
// trip through the URL path, and the risky ones are warned about.
func TestRiskyPasswordRoundTrips(t *testing.T) {
	t.Parallel()
	for _, pw := range []string{"p@ss#w0rd", "a/b?c=d&e", "100%-(x)*^$", "ünï cødé", "plain"} {
		s, _ := start(t, webrcontest.Rust, pw)
		var notes []string
		var mu sync.Mutex
		c := dial(t, s, pw, &webrcon.Options{Logf: func(f string, a ...any) { mu.Lock(); notes = append(notes, f); mu.Unlock() }})
		if out, err := c.Exec(testutil.Context(t), "echo ok"); err != nil || out != "ok" {
			t.Errorf("password %q: %q, %v", pw, out, err)
		}
		mu.Lock()
		if warned := len(notes) > 0; warned != (webrcon.PasswordRisk(pw) != "") {
			t.Errorf("password %q: warned %v", pw, warned)
		}
		mu.Unlock()
	}
}

// Oxide sends every reply to every session: two sessions running commands
// at once each get their own answers, and see the other's as events.
func TestOxideBroadcastRepliesDoNotConfuseSessions(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Oxide, "secret")
	a := dial(t, s, "secret", nil)
	b := dial(t, s, "secret", nil)
	var wg sync.WaitGroup
	for i := range 20 {
		for name, c := range map[string]*webrcon.Client{"a": a, "b": b} {
			wg.Go(func() {
				want := name + string(rune('A'+i))
				if got, err := c.Exec(testutil.Context(t), "echo "+want); err != nil || got != want {
					t.Errorf("session %s: echo %s = %q, %v", name, want, got, err)
				}
			})
		}
	}
	wg.Wait()
	select {
	case e := <-b.Events():
		if e.Kind != console.KindLog || !strings.HasPrefix(e.Text, "a") {
			t.Errorf("b's event %+v, want a's reply", e)
		}
	case <-testutil.Context(t).Done():
		t.Fatal("no reply of a's reached b as an event")
	}
}

// "say" prints nothing: the sentinel tells at once, not at the deadline.
func TestSilentSay(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", &webrcon.Options{Timeout: 15 * time.Second})
	r, err := c.Do(context.Background(), "say hello all")
	if err != nil || !r.Silent || r.Message.Message != "" {
		t.Fatalf("say: %+v, %v", r, err)
	}
	// The chat the say caused came as a typed event.
	e := <-c.Events()
	if e.Kind != console.KindChat || e.Player != "SERVER" || e.Text != "hello all" || e.Channel != "server" {
		t.Errorf("event %+v", e)
	}
	// Without the sentinel, a silent command ends at its deadline.
	c2 := dial(t, s, "secret", &webrcon.Options{SilentWait: -1, Timeout: 200 * time.Millisecond})
	_, err = c2.Exec(context.Background(), "say again")
	if !errors.Is(err, webrcon.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.Is(err, console.ErrTimeout) {
		t.Errorf("silent command without sentinel: %v", err)
	}
}

// server.save takes longer than the sentinel's wait: its reply still
// comes first, since the server runs commands in order.
func TestSlowServerSave(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", &webrcon.Options{Timeout: 15 * time.Second})
	r, err := c.Do(context.Background(), "server.save")
	if err != nil || r.Silent || !strings.HasPrefix(r.Message.Message, "Saved ") {
		t.Fatalf("server.save: %+v, %v", r, err)
	}
}

// A 1 MB console.tail comes whole; a client with a smaller limit refuses
// it without holding it, and connects again.
func TestLargeConsoleTail(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", nil)
	out, err := c.Exec(testutil.Context(t), "console.tail 5000")
	if err != nil || len(out) != 1<<20 {
		t.Fatalf("console.tail: %d bytes, %v", len(out), err)
	}
	reconnected := make(chan struct{}, 1)
	small := dial(t, s, "secret", &webrcon.Options{MaxMessageSize: 64 << 10, OnReconnect: func(_ int, err error) {
		if err == nil {
			reconnected <- struct{}{}
		}
	}})
	if _, err := small.Exec(testutil.Context(t), "console.tail 5000"); !errors.Is(err, webrcon.ErrFrameTooLarge) {
		t.Fatalf("1 MB over a 64 KiB limit: %v", err)
	}
	select {
	case <-reconnected:
	case <-testutil.Context(t).Done():
		t.Fatal("no reconnection")
	}
	if out, err := small.Exec(testutil.Context(t), "echo back"); err != nil || out != "back" {
		t.Errorf("after the reconnection: %q, %v", out, err)
	}
}

// Rust never answers pings: the keep-alive is a command, and the session
// stays up across several keep-alive periods.
func TestKeepAliveWithoutPongs(t *testing.T) {
	t.Parallel()
	s, h := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", &webrcon.Options{KeepAlive: 50 * time.Millisecond})
	for h.Received() < 3 {
		select {
		case <-testutil.Context(t).Done():
			t.Fatal("no keep-alive commands")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if c.Logins() != 1 {
		t.Errorf("%d connections: the keep-alive dropped the session", c.Logins())
	}
}

func TestEventsFromBroadcasts(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", nil)
	s.Chat(webrcon.Chat{Channel: 0, Message: "gg", UserID: "7656", Username: "Ann"})
	s.Report(webrcon.Report{PlayerID: "7657", PlayerName: "Bob", Subject: "Spam"})
	s.Log("203.0.113.9:1234/7658/Cy joined [linux/7658]")
	for _, k := range []console.Kind{console.KindChat, console.KindReport, console.KindJoin} {
		select {
		case e := <-c.Events():
			if e.Kind != k {
				t.Errorf("event %+v, want kind %s", e, k)
			}
		case <-testutil.Context(t).Done():
			t.Fatal("events missing")
		}
	}
}

// A port that speaks HTTP but not WebSocket, and one that closes at once,
// are not WebRCON: a clear error, not authentication failed.
func TestNotWebRcon(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.NotFoundHandler())
	defer hs.Close()
	_, err := webrcon.Dial(testutil.Context(t), strings.TrimPrefix(hs.URL, "http://"), "x", nil)
	if !errors.Is(err, webrcon.ErrNotWebRcon) || errors.Is(err, webrcon.ErrAuthFailed) {
		t.Errorf("HTTP 404 server: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = webrcon.Dial(testutil.Context(t), l.Addr().String(), "x", nil)
	if !errors.Is(err, webrcon.ErrNotWebRcon) {
		t.Errorf("closing server: %v", err)
	}
}

func TestCloseEndsEverything(t *testing.T) {
	t.Parallel()
	s, _ := start(t, webrcontest.Rust, "secret")
	c := dial(t, s, "secret", nil)
	c.Close()
	if _, err := c.Exec(testutil.Context(t), "echo x"); !errors.Is(err, console.ErrClosed) {
		t.Errorf("Exec after Close: %v", err)
	}
	if _, ok := <-c.Events(); ok {
		t.Error("Events open after Close")
	}
}
