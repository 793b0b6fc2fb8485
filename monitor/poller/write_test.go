package poller

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/store"
)

// TestWriterPacing runs the poller's writer on a fake clock
// (testing/synctest): the first sample is written at once, the ones that
// follow within WriteEvery wait for the next write and go in one
// transaction together, and the flush that ends a Run writes what still
// waits.
func TestWriterPacing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		cfg := loadConfig(t, "", "s=127.0.0.1:27015")
		p, err := New(ctx, cfg, Options{Store: st, WriteEvery: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		stored := func() int {
			n := 0
			err := st.EachSample(ctx, store.Span{}, func(store.Sample) error { n++; return nil })
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		runCtx, cancel := context.WithCancel(ctx)
		done := make(chan error)
		go func() { done <- p.w.run(runCtx) }()
		sample := func() { p.w.add(store.Sample{Server: "s", Time: time.Now(), Up: true, Players: 1}) }

		sample()
		synctest.Wait()
		if n := stored(); n != 1 {
			t.Fatalf("%d samples stored at once, want the first", n)
		}
		for range 3 {
			time.Sleep(2 * time.Second)
			sample()
		}
		synctest.Wait()
		if n := stored(); n != 1 {
			t.Fatalf("%d samples stored 6 s after the first write, want 1: the next waits for WriteEvery", n)
		}
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if n := stored(); n != 4 {
			t.Fatalf("%d samples stored after WriteEvery, want 4", n)
		}
		sample()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := p.w.flush(ctx); err != nil || stored() != 5 {
			t.Fatalf("after the end: %d samples stored, %v", stored(), err)
		}
	})
}

// TestUptimeCurrentToThePoll: the 24-hour uptime the list shows moves
// with each poll, not only when it is read again from the store, so that
// the list and the server page give one figure (issue 19: the list
// lagged the page by about a minute).
func TestUptimeCurrentToThePoll(t *testing.T) {
	cfg := loadConfig(t, "", "127.0.0.1:1")
	st := openStore(t)
	ctx := context.Background()
	svc, err := New(ctx, cfg, Options{Store: st, Scanner: testScanner, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	name := cfg.Servers[0].Name
	now := time.Now()
	var samples []store.Sample
	for i := range 4 {
		samples = append(samples, store.Sample{Server: name, Time: now.Add(time.Duration(i-10) * time.Minute), Up: i != 2,
			Players: 1, MaxPlayers: 8, Bots: -1})
	}
	if err := st.Write(ctx, samples); err != nil {
		t.Fatal(err)
	}
	r := svc.runs[name]
	r.countPoll(&monitor.ServerState{Name: name}, nil, nil)
	if r.uptime != nil {
		t.Fatalf("uptime %v before the store was read, want none", *r.uptime)
	}
	svc.refreshUptime(ctx)
	if got := svc.runs[name].state.Uptime24h; got == nil || *got != 0.75 {
		t.Fatalf("uptime after the read: %v, want 0.75", got)
	}
	r.countPoll(&monitor.ServerState{Name: name, LastError: &result.Error{Kind: result.KindTimeout}}, nil, nil)
	if *r.uptime != 0.6 {
		t.Fatalf("uptime after a failed poll: %v, want 3 of 5 = 0.6", *r.uptime)
	}
	svc.refreshUptime(ctx) // the store does not have that poll: the read wins
	if *r.uptime != 0.75 {
		t.Fatalf("uptime after the next read: %v, want the store's 0.75", *r.uptime)
	}
}

// TestRecentPolls: the list's bar of the last polls keeps the newest 30
// outcomes, oldest first, and never changes a string a state holds.
func TestRecentPolls(t *testing.T) {
	var r string
	var held []string
	for i := range 35 {
		r = recentPolls(r, i%5 != 0)
		held = append(held, r)
	}
	if len(r) != monitor.RecentPolls {
		t.Fatalf("%q: %d polls, want %d", r, len(r), monitor.RecentPolls)
	}
	want := ""
	for i := 5; i < 35; i++ {
		if i%5 != 0 {
			want += "1"
		} else {
			want += "0"
		}
	}
	if r != want {
		t.Errorf("recent %q, want %q", r, want)
	}
	if held[0] != "0" || held[1] != "01" || held[6] != "0111101" {
		t.Errorf("a held string changed: %q %q %q", held[0], held[1], held[6])
	}
}
