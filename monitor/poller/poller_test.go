package poller

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/web"
)

// testScanner bounds a poll to a fraction of the tests' 1 s interval.
var testScanner = scan.Scanner{Timeout: 100 * time.Millisecond, MinTimeout: 20 * time.Millisecond, Deadline: 400 * time.Millisecond, Retries: 2}

// loadConfig builds a config as gsq monitor does, from a YAML file and
// --target flags, at a 1 s interval.
func loadConfig(t *testing.T, yaml string, targets ...string) *monitor.Config {
	t.Helper()
	l := &monitor.Loader{Targets: targets, Interval: time.Second}
	if yaml != "" {
		l.Path = filepath.Join(t.TempDir(), "monitor.yaml")
		testutil.WriteFile(t, l.Path, yaml)
	}
	cfg, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// fast sets every server's interval to d, below the config's minimum of
// a second, to keep the tests short.
func fast(cfg *monitor.Config, d time.Duration) {
	for i := range cfg.Servers {
		cfg.Servers[i].Interval = d
	}
}

// liveFleet starts n simulated servers whose content the test sets
// (sim.LiveFleet.Update); they stop when the test ends.
func liveFleet(t *testing.T, n int) *sim.LiveFleet {
	t.Helper()
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: n, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	return fleet
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// started is a running poller.
type started struct {
	svc    *Poller
	events <-chan monitor.Event
	cancel context.CancelFunc
	done   chan error
}

func start(t *testing.T, cfg *monitor.Config, st store.Store, opts Options) *started {
	t.Helper()
	opts.Store = st
	res := opts.Scanner.Resolver
	opts.Scanner = testScanner
	if res != nil {
		opts.Scanner.Resolver = res // a test's DNS
	}
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	svc, err := New(context.Background(), cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &started{svc: svc, events: svc.Subscribe(ctx), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- svc.Run(ctx) }()
	t.Cleanup(func() { s.stop(t) })
	return s
}

// stop ends the poller and waits for Run, which flushes the store.
func (s *started) stop(t *testing.T) {
	t.Helper()
	if s.cancel == nil {
		return
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20 s of its context's end")
	}
}

// await reads events until ok returns true for one, for at most
// testutil.Bound.
func (s *started) await(t *testing.T, what string, ok func(monitor.Event) bool) monitor.Event {
	t.Helper()
	deadline := time.After(testutil.Bound)
	for {
		select {
		case ev, open := <-s.events:
			if !open {
				t.Fatalf("waiting for %s: the events ended", what)
			}
			if ok(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s within %s", what, testutil.Bound)
		}
	}
}

// TestFleet monitors a simulated fleet over real loopback: every server
// comes up, its history is written, and the HTTP interface serves the
// live state and the history.
func TestFleet(t *testing.T) {
	t.Parallel()
	const n = 20
	fleet, err := sim.StartFleetAnywhere(sim.FleetConfig{N: n, Challenge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	var targets []string
	for i := range n {
		targets = append(targets, fmt.Sprintf("fleet-%02d=%s", i, fleet.Addr(i)))
	}
	cfg := loadConfig(t, "", targets...)
	fast(cfg, 200*time.Millisecond)
	st := openStore(t)
	s := start(t, cfg, st, Options{})

	// Three polls of each server: the later ones ask with the kept
	// challenge.
	polls := map[string]int{}
	done := 0
	s.await(t, "three successful polls of every server", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventPoll && ev.State.LastError == nil {
			if polls[ev.Server]++; polls[ev.Server] == 3 {
				done++
			}
		}
		return done == n
	})
	states := s.svc.Servers()
	if len(states) != n {
		t.Fatalf("%d servers, want %d", len(states), n)
	}
	for i, ss := range states {
		want := fleet.Addr(i).String()
		if ss.Status != monitor.StatusUp || ss.Target != want || ss.Summary.Name == nil || *ss.Summary.Name != fmt.Sprintf("gsq fleet server #%d", i) {
			t.Errorf("server %d: %+v", i, ss)
		}
		if p := ss.Summary.Players; p == nil || *p != i%33 || len(ss.Players) != i%33 {
			t.Errorf("server %d: players %v, list of %d, want %d", i, p, len(ss.Players), i%33)
		}
	}
	if ch := fleet.Stats().Challenges; ch >= 2*n {
		t.Errorf("the fleet sent %d challenges for %d servers polled three times or more: the challenge was not kept", ch, n)
	}

	// The HTTP side, on a real socket.
	srv := httptest.NewServer(web.New(st, s.svc, web.Options{}))
	defer srv.Close()
	var list struct {
		Servers []struct {
			Name   string
			Status string
		}
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers", "", http.StatusOK, &list)
	if len(list.Servers) != n || list.Servers[3].Name != "fleet-03" || list.Servers[3].Status != "up" {
		t.Errorf("/api/v1/servers: %+v", list.Servers)
	}
	_, _, metrics := testutil.Get(t, srv.URL+"/metrics", "")
	for _, want := range []string{`gameserver_up{`, `server="fleet-07"`, `gameserver_players{`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	s.stop(t)
	// Every poll observed is in the store.
	from := time.Now().Add(-time.Hour)
	for i := range n {
		name := fmt.Sprintf("fleet-%02d", i)
		var samples int
		err := st.EachSample(context.Background(), store.Span{Server: name, From: from}, func(smp store.Sample) error {
			if !smp.Up {
				return nil // a poll may time out on a busy machine
			}
			if smp.Players != i%33 || smp.MaxPlayers != 32 {
				t.Errorf("%s: sample %+v", name, smp)
			}
			samples++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Samples are stored to the second: two polls within one second
		// are one sample.
		if samples < 1 {
			t.Errorf("%s: %d samples up stored", name, samples)
		}
	}
	sess, err := st.Sessions(context.Background(), store.SessionQuery{Server: "fleet-05"})
	if err != nil || len(sess) != 5 {
		t.Errorf("fleet-05: sessions %v, %v; want 5", sess, err)
	}
	if err := st.Check(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestOGP polls fleet servers over OGP, on the OGP session, beside A2S
// ones: each protocol gets its own session, and both come up.
func TestOGP(t *testing.T) {
	t.Parallel()
	fleet, err := sim.StartFleetAnywhere(sim.FleetConfig{N: 4, Challenge: true})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	cfg := loadConfig(t, fmt.Sprintf(`servers:
  - {name: o0, address: '%s', protocol: ogp}
  - {name: o1, address: '%s', protocol: ogp}
  - {name: a2, address: '%s'}
  - {name: a3, address: '%s'}
`, fleet.Addr(0), fleet.Addr(1), fleet.Addr(2), fleet.Addr(3)))
	fast(cfg, 200*time.Millisecond)
	s := start(t, cfg, openStore(t), Options{})
	up := map[string]monitor.ServerState{}
	s.await(t, "every server up", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventUp {
			up[ev.Server] = *ev.State
		}
		return len(up) == 4
	})
	for i, name := range []string{"o0", "o1", "a2", "a3"} {
		st := up[name]
		if st.Summary.Name == nil || *st.Summary.Name != fmt.Sprintf("gsq fleet server #%d", i) || len(st.Players) != i {
			t.Errorf("%s: %+v", name, st)
		}
	}
}
