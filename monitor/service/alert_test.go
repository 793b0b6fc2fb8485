package service

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/monitor"
)

// receiver is a webhook receiver on loopback: it records the alerts it
// takes and tells the test of each.
type receiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []monitor.Alert
	ch  chan monitor.Alert
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{ch: make(chan monitor.Alert, 64)}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var a monitor.Alert
		if err := json.Unmarshal(b, &a); err != nil {
			t.Errorf("webhook body %q: %v", b, err)
		}
		rc.mu.Lock()
		rc.got = append(rc.got, a)
		rc.mu.Unlock()
		rc.ch <- a
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) kinds(server string) map[monitor.AlertKind]int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[monitor.AlertKind]int{}
	for _, a := range rc.got {
		if a.Server == server {
			out[a.Kind]++
		}
	}
	return out
}

// TestAlertsDownUpAndFlapping runs the monitor on two simulated servers
// over loopback, with a webhook receiver: one goes down and comes back,
// and must raise exactly one down and one up alert; the other fails and
// answers by turns, which raises nothing, until it stays down for the
// threshold.
func TestAlertsDownUpAndFlapping(t *testing.T) {
	t.Parallel()
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: 2, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	rc := newReceiver(t)
	cfg := loadConfig(t, fmt.Sprintf(`
failures: 3
down_after: 500ms
alert_cooldown: 1h
webhooks: [%s]
alerts: [down, up]
`, rc.srv.URL), "cycle="+fleet.Addr(0).String(), "flap="+fleet.Addr(1).String())
	fast(cfg, 200*time.Millisecond)
	s := start(t, cfg, openStore(t), Options{})

	isPoll := func(name string) func(monitor.Event) bool {
		return func(ev monitor.Event) bool { return ev.Kind == monitor.EventPoll && ev.Server == name }
	}
	// Both up first.
	up := map[string]bool{}
	s.await(t, 10*time.Second, "both servers up", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventUp {
			up[ev.Server] = true
		}
		return len(up) == 2
	})

	// The cycle: down for good, then back.
	fleet.Stop(0)
	s.await(t, 10*time.Second, "cycle down", func(ev monitor.Event) bool { return ev.Kind == monitor.EventDown && ev.Server == "cycle" })
	if a := <-rc.ch; a.Kind != monitor.AlertDown || a.Server != "cycle" {
		t.Fatalf("first alert %+v, want cycle down", a)
	}
	if err := fleet.Start(0); err != nil {
		t.Fatal(err)
	}
	s.await(t, 10*time.Second, "cycle up", func(ev monitor.Event) bool { return ev.Kind == monitor.EventUp && ev.Server == "cycle" })
	if a := <-rc.ch; a.Kind != monitor.AlertUp || a.Server != "cycle" {
		t.Fatalf("second alert %+v, want cycle up", a)
	}

	// The flapper: each poll toggles it, for eight polls.
	for i := range 8 {
		ev := s.await(t, 10*time.Second, "a poll of flap", isPoll("flap"))
		if ev.State.Status != monitor.StatusUp {
			t.Fatalf("flap went %s after %d flapping polls", ev.State.Status, i)
		}
		if ev.State.LastError == nil {
			fleet.Stop(1)
		} else if err := fleet.Start(1); err != nil {
			t.Fatal(err)
		}
	}
	if k := rc.kinds("flap"); len(k) != 0 {
		t.Fatalf("flapping raised alerts: %v", k)
	}
	// Now down for good: one alert, once the threshold is passed.
	fleet.Stop(1)
	ev := s.await(t, 10*time.Second, "flap down", func(ev monitor.Event) bool { return ev.Kind == monitor.EventDown && ev.Server == "flap" })
	if first := ev.State.LastPoll.Add(-500 * time.Millisecond); ev.State.ConsecutiveFailures < 3 || ev.State.LastSuccess.After(first) {
		t.Errorf("flap down after %d failures, last success %s, at %s", ev.State.ConsecutiveFailures, ev.State.LastSuccess, ev.State.LastPoll)
	}
	if a := <-rc.ch; a.Kind != monitor.AlertDown || a.Server != "flap" {
		t.Fatalf("alert %+v, want flap down", a)
	}
	// A few more polls, then stop: the monitor delivers what is queued.
	for range 3 {
		s.await(t, 10*time.Second, "a poll of cycle", isPoll("cycle"))
	}
	s.stop(t)
	if k := rc.kinds("cycle"); k[monitor.AlertDown] != 1 || k[monitor.AlertUp] != 1 || len(k) != 2 {
		t.Errorf("cycle alerts %v, want one down and one up", k)
	}
	if k := rc.kinds("flap"); k[monitor.AlertDown] != 1 || len(k) != 1 {
		t.Errorf("flap alerts %v, want one down", k)
	}
}

// TestAlertsPlayersMapJoin changes a simulated server's content and
// checks the webhook receiver gets an alert for each rule: the player
// count crossing a threshold, the map changing, a named player joining
// and leaving; and none for the changes no rule asks about.
func TestAlertsPlayersMapJoin(t *testing.T) {
	t.Parallel()
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: 1, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	set := func(mapName string, players ...string) {
		t.Helper()
		err := fleet.Update(0, func(c *sim.Content) {
			c.Map, c.MaxPlayers, c.Players = mapName, 32, nil
			for _, p := range players {
				c.Players = append(c.Players, sim.Player{Name: p})
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	set("de_dust2", "Carol")
	rc := newReceiver(t)
	cfg := loadConfig(t, fmt.Sprintf(`
webhooks: [%s]
alert_cooldown: 0s
servers:
  - name: s
    address: '%s'
    alerts:
      - {on: players, threshold: 3, hysteresis: 1, direction: rising}
      - map
      - {on: join, player: '^Alice$'}
      - {on: leave, player: '^Alice$'}
`, rc.srv.URL, fleet.Addr(0)))
	fast(cfg, 100*time.Millisecond)
	s := start(t, cfg, openStore(t), Options{})
	// The first poll is the baseline: no alert.
	s.await(t, 10*time.Second, "a first poll", func(ev monitor.Event) bool { return ev.Kind == monitor.EventPoll && ev.State.LastError == nil })

	next := func(want monitor.AlertKind) monitor.Alert {
		t.Helper()
		select {
		case a := <-rc.ch:
			if a.Kind != want {
				t.Fatalf("alert %s (%s), want %s", a.Kind, a.Text, want)
			}
			return a
		case <-time.After(10 * time.Second):
			t.Fatalf("no %s alert within 10 s", want)
		}
		return monitor.Alert{}
	}
	set("de_dust2", "Carol", "Alice")
	if a := next(monitor.AlertJoin); a.Player != "Alice" {
		t.Errorf("join: %+v", a)
	}
	set("de_dust2", "Carol", "Alice", "Dave")
	if a := next(monitor.AlertPlayers); a.Players == nil || *a.Players != 3 || a.Direction != monitor.Rising {
		t.Errorf("players: %+v", a)
	}
	set("de_inferno", "Carol", "Alice", "Dave")
	if a := next(monitor.AlertMap); a.Map != "de_inferno" || a.PreviousMap != "de_dust2" {
		t.Errorf("map: %+v", a)
	}
	set("de_inferno", "Carol", "Dave")
	if a := next(monitor.AlertLeave); a.Player != "Alice" {
		t.Errorf("leave: %+v", a)
	}
	s.stop(t)
	if k := rc.kinds("s"); len(k) != 4 || k[monitor.AlertJoin] != 1 || k[monitor.AlertLeave] != 1 || k[monitor.AlertPlayers] != 1 || k[monitor.AlertMap] != 1 {
		t.Errorf("alerts %v, want one of each: join, players, map, leave (and none for Carol or Dave)", k)
	}
}
