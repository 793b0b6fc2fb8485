package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gsq-project/gsq/monitor"
)

// fleet returns n server states: most up, every 10th down, every 50th
// pending, each with two config labels.
func fleet(n int) []monitor.ServerState {
	states := make([]monitor.ServerState, n)
	for i := range states {
		name := fmt.Sprintf("srv-%05d", i)
		var s monitor.ServerState
		switch {
		case i%50 == 0:
			s = monitor.ServerState{Name: name, Protocol: "a2s", Status: monitor.StatusPending}
		case i%10 == 0:
			s = downState(name)
		default:
			s = upState(name, i%33, 32, fmt.Sprintf("map_%d", i%20))
		}
		s.Target = fmt.Sprintf("127.0.%d.%d:27015", i/250, i%250)
		s.Labels = map[string]string{"region": []string{"eu", "us", "asia"}[i%3], "game": "cs2"}
		states[i] = s
	}
	return states
}

// benchGet serves path from a handler over n servers, b.N times, in
// process (no socket, so that the figure is the handler's own).
func benchGet(b *testing.B, n int, path, acceptEncoding string) {
	live := newTestLive()
	live.states = fleet(n)
	h := New(newTestStore(b), live, Options{})
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		b.Fatalf("%s: %d", path, rec.Code)
	}
	b.ReportMetric(float64(rec.Body.Len()), "bytes/response")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := discardWriter{header: http.Header{}}
		h.ServeHTTP(&w, req)
	}
}

// discardWriter is a ResponseWriter that keeps nothing.
type discardWriter struct {
	header http.Header
}

func (w *discardWriter) Header() http.Header         { return w.header }
func (w *discardWriter) Write(b []byte) (int, error) { return io.Discard.Write(b) }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkMetrics10k renders /metrics for 10,000 servers (issue: under
// 1 s).
func BenchmarkMetrics10k(b *testing.B) { benchGet(b, 10000, "/metrics", "") }

// BenchmarkMetrics10kGzip is the same compressed, as Prometheus asks.
func BenchmarkMetrics10kGzip(b *testing.B) { benchGet(b, 10000, "/metrics", "gzip") }

// BenchmarkServersAPI10k answers /api/v1/servers for 10,000 servers
// (issue: under 100 ms).
func BenchmarkServersAPI10k(b *testing.B) { benchGet(b, 10000, "/api/v1/servers", "") }
