package store

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

// TestClusterPartialOnce: of the regions that see one partial outage at
// once, one records it; it stays open until a judgment that saw it end,
// or a transition, and the next one is a new event. A region that lags
// ends nothing newer than what it saw; a stale lease records nothing.
func TestClusterPartialOnce(t *testing.T) {
	t.Parallel()
	c := openCluster(t)
	ctx := testutil.Context(t)
	eu, us := takeTwo(t, c, 3)
	at := time.UnixMilli(1_800_000_000_000)
	events := func(want int) {
		t.Helper()
		evs, err := c.Events(ctx, "s", 100)
		must(t, err)
		if len(evs) != want {
			t.Fatalf("%d events, want %d: %+v", len(evs), want, evs)
		}
		for _, e := range evs {
			if e.Kind != "partial" {
				t.Errorf("event %+v, want a partial outage", e)
			}
		}
	}

	// Before any verdict: 8 workers of two regions see it at once.
	var wg sync.WaitGroup
	var mu sync.Mutex
	recorded := 0
	for i := range 8 {
		f := eu
		if i%2 == 1 {
			f = us
		}
		wg.Go(func() {
			ok, err := c.RecordPartial(ctx, f, Event{Server: "s", At: at.Add(time.Duration(i) * time.Millisecond), Views: "{}"})
			if err != nil {
				t.Error(err)
			}
			if ok {
				mu.Lock()
				recorded++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if recorded != 1 {
		t.Errorf("%d of 8 concurrent partial outages recorded, want 1", recorded)
	}
	events(1)
	v, err := c.Verdicts(ctx, "s")
	must(t, err)
	if got := v["s"]; got.State != "unknown" || got.Partial.Before(at) {
		t.Errorf("verdict during the partial outage: %+v", got)
	}
	if ok, err := c.RecordPartial(ctx, Fence{Region: "eu", Shard: 3, Epoch: 4}, Event{Server: "s", At: at.Add(time.Hour)}); ok || !errors.Is(err, ErrFenced) {
		t.Errorf("RecordPartial under a stale epoch = %v, %v; want ErrFenced", ok, err)
	}

	// A judgment older than the outage ends nothing; a newer one ends it.
	if ended, err := c.EndPartial(ctx, us, "s", at.Add(-time.Second)); ended || err != nil {
		t.Errorf("EndPartial before the outage = %v, %v; want false", ended, err)
	}
	if ok, _ := c.RecordPartial(ctx, us, Event{Server: "s", At: at.Add(time.Second)}); ok {
		t.Error("the open outage recorded again")
	}
	if ended, err := c.EndPartial(ctx, eu, "s", at.Add(time.Second)); !ended || err != nil {
		t.Errorf("EndPartial = %v, %v; want true", ended, err)
	}
	if ended, err := c.EndPartial(ctx, us, "s", at.Add(time.Second)); ended || err != nil {
		t.Errorf("EndPartial again = %v, %v; want false", ended, err)
	}
	if v, _ := c.Verdicts(ctx, "s"); !v["s"].Partial.IsZero() {
		t.Errorf("ended, yet open since %v", v["s"].Partial)
	}

	// The route breaks again: a new event, which a lagging region that
	// saw only the first end does not end.
	if ok, err := c.RecordPartial(ctx, us, Event{Server: "s", At: at.Add(time.Minute)}); !ok || err != nil {
		t.Fatalf("the second partial outage = %v, %v; want recorded", ok, err)
	}
	events(2)
	if ended, _ := c.EndPartial(ctx, eu, "s", at.Add(2*time.Second)); ended {
		t.Error("a lagging judgment ended the second outage")
	}
	// A committed transition ends it: what is partial after it is new.
	if r, err := c.Commit(ctx, eu, Transition{Server: "s", At: at.Add(2 * time.Minute)}); err != nil || !r.Won {
		t.Fatalf("Commit = %+v, %v", r, err)
	}
	if ok, err := c.RecordPartial(ctx, eu, Event{Server: "s", At: at.Add(3 * time.Minute)}); !ok || err != nil {
		t.Errorf("a partial outage after a transition = %v, %v; want recorded", ok, err)
	}
	events(3)
}
