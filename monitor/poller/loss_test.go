package poller

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/web"
)

// TestLossPolicy checks the one loss policy of the live events, end to
// end: no event is skipped silently. A subscriber that falls a buffer
// behind is cut off (its channel closes after exactly the events it
// holds, numbered without a gap), logged and counted on /metrics; a
// page's live stream over the web handler numbers its events without a
// gap too, so that a client can tell; the web handler's own drops are
// tested in package web.
func TestLossPolicy(t *testing.T) {
	t.Parallel()
	const n, buffer = 4, 32
	fleet, err := sim.StartFleetAnywhere(sim.FleetConfig{N: n})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	var targets []string
	for i := range n {
		targets = append(targets, fmt.Sprintf("s%d=%s", i, fleet.Addr(i)))
	}
	cfg := loadConfig(t, "", targets...)
	fast(cfg, 100*time.Millisecond)
	var mu sync.Mutex
	var logs []string
	s := start(t, cfg, openStore(t), Options{SubscriberBuffer: buffer, Logf: func(f string, a ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	go func() { // the test helper's own subscriber reads along
		for range s.events {
		}
	}()
	srv := httptest.NewServer(web.New(openStore(t), s.svc, web.Options{}))
	defer srv.Close()

	// A page reads its live stream; a reader that never reads subscribes.
	req, _ := http.NewRequestWithContext(testutil.Context(t), http.MethodGet, srv.URL+"/api/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	stalled := s.svc.Subscribe(testutil.Context(t))

	// The stream's ids follow one another while the stalled reader falls
	// behind and is cut off.
	ids := bufio.NewScanner(resp.Body)
	var last uint64
	for read := 0; read < buffer || s.svc.SubscribersDropped() == 0; {
		if read > 100*buffer {
			t.Fatalf("%d events read, and the stalled subscriber was never cut off", read)
		}
		if !ids.Scan() {
			t.Fatalf("the stream ended after %d events: %v", read, ids.Err())
		}
		id, ok := strings.CutPrefix(ids.Text(), "id: ")
		if !ok {
			continue
		}
		seq, err := strconv.ParseUint(id, 10, 64)
		if err != nil || last != 0 && seq != last+1 {
			t.Fatalf("event id %q after %d: a gap", id, last)
		}
		last = seq
		read++
	}
	if got := s.svc.SubscribersDropped(); got != 1 {
		t.Errorf("%d subscribers cut off, want 1", got)
	}
	var got []uint64
	for closed := false; !closed; {
		select {
		case ev, ok := <-stalled:
			if closed = !ok; ok {
				got = append(got, ev.Seq)
			}
		case <-time.After(testutil.Bound):
			t.Fatalf("the cut subscriber's channel is still open after %d events", len(got))
		}
	}
	if len(got) != buffer {
		t.Errorf("the cut subscriber got %d events before its channel closed, want %d", len(got), buffer)
	}
	for i := 1; i < len(got); i++ {
		if got[i] != got[i-1]+1 {
			t.Errorf("the cut subscriber's events skip from %d to %d", got[i-1], got[i])
		}
	}
	mu.Lock()
	text := strings.Join(logs, "\n")
	mu.Unlock()
	if !strings.Contains(text, fmt.Sprintf("an event reader fell %d events behind and was cut off", buffer)) {
		t.Errorf("the cut is not logged:\n%s", text)
	}
	_, _, metrics := testutil.Get(t, srv.URL+"/metrics", "")
	if !strings.Contains(metrics, "\ngsq_event_subscribers_dropped_total 1\n") {
		t.Errorf("/metrics does not count the cut:\n%s", metrics)
	}
}
