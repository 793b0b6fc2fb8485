package poller

import (
	"context"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/storetest"
	"github.com/gsq-project/gsq/web"
)

// TestSamplesDropped: while PostgreSQL is unreachable, the samples wait
// in a bounded queue; past its bound the oldest are dropped and counted
// on /metrics (gsq_monitor_samples_dropped_total); when it is back,
// writing resumes by itself.
func TestSamplesDropped(t *testing.T) {
	t.Parallel()
	dsn := storetest.Postgres(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	link := testutil.StartLink(t, "127.0.0.1:0", u.Host)
	u.Host = link.Addr()
	ctx := testutil.Context(t)
	st, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	fleet := liveFleet(t, 4)
	var targets []string
	for i := range 4 {
		targets = append(targets, "s"+string(rune('0'+i))+"="+fleet.Addr(i).String())
	}
	cfg := loadConfig(t, "", targets...)
	fast(cfg, 100*time.Millisecond)
	// 40 samples a second: the buffer fills 1.6 s after the cut, and a
	// write slowed by a loaded machine does not overflow it before.
	s := start(t, cfg, st, Options{SampleBuffer: 64, WriteEvery: 50 * time.Millisecond})
	go func() {
		for range s.events {
		}
	}()
	srv := httptest.NewServer(web.New(st, s.svc, web.Options{}))
	defer srv.Close()
	dropped := func() float64 {
		v, ok := testutil.Metric(t, srv.URL+"/metrics", "gsq_monitor_samples_dropped_total")
		if !ok {
			t.Fatal("/metrics has no gsq_monitor_samples_dropped_total")
		}
		return v
	}
	written := func() int { // s0's samples in the store; -1 when it does not answer
		pts, err := st.History(context.Background(), "s0", time.Now().Add(-time.Hour), time.Now().Add(time.Minute), time.Second)
		if err != nil {
			return -1
		}
		n := 0
		for _, p := range pts {
			n += p.Samples
		}
		return n
	}
	waitUntil := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(testutil.Bound); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within %s", what, testutil.Bound)
			}
		}
	}

	waitUntil("the first samples written", func() bool { return written() > 0 })
	if d := dropped(); d != 0 {
		t.Fatalf("%v samples dropped while PostgreSQL answered", d)
	}
	link.Cut(true)
	waitUntil("samples dropped", func() bool { return dropped() > 0 })
	before := dropped()
	waitUntil("more samples dropped", func() bool { return dropped() > before })

	// The count before the cut is read once PostgreSQL answers again.
	link.Cut(false)
	was := -1
	waitUntil("PostgreSQL to answer", func() bool { was = written(); return was >= 0 })
	waitUntil("writing to resume", func() bool { return written() > was })
}
