package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store/storetest"
)

func openCluster(t *testing.T) *Cluster {
	t.Helper()
	st, err := Open(context.Background(), storetest.Postgres(t))
	must(t, err)
	t.Cleanup(func() { st.Close() })
	c, err := ClusterOf(st)
	must(t, err)
	return c
}

// takeTwo takes a shard in two regions, eu and us, and returns their
// fences.
func takeTwo(t *testing.T, c *Cluster, shard int) (eu, us Fence) {
	t.Helper()
	ctx := testutil.Context(t)
	eu, us = Fence{Region: "eu", Shard: shard, Epoch: 5}, Fence{Region: "us", Shard: shard, Epoch: 9}
	must(t, c.TakeShard(ctx, eu))
	must(t, c.TakeShard(ctx, us))
	return eu, us
}

func TestClusterOfSQLite(t *testing.T) {
	t.Parallel()
	st, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	must(t, err)
	defer st.Close()
	if _, err := ClusterOf(st); !errors.Is(err, ErrNotShared) {
		t.Errorf("ClusterOf(SQLite) = %v, want ErrNotShared", err)
	}
}

// TestClusterFence: a write under an epoch older than the shard's newest
// is refused and writes nothing, and an older lease cannot take the
// shard back.
func TestClusterFence(t *testing.T) {
	t.Parallel()
	c := openCluster(t)
	ctx := testutil.Context(t)
	old := Fence{Region: "eu", Shard: 7, Epoch: 10}
	must(t, c.TakeShard(ctx, old))
	now := Fence{Region: "eu", Shard: 7, Epoch: 12}
	must(t, c.TakeShard(ctx, now))
	if err := c.TakeShard(ctx, old); !errors.Is(err, ErrFenced) {
		t.Errorf("retaking with an old epoch: %v, want ErrFenced", err)
	}
	at := time.Unix(1_800_000_000, 0)
	if _, err := c.Commit(ctx, old, Transition{Server: "s1", Down: true, At: at}); !errors.Is(err, ErrFenced) {
		t.Fatalf("Commit under a stale epoch: %v, want ErrFenced", err)
	}
	if err := c.RecordEvent(ctx, old, Event{Server: "s1", At: at, Kind: "partial"}); !errors.Is(err, ErrFenced) {
		t.Errorf("RecordEvent under a stale epoch: %v, want ErrFenced", err)
	}
	if v, err := c.Verdicts(ctx); err != nil || len(v) != 0 {
		t.Errorf("a fenced commit wrote %v (%v)", v, err)
	}
	// Another region's fence is its own.
	if _, err := c.Commit(ctx, Fence{Region: "us", Shard: 7, Epoch: 10}, Transition{Server: "s1", Down: true, At: at}); !errors.Is(err, ErrFenced) {
		t.Errorf("Commit under a fence never taken: %v, want ErrFenced", err)
	}
	r, err := c.Commit(ctx, now, Transition{Server: "s1", Down: true, At: at})
	if err != nil || !r.Won || !r.Alert || r.Seq != 1 {
		t.Errorf("Commit under the newest epoch = %+v, %v", r, err)
	}
}

// TestClusterCommitOnce: two regions that reach the same verdict at once
// commit it once, with one outbox row; up after down commits again, and
// a verdict from an older observation cannot flip it back.
func TestClusterCommitOnce(t *testing.T) {
	t.Parallel()
	c := openCluster(t)
	ctx := testutil.Context(t)
	eu, us := takeTwo(t, c, 1)
	at := time.UnixMilli(1_800_000_000_000)

	// The first verdict of a server that is up is no news.
	r, err := c.Commit(ctx, eu, Transition{Server: "s", Down: false, At: at})
	if err != nil || !r.Won || r.Alert || r.Previous != "unknown" {
		t.Fatalf("first up: %+v, %v", r, err)
	}

	var wg sync.WaitGroup
	results := make([]Committed, 8)
	for i := range results {
		f := eu
		if i%2 == 1 {
			f = us
		}
		wg.Go(func() {
			var err error
			results[i], err = c.Commit(ctx, f, Transition{Server: "s", Down: true, At: at.Add(time.Duration(10+i) * time.Millisecond)})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		if r.Won {
			won++
			if !r.Alert || r.Seq != 2 || r.Previous != "up" {
				t.Errorf("the winner: %+v", r)
			}
		}
	}
	if won != 1 {
		t.Errorf("%d of 8 concurrent down verdicts won, want 1", won)
	}
	if r, err := c.Commit(ctx, us, Transition{Server: "s", Down: false, At: at.Add(5 * time.Millisecond)}); err != nil || r.Won {
		t.Errorf("an up verdict older than the down one: %+v, %v", r, err)
	}
	r, err = c.Commit(ctx, us, Transition{Server: "s", Down: false, At: at.Add(time.Minute)})
	if err != nil || !r.Won || !r.Alert || r.Seq != 3 || r.Previous != "down" || r.PreviousSince.Before(at) {
		t.Errorf("up after down: %+v, %v", r, err)
	}
	out, err := c.Outbox(ctx, time.Time{})
	must(t, err)
	if len(out) != 2 || out[0].Kind != "down" || out[1].Kind != "up" || out[1].Region != "us" || !out[1].Since.Equal(out[0].At) {
		t.Errorf("outbox = %+v, want one down and one up, since the down", out)
	}
	if unsent, _ := c.Outbox(ctx, out[1].At); len(unsent) != 1 || unsent[0].Seq != out[0].Seq {
		t.Errorf("unsent before the up: %+v, want the down", unsent)
	}
	if e, ok, err := c.MarkSent(ctx, "s", out[0].Seq, at); !ok || err != nil || e.Kind != "down" || !e.At.Equal(out[0].At) || e.Seq != out[0].Seq || !e.Sent {
		t.Errorf("MarkSent = %+v, %v, %v; want the down's row, now sent", e, ok, err)
	}
	if _, ok, err := c.MarkSent(ctx, "s", out[0].Seq, at); ok || err != nil {
		t.Errorf("MarkSent again = %v, %v; want false: one claim", ok, err)
	}
	if out, _ := c.Outbox(ctx, time.Time{}); !out[0].Sent || out[1].Sent {
		t.Errorf("after MarkSent: %+v", out)
	}
	if _, ok, err := c.MarkSent(ctx, "s", 99, at); ok || err != nil {
		t.Errorf("MarkSent of no transition = %v, %v; want false", ok, err)
	}
	v, err := c.Verdicts(ctx)
	must(t, err)
	if got := v["s"]; got.State != "up" || got.Seq != 3 || got.Region != "us" {
		t.Errorf("verdict = %+v", got)
	}
	if v, err := c.Verdicts(ctx, "other"); err != nil || len(v) != 0 {
		t.Errorf("Verdicts(other) = %v, %v; want none", v, err)
	}
	if v, err := c.Verdicts(ctx, "s", "other"); err != nil || len(v) != 1 || v["s"].Seq != 3 {
		t.Errorf("Verdicts(s, other) = %v, %v; want s's", v, err)
	}
}

func TestClusterTargets(t *testing.T) {
	t.Parallel()
	c := openCluster(t)
	ctx := testutil.Context(t)
	must(t, c.AddTarget(ctx, Target{Name: "b", Address: "127.0.0.1:27015", Protocol: "a2s", Vantages: []string{"eu", "us"}, Quorum: 2}))
	must(t, c.AddTarget(ctx, Target{Name: "a", Address: "127.0.0.1:27016", Protocol: "a2s"}))
	must(t, c.AddTarget(ctx, Target{Name: "a", Address: "127.0.0.1:27017", Protocol: "ogp"}))
	ts, err := c.Targets(ctx)
	must(t, err)
	if len(ts) != 2 || ts[0].Name != "a" || ts[0].Address != "127.0.0.1:27017" || ts[0].Protocol != "ogp" || len(ts[0].Vantages) != 0 ||
		ts[1].Quorum != 2 || len(ts[1].Vantages) != 2 || ts[1].Vantages[1] != "us" {
		t.Errorf("targets = %+v", ts)
	}
	if ok, err := c.RemoveTarget(ctx, "a"); !ok || err != nil {
		t.Errorf("RemoveTarget(a) = %v, %v", ok, err)
	}
	if ok, err := c.RemoveTarget(ctx, "a"); ok || err != nil {
		t.Errorf("RemoveTarget(a) again = %v, %v", ok, err)
	}
	if ts, _ := c.Targets(ctx); len(ts) != 1 {
		t.Errorf("after rm: %+v", ts)
	}
}

// TestClusterWritersShareStrings: the workers of a fleet write to one
// database at once, and the new maps and versions of their polls are
// interned by both without a unique violation. PostgreSQL may still end
// one of two rounds that wait on each other's rows as a deadlock
// (40P01); the poller keeps such a round and writes it again, as this
// test does, a few times at most.
func TestClusterWritersShareStrings(t *testing.T) {
	t.Parallel()
	dsn := storetest.Postgres(t)
	ctx := testutil.Context(t)
	var sts [2]Store
	servers := []Server{{Name: "a", Target: "127.0.0.1:27015", Protocol: "a2s"}, {Name: "b", Target: "127.0.0.1:27016", Protocol: "a2s"}}
	for i := range sts {
		st, err := Open(ctx, dsn)
		must(t, err)
		t.Cleanup(func() { st.Close() })
		must(t, st.SyncServers(ctx, servers))
		sts[i] = st
	}
	at := time.Unix(1_800_000_000, 0)
	for round := range 20 {
		var wg sync.WaitGroup
		for i, st := range sts {
			wg.Go(func() {
				s := Sample{Server: servers[i].Name, Time: at.Add(time.Duration(round) * time.Second), Up: true,
					Players: 1, MaxPlayers: 8, Bots: 0, Map: fmt.Sprintf("map-%d", round), Version: fmt.Sprintf("v%d", round)}
				for try := 1; ; try++ {
					err := st.Write(ctx, []Sample{s})
					if err == nil {
						return
					}
					if !strings.Contains(err.Error(), "40P01") || try == 5 {
						t.Errorf("round %d, writer %d, try %d: %v", round, i, try, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestClusterFleetID: every worker of one database reads the same fleet
// name, written once; another database has another.
func TestClusterFleetID(t *testing.T) {
	t.Parallel()
	c, other := openCluster(t), openCluster(t)
	ctx := testutil.Context(t)
	first, err := c.FleetID(ctx)
	must(t, err)
	again, err := c.FleetID(ctx)
	must(t, err)
	elsewhere, err := other.FleetID(ctx)
	must(t, err)
	if first == "" || first != again || first == elsewhere {
		t.Errorf("fleet ids %q, %q, and %q in another database", first, again, elsewhere)
	}
}
