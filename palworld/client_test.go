package palworld_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/palworld/palworldtest"
)

var players = []palworld.Player{
	{Name: "Ann", AccountName: "ann_s", PlayerID: "1A2B3C4D", UserID: "steam_76561198000000001", IP: "203.0.113.5", Ping: 31.5, LocationX: -1200.5, LocationY: 300, Level: 12, BuildingCount: 40},
	{Name: "ボブ", AccountName: "bob", PlayerID: "-17", UserID: "steam_76561198000000002", IP: "203.0.113.6", Ping: 80, Level: 3},
}

func start(t *testing.T, faults palworldtest.Faults) (*palworldtest.Server, *palworldtest.SimHandler) {
	t.Helper()
	h := palworldtest.NewSimHandler(palworld.Info{Version: "v0.6.1.0", ServerName: "gsq Pals", Description: "test"}, players,
		palworld.Metrics{ServerFPS: 59, ServerFrameTime: 16.9, MaxPlayerNum: 32, Uptime: 3600, Days: 4})
	s := palworldtest.NewUnstartedServer("adminpw", h)
	s.Faults = faults
	s.Start()
	t.Cleanup(s.Close)
	return s, h
}

func TestTypedEndpoints(t *testing.T) {
	t.Parallel()
	s, h := start(t, palworldtest.Faults{})
	c, err := palworld.Dial(testutil.Context(t), s.Addr().String(), "adminpw", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	info, err := c.Info(testutil.Context(t))
	if err != nil || info.ServerName != "gsq Pals" || info.Version != "v0.6.1.0" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	ps, err := c.Players(testutil.Context(t))
	if err != nil || len(ps) != 2 || ps[1].Name != "ボブ" || ps[1].PlayerID != "-17" || ps[0].Ping != 31.5 {
		t.Fatalf("Players = %+v, %v", ps, err)
	}
	m, err := c.Metrics(testutil.Context(t))
	if err != nil || m.CurrentPlayerNum != 2 || m.MaxPlayerNum != 32 || m.Uptime != 3600 {
		t.Fatalf("Metrics = %+v, %v", m, err)
	}
	st, err := c.Settings(testutil.Context(t))
	if err != nil || st["RESTAPIPort"] != 8212.0 {
		t.Fatalf("Settings = %v, %v", st, err)
	}
	for _, step := range []func() error{
		func() error { return c.Announce(testutil.Context(t), "restart in 5 min") },
		func() error { return c.Kick(testutil.Context(t), "steam_76561198000000002", "afk") },
		func() error { return c.Ban(testutil.Context(t), "steam_76561198000000003", "grief") },
		func() error { return c.Unban(testutil.Context(t), "steam_76561198000000003") },
		func() error { return c.Save(testutil.Context(t)) },
		func() error { return c.Shutdown(testutil.Context(t), 60, "bye") },
		func() error { return c.Stop(testutil.Context(t)) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	want := "announce restart in 5 min|kick steam_76561198000000002 afk|ban steam_76561198000000003 grief|unban steam_76561198000000003|save|shutdown 60 bye|stop"
	if got := strings.Join(h.Actions(), "|"); got != want {
		t.Errorf("actions %q\nwant     %q", got, want)
	}
	// A kick of a player not online is the server's 500.
	if err := c.Kick(testutil.Context(t), "steam_nobody", ""); !errors.Is(err, palworld.ErrServer) {
		t.Errorf("kick of nobody: %v", err)
	}
}

// The console commands map onto the endpoints, RCON's names included.
func TestExecMapsCommands(t *testing.T) {
	t.Parallel()
	s, h := start(t, palworldtest.Faults{})
	c, err := palworld.Dial(testutil.Context(t), s.Addr().String(), "adminpw", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var _ console.Session = c
	out, err := c.Exec(testutil.Context(t), "ShowPlayers")
	var body struct{ Players []palworld.Player }
	if err != nil || json.Unmarshal([]byte(out), &body) != nil || len(body.Players) != 2 {
		t.Fatalf("ShowPlayers: %q, %v", out, err)
	}
	for cmd, want := range map[string]string{
		"Broadcast  hello   there":                   "announce hello   there",
		"KickPlayer steam_76561198000000001 be nice": "kick steam_76561198000000001 be nice",
		"shutdown 30 maintenance now":                "shutdown 30 maintenance now",
		"save":                                       "save",
	} {
		if out, err := c.Exec(testutil.Context(t), cmd); err != nil || out != "ok" {
			t.Errorf("%s: %q, %v", cmd, out, err)
		}
		if a := h.Actions(); a[len(a)-1] != want {
			t.Errorf("%s: recorded %q, want %q", cmd, a[len(a)-1], want)
		}
	}
	for _, bad := range []string{"", "fly away", "kick", "shutdown soon"} {
		if _, err := c.Exec(testutil.Context(t), bad); !errors.Is(err, palworld.ErrUnknownCommand) {
			t.Errorf("Exec(%q) = %v", bad, err)
		}
	}
}

func TestWrongPasswordIs401AuthFailed(t *testing.T) {
	t.Parallel()
	s, _ := start(t, palworldtest.Faults{})
	_, err := palworld.Dial(testutil.Context(t), s.Addr().String(), "nope", nil)
	if !errors.Is(err, palworld.ErrAuthFailed) || !errors.Is(err, console.ErrAuthFailed) {
		t.Fatalf("wrong password: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "palworld: info "+s.Addr().String()) {
		t.Errorf("message %q", err)
	}
	// REST is recognised without a password: what gsq rcon does when the
	// RCON port is closed.
	if err := palworld.Probe(testutil.Context(t), s.Addr().String(), nil); err != nil {
		t.Errorf("Probe: %v", err)
	}
}

func TestStatus500(t *testing.T) {
	t.Parallel()
	s, _ := start(t, palworldtest.Faults{Status500: true})
	_, err := palworld.Dial(testutil.Context(t), s.Addr().String(), "adminpw", nil)
	var se *palworld.StatusError
	if !errors.Is(err, palworld.ErrServer) || !errors.As(err, &se) || se.Code != 500 || se.Body != "Internal Server Error\n" {
		t.Fatalf("500: %v", err)
	}
}

// A gigabyte body is read to the limit and no further, in bounded
// memory; the server sees the client go.
func TestGigabyteBodyIsRefusedInBoundedMemory(t *testing.T) {
	t.Parallel()
	s, _ := start(t, palworldtest.Faults{HugeBody: 1 << 30})
	c := palworld.NewClient(s.Addr().String(), "adminpw", &palworld.Options{MaxBodySize: 1 << 20})
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Players(testutil.Context(t))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, palworld.ErrResponseTooLarge) {
		t.Fatalf("1 GB body: %v", err)
	}
	// The whole process allocated far less than the body: the client
	// held at most its limit (and the fake wrote what TCP buffered).
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<20 {
		t.Errorf("%d MB allocated for a 1 GB body with a 1 MB limit", alloc>>20)
	}
	if s.Written.Load() >= 1<<30-1 {
		t.Error("the whole gigabyte was sent: the client read on")
	}
}

func TestServerThatNeverAnswers(t *testing.T) {
	t.Parallel()
	s, _ := start(t, palworldtest.Faults{Hang: true})
	c := palworld.NewClient(s.Addr().String(), "adminpw", &palworld.Options{Timeout: 200 * time.Millisecond})
	defer c.Close()
	_, err := c.Info(context.Background())
	var ne net.Error
	if !errors.Is(err, palworld.ErrTimeout) || !errors.Is(err, console.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) ||
		!errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("silent server: %v", err)
	}
}

func TestNotPalworld(t *testing.T) {
	t.Parallel()
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
			if _, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
				c.Write([]byte("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))
			}
			c.Close()
		}
	}()
	if err := palworld.Probe(testutil.Context(t), l.Addr().String(), nil); !errors.Is(err, palworld.ErrNotPalworld) {
		t.Errorf("Probe of a 404 server: %v", err)
	}
}

// With PollInterval, Events reports players joining and leaving.
func TestPolledJoinAndLeave(t *testing.T) {
	t.Parallel()
	s, h := start(t, palworldtest.Faults{})
	c, err := palworld.Dial(testutil.Context(t), s.Addr().String(), "adminpw", &palworld.Options{PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for s.Requests.Load() < 3 { // the first poll saw the two players
		select {
		case <-testutil.Context(t).Done():
			t.Fatal("no poll")
		case <-time.After(5 * time.Millisecond):
		}
	}
	h.SetPlayers(append(players[1:], palworld.Player{Name: "Cy", UserID: "steam_3"}))
	got := map[console.Kind]string{}
	for len(got) < 2 {
		select {
		case e := <-c.Events():
			got[e.Kind] = e.Player
		case <-testutil.Context(t).Done():
			t.Fatalf("events %v", got)
		}
	}
	if got[console.KindJoin] != "Cy" || got[console.KindLeave] != "Ann" {
		t.Errorf("events %v", got)
	}
}
