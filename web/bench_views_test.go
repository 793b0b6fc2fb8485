package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// BenchmarkViewsAPI10k answers the views' endpoints over 10,000 servers
// with labels, each of which had an incident in the last day (written
// through the store as the monitor writes them): the web layer's part
// (selectors, JSON) on top of the store's, which store's
// BenchmarkViews10k times on a year of history.
func BenchmarkViewsAPI10k(b *testing.B) {
	ctx := context.Background()
	states := fleet(10000)
	st := newTestStore(b)
	servers := make([]store.Server, len(states))
	for i, s := range states {
		servers[i] = store.Server{Name: s.Name, Target: s.Target, Protocol: "a2s", Labels: s.Labels}
	}
	if err := st.SyncServers(ctx, servers); err != nil {
		b.Fatal(err)
	}
	now := time.Now().Truncate(time.Second)
	for k, at := range []time.Time{now.Add(-20 * time.Hour), now.Add(-19 * time.Hour)} {
		round := make([]store.Sample, len(states))
		for i, s := range states {
			round[i] = store.Sample{Server: s.Name, Time: at.Add(time.Duration(i%600) * time.Second)}
			if k == 0 {
				round[i].Outage = &store.Outage{Since: round[i].Time.Add(-time.Minute), Cause: "timeout"}
			} else {
				round[i].Up, round[i].Recovered = true, true
			}
		}
		if err := st.Write(ctx, round); err != nil {
			b.Fatal(err)
		}
	}
	live := newTestLive()
	live.states = states
	cfg := &monitor.Config{StatusPage: &monitor.StatusPage{Path: "/status", Title: "t", Labels: map[string]string{"region": "eu"}}}
	h := New(st, live, Options{Config: func() *monitor.Config { return cfg }, Maintenance: &monitor.Maintenance{}})
	for _, path := range []string{
		"/api/v1/servers?label=region:eu",
		"/api/v1/incidents",
		"/api/v1/incidents?limit=1000",
		"/api/v1/incidents?label=region:eu",
		"/api/v1/servers/srv-04242/incidents",
		"/api/v1/maintenance",
		"/banner/srv-04242.svg",
	} {
		b.Run(path, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != 200 {
				b.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
			}
			b.ReportMetric(float64(rec.Body.Len()), "bytes/response")
			b.ReportAllocs()
			for b.Loop() {
				h.ServeHTTP(&discardWriter{header: http.Header{}}, req)
			}
		})
	}
	// The status page of the 3,334 servers labelled eu, built afresh
	// (it is kept 10 s otherwise).
	b.Run("/status", func(b *testing.B) {
		req := httptest.NewRequest(http.MethodGet, "/status", nil)
		b.ReportAllocs()
		for b.Loop() {
			h.statusMu.Lock()
			h.statusPage = nil
			h.statusMu.Unlock()
			w := &discardWriter{header: http.Header{}}
			h.ServeHTTP(w, req)
		}
	})
}
