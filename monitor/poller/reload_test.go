package poller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// TestReloadPrivacyProbe checks a reload (a server removed, one added,
// one kept with its state), a server whose player data is off (no names
// kept, none stored), and a probe on the poller's sockets.
func TestReloadPrivacyProbe(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 2)
	yaml := func(second string) string {
		return fmt.Sprintf("servers:\n  - {name: private, address: '%s', player_data: false}\n  - {name: %s, address: '%s'}\n",
			fleet.Addr(0), second, fleet.Addr(1))
	}
	cfg := loadConfig(t, yaml("old"))
	fast(cfg, 200*time.Millisecond)
	st := openStore(t)
	s := start(t, cfg, st, Options{})

	isPoll := func(name string) func(monitor.Event) bool {
		return func(ev monitor.Event) bool {
			return ev.Kind == monitor.EventPoll && ev.Server == name && ev.State.LastError == nil
		}
	}
	old := s.await(t, "a poll of old", isPoll("old"))
	if len(old.State.Players) == 0 {
		t.Errorf("old: no players in %+v", old.State)
	}
	priv := s.await(t, "a poll of private", isPoll("private"))
	if priv.State.Players != nil || priv.State.Summary.Players == nil || *priv.State.Summary.Players == 0 {
		t.Errorf("private: players %v, count %v; want a count and no names", priv.State.Players, priv.State.Summary.Players)
	}

	next := loadConfig(t, yaml("new"))
	fast(next, 200*time.Millisecond)
	ch := monitor.Diff(cfg, next)
	if err := s.svc.Reload(context.Background(), next, ch); err != nil {
		t.Fatal(err)
	}
	states := s.svc.Servers()
	if len(states) != 2 || states[0].Name != "new" || states[1].Name != "private" || states[1].Queries["ok"] < priv.State.Queries["ok"] {
		t.Errorf("after the reload: %+v", states)
	}
	s.await(t, "a poll of new", isPoll("new"))
	if _, ok := s.svc.Server("old"); ok {
		t.Error("old is still monitored")
	}

	probe, err := s.svc.Probe(context.Background(), fleet.Addr(1).String(), "a2s")
	if err != nil || probe.Status != monitor.StatusUp || probe.Summary.Name == nil || *probe.Summary.Name != fleet.Name(1) {
		t.Errorf("probe: %+v, %v", probe, err)
	}
	if _, err := s.svc.Probe(context.Background(), fleet.Addr(1).String(), "gopher"); err == nil {
		t.Error("a probe with an unknown protocol did not fail")
	}

	s.stop(t)
	sess, err := st.Sessions(context.Background(), store.SessionQuery{Server: "private"})
	if err != nil || len(sess) != 0 {
		t.Errorf("private: sessions %v, %v; want none", sess, err)
	}
	if n, _ := st.Sessions(context.Background(), store.SessionQuery{Server: "old"}); len(n) == 0 {
		t.Error("old: no sessions stored")
	}
}

// TestStoreFailureStops: a store that can no longer be written stops the
// monitor with the store's error, which names the database, rather than
// polling on and losing everything.
func TestStoreFailureStops(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	cfg := loadConfig(t, "", "only="+fleet.Addr(0).String())
	fast(cfg, 100*time.Millisecond)
	st := openStore(t)
	s := start(t, cfg, st, Options{})
	s.await(t, "a poll", func(ev monitor.Event) bool { return ev.Kind == monitor.EventPoll })
	st.Close()
	select {
	case err := <-s.done:
		if !errors.Is(err, store.ErrClosed) || !strings.Contains(err.Error(), "monitor.db") {
			t.Errorf("Run: %v; want the store's closed error naming the file", err)
		}
		s.cancel()
		s.cancel = nil
	case <-time.After(10 * time.Second):
		t.Fatal("the monitor went on polling into a closed store")
	}
}

// TestRestartResumesSessions: a monitor that stops and starts again on
// the same history carries the open sessions on (the tracker resumes
// them from the store), rather than ending and reopening them, and
// still sees who joined while it was away.
func TestRestartResumesSessions(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	setPlayers(t, fleet, 0, "de_dust2", "Alice", "Player", "Player")
	cfg := loadConfig(t, "", "s="+fleet.Addr(0).String())
	fast(cfg, 100*time.Millisecond)
	st := openStore(t)
	listed := func(ev monitor.Event) bool { return ev.Kind == monitor.EventPoll && ev.State.Players != nil }
	first := start(t, cfg, st, Options{})
	first.await(t, "a poll that lists the players", listed)
	first.stop(t)

	setPlayers(t, fleet, 0, "de_dust2", "Alice", "Player", "Bob")
	second := start(t, cfg, st, Options{})
	var changes []string
	second.await(t, "the first list after the restart", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventJoin || ev.Kind == monitor.EventLeave {
			changes = append(changes, fmt.Sprintf("%s:%s baseline=%v", ev.Kind, ev.Detail, ev.Baseline))
		}
		return listed(ev)
	})
	second.stop(t)
	if got := strings.Join(changes, " "); got != "leave:Player baseline=false join:Bob baseline=false" {
		t.Errorf("the first list after the restart made %q", got)
	}
	sess, err := st.Sessions(testutil.Context(t), store.SessionQuery{Server: "s"})
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]int{}
	for _, x := range sess {
		if x.Left == nil {
			open[x.Player]++
		}
	}
	if len(sess) != 4 || open["Alice"] != 1 || open["Player"] != 1 || open["Bob"] != 1 {
		t.Errorf("sessions %+v; want Alice's and a Player's carried on, one Player's ended, Bob's begun", sess)
	}
}

// TestRestartDoesNotPageAgain: a monitor restarted in the middle of an
// outage it announced (issue 19: "a restart pages again") sends no
// second down alert, since the store kept what it announced, and
// announces the end of the outage once, when the server comes back.
func TestRestartDoesNotPageAgain(t *testing.T) {
	t.Parallel()
	fleet := liveFleet(t, 1)
	setPlayers(t, fleet, 0, "de_dust2", "Alice")
	rc := testutil.NewReceiver(t, nil)
	cfg := loadConfig(t, fmt.Sprintf("failures: 3\ndown_after: 200ms\ngrace: 0\nalert_group_window: 0\nwebhooks: [%s]\nalerts: [down, up]\n", rc.URL),
		"s="+fleet.Addr(0).String())
	fast(cfg, 100*time.Millisecond)
	st := openStore(t)
	isDown := func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && ev.State.Status == monitor.StatusDown
	}

	first := start(t, cfg, st, Options{})
	first.await(t, "the server up", func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && ev.State.Status == monitor.StatusUp
	})
	fleet.Stop(0)
	first.await(t, "the server down", isDown)
	if a := nextAlert(t, rc, 0); a.Kind != monitor.AlertDown {
		t.Fatalf("first alert %+v, want down", a)
	}
	first.stop(t)

	second := start(t, cfg, st, Options{})
	second.await(t, "the server down to the new run", isDown)
	if err := fleet.Start(0); err != nil {
		t.Fatal(err)
	}
	second.await(t, "the server back", func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && ev.State.Status == monitor.StatusUp
	})
	if a := nextAlert(t, rc, 1); a.Kind != monitor.AlertUp {
		t.Fatalf("second alert %+v, want up", a)
	}
	second.stop(t)
	if n := rc.Count(); n != 2 {
		t.Errorf("%d alerts, want the down and the up: the restart paged again", n)
	}
}
