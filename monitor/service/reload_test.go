package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// TestReloadPrivacyProbe checks a reload (a server removed, one added,
// one kept with its state), a server whose player data is off (no names
// kept, none stored), and a probe on the service's sockets.
func TestReloadPrivacyProbe(t *testing.T) {
	t.Parallel()
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: 2, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
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
	old := s.await(t, 10*time.Second, "a poll of old", isPoll("old"))
	if len(old.State.Players) == 0 {
		t.Errorf("old: no players in %+v", old.State)
	}
	priv := s.await(t, 10*time.Second, "a poll of private", isPoll("private"))
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
	s.await(t, 10*time.Second, "a poll of new", isPoll("new"))
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
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: 1, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	cfg := loadConfig(t, "", "only="+fleet.Addr(0).String())
	fast(cfg, 100*time.Millisecond)
	st := openStore(t)
	s := start(t, cfg, st, Options{})
	s.await(t, 10*time.Second, "a poll", func(ev monitor.Event) bool { return ev.Kind == monitor.EventPoll })
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
