package poller

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// nextAlert waits for the receiver's request number n and decodes it.
func nextAlert(t *testing.T, rc *testutil.Receiver, n int) monitor.Alert {
	t.Helper()
	var a monitor.Alert
	if err := json.Unmarshal(rc.Next(t, n), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// setPlayers sets a simulated server's map and players.
func setPlayers(t *testing.T, fleet *sim.LiveFleet, i int, mapName string, players ...string) {
	t.Helper()
	err := fleet.Update(i, func(c *sim.Content) {
		c.Map, c.MaxPlayers, c.Players = mapName, 32, nil
		for _, p := range players {
			c.Players = append(c.Players, sim.Player{Name: p})
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDownUpSessions runs the monitor on a simulated server over
// loopback, with a webhook receiver: the server goes down and comes back.
// One down and one up alert go out, and the players' sessions end when
// the server goes down (at the last poll that listed them), instead of
// staying open while the page says the server is down; two players of
// one name are two sessions throughout. The rules' own cases, flapping
// and cooldowns, are table tests on the Tracker and the rule engine in
// package monitor.
func TestDownUpSessions(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	setPlayers(t, fleet, 0, "de_dust2", "Alice", "Player", "Player")
	rc := testutil.NewReceiver(t, nil)
	cfg := loadConfig(t, fmt.Sprintf("failures: 3\ndown_after: 200ms\nalert_cooldown: 1h\nwebhooks: [%s]\nalerts: [down, up]\n", rc.URL),
		"s="+fleet.Addr(0).String())
	fast(cfg, 100*time.Millisecond)
	st := openStore(t)
	s := start(t, cfg, st, Options{})

	listed := s.await(t, "a poll that lists the players", func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && len(ev.State.Players) == 3
	})
	fleet.Stop(0)
	var leaves []string
	down := s.await(t, "the server down", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventLeave {
			leaves = append(leaves, ev.Detail)
			if !ev.Baseline || ev.Time.Before(listed.Time) {
				t.Errorf("leave %+v: want a baseline leave when last listed", ev)
			}
		}
		return ev.Kind == monitor.EventPoll && ev.State.Status == monitor.StatusDown
	})
	if strings.Join(leaves, ",") != "Alice,Player,Player" || down.State.Players != nil {
		t.Errorf("the players left with the server: %q, and %v are on it", leaves, down.State.Players)
	}
	if a := nextAlert(t, rc, 0); a.Kind != monitor.AlertDown || a.Server != "s" {
		t.Fatalf("first alert %+v, want s down", a)
	}
	if err := fleet.Start(0); err != nil {
		t.Fatal(err)
	}
	s.await(t, "the players listed again", func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && len(ev.State.Players) == 3
	})
	if a := nextAlert(t, rc, 1); a.Kind != monitor.AlertUp {
		t.Fatalf("second alert %+v, want up", a)
	}
	s.stop(t)
	if n := rc.Count(); n != 2 {
		t.Errorf("%d alerts, want 2", n)
	}
	sess, err := st.Sessions(testutil.Context(t), store.SessionQuery{Server: "s"})
	if err != nil {
		t.Fatal(err)
	}
	byPlayer := map[string][]store.Session{}
	for _, x := range sess {
		byPlayer[x.Player] = append(byPlayer[x.Player], x)
	}
	if len(byPlayer["Alice"]) != 2 || len(byPlayer["Player"]) != 4 {
		t.Fatalf("sessions %+v; want Alice's and both Players' before and after the outage", sess)
	}
	for name, list := range byPlayer {
		// Newest first: the sessions since the outage are open, those
		// before it ended when the players were last listed (stored to
		// the second).
		for i, x := range list {
			if open := i < len(list)/2; open != (x.Left == nil) || !open && x.Left.After(down.State.LastSuccess) {
				t.Errorf("%s's session %d: %+v (last answer before the outage %v)", name, i, x, down.State.LastSuccess)
			}
		}
	}
	// The outage is one incident: from the first failed poll to the
	// first answer, for the reason the polls failed (a stopped UDP
	// server: the port is closed, so unreachable).
	inc, err := st.Incidents(testutil.Context(t), store.IncidentQuery{Server: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inc) != 1 || inc[0].End == nil || inc[0].Start.After(down.State.FailingSince) || inc[0].Start.Before(down.State.LastSuccess.Truncate(time.Second)) ||
		inc[0].Cause != string(down.State.LastError.Kind) || inc[0].Maintenance {
		t.Errorf("incidents %+v; want one that ended, from %v, cause %s", inc, down.State.FailingSince, down.State.LastError.Kind)
	}
}

// TestAlertsPlayersMapJoin changes a simulated server's content and
// checks the webhook receiver gets an alert for each rule: the player
// count crossing a threshold, the map changing, a named player joining
// and leaving; and none for the changes no rule asks about.
func TestAlertsPlayersMapJoin(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	setPlayers(t, fleet, 0, "de_dust2", "Carol")
	rc := testutil.NewReceiver(t, nil)
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
`, rc.URL, fleet.Addr(0)))
	fast(cfg, 100*time.Millisecond)
	s := start(t, cfg, openStore(t), Options{})
	// The first poll is the baseline: no alert.
	s.await(t, "a first poll", func(ev monitor.Event) bool { return ev.Kind == monitor.EventPoll && ev.State.LastError == nil })

	next := func(n int, want monitor.AlertKind) monitor.Alert {
		t.Helper()
		a := nextAlert(t, rc, n)
		if a.Kind != want {
			t.Fatalf("alert %s (%s), want %s", a.Kind, a.Text, want)
		}
		return a
	}
	setPlayers(t, fleet, 0, "de_dust2", "Carol", "Alice")
	if a := next(0, monitor.AlertJoin); a.Player != "Alice" {
		t.Errorf("join: %+v", a)
	}
	setPlayers(t, fleet, 0, "de_dust2", "Carol", "Alice", "Dave")
	if a := next(1, monitor.AlertPlayers); a.Players == nil || *a.Players != 3 || a.Direction != monitor.Rising {
		t.Errorf("players: %+v", a)
	}
	setPlayers(t, fleet, 0, "de_inferno", "Carol", "Alice", "Dave")
	if a := next(2, monitor.AlertMap); a.Map != "de_inferno" || a.PreviousMap != "de_dust2" {
		t.Errorf("map: %+v", a)
	}
	setPlayers(t, fleet, 0, "de_inferno", "Carol", "Dave")
	if a := next(3, monitor.AlertLeave); a.Player != "Alice" {
		t.Errorf("leave: %+v", a)
	}
	s.stop(t)
	if n := rc.Count(); n != 4 {
		t.Errorf("%d alerts, want 4: join, players, map, leave (and none for Carol or Dave)", n)
	}
}

// TestAlertFailuresLogged: the Alerter the poller builds logs with the
// poller's Logf. Issue 19 found it built without the logger, so a
// receiver that was down lost alerts without a word; this test fails if
// they go silent again.
func TestAlertFailuresLogged(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	dead := testutil.NewReceiver(t, nil)
	dead.Close() // connections are refused
	cfg := loadConfig(t, fmt.Sprintf("webhooks: [%s]\nalerts: [up]\nfailures: 1\ndown_after: 0s\n", dead.URL), "s="+fleet.Addr(0).String())
	fast(cfg, 100*time.Millisecond)
	var mu sync.Mutex
	var logs strings.Builder
	logged := make(chan struct{}, 100)
	s := start(t, cfg, openStore(t), Options{
		Alerter: monitor.AlerterOptions{Attempts: -1},
		Logf: func(format string, args ...any) {
			mu.Lock()
			fmt.Fprintf(&logs, format+"\n", args...)
			mu.Unlock()
			logged <- struct{}{}
		},
	})
	s.await(t, "up", func(ev monitor.Event) bool { return ev.Kind == monitor.EventUp })
	fleet.Stop(0)
	s.await(t, "down", func(ev monitor.Event) bool { return ev.Kind == monitor.EventDown })
	if err := fleet.Start(0); err != nil {
		t.Fatal(err)
	}
	s.await(t, "up again", func(ev monitor.Event) bool { return ev.Kind == monitor.EventUp })
	for {
		mu.Lock()
		text := logs.String()
		mu.Unlock()
		if strings.Contains(text, "up alert for s dropped") {
			break
		}
		testutil.Await(t, logged, "a log line of the failed alert")
	}
	s.stop(t)
	st := s.svc.AlertStats()
	if len(st) != 1 || st[0].Failed != 1 || st[0].Sent != 0 {
		t.Errorf("alert stats %+v, want one failed", st)
	}
}

// TestUptimeLeavesOutMaintenance: a server down only inside a
// maintenance window keeps 100% uptime, in the live state the list and
// the server page show (counted at each poll, and read again from the
// store every 400 ms) as in the store's own figure; its incident is
// maintenance.
func TestUptimeLeavesOutMaintenance(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	setPlayers(t, fleet, 0, "de_dust2", "Alice")
	now := time.Now()
	cfg := loadConfig(t, fmt.Sprintf("failures: 2\ndown_after: 200ms\nmaintenance:\n  - servers: [s]\n    from: %s\n    to: %s\n",
		now.Add(-time.Minute).UTC().Format(time.RFC3339), now.Add(time.Hour).UTC().Format(time.RFC3339)), "s="+fleet.Addr(0).String())
	// The store keeps times to the second: polls a second or more apart,
	// so that the incident's start, rounded down, holds no poll before
	// it.
	fast(cfg, 1100*time.Millisecond)
	st := openStore(t)
	s := start(t, cfg, st, Options{Maintenance: &monitor.Maintenance{}, UptimeEvery: 400 * time.Millisecond, WriteEvery: 50 * time.Millisecond})

	s.await(t, "the 24-hour uptime known", func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && ev.State.Uptime24h != nil
	})
	fleet.Stop(0)
	// Before the server is down, its failed polls count as any do; from
	// the poll that finds it down, its incident is maintenance, and
	// every poll of it is left out, those that led to it too.
	downPolls := 0
	s.await(t, "five polls while down, over several reads of the store", func(ev monitor.Event) bool {
		if ev.Kind != monitor.EventPoll || ev.State.Status != monitor.StatusDown {
			return false
		}
		if u := ev.State.Uptime24h; u == nil || *u != 1 {
			t.Fatalf("uptime %s at poll %d while down, want 1: down only in maintenance", fmtUptime(u), downPolls)
		}
		downPolls++
		return downPolls == 5
	})
	s.stop(t)
	ctx := testutil.Context(t)
	inc, err := st.Incidents(ctx, store.IncidentQuery{Server: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(inc) != 1 || !inc[0].Maintenance {
		t.Fatalf("incidents %+v; want one, of maintenance", inc)
	}
	frac, polls, err := st.Uptime(ctx, "s", now.Add(-time.Hour), time.Now())
	if err != nil || frac != 1 || polls == 0 {
		t.Fatalf("the store's uptime: %v over %d polls (%v), want 1", frac, polls, err)
	}
}

func fmtUptime(u *float64) string {
	if u == nil {
		return "unknown"
	}
	return fmt.Sprint(*u)
}
