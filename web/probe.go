package web

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/gsq-project/gsq/monitor"
)

// probeMargin is what /probe keeps of the scrape's timeout for itself, so
// that its answer reaches Prometheus before the scrape gives up: a probe
// that outlives the scrape makes the series vanish instead of reading 0.
const probeMargin = 500 * time.Millisecond

// maxProbeTimeout caps the timeout a scrape header can ask for.
const maxProbeTimeout = 2 * time.Minute

// probe serves /probe?target=HOST:PORT&protocol=a2s|ogp the way Prometheus'
// blackbox_exporter does: it queries the target once, now, and answers 200
// with probe_success 0 or 1, probe_duration_seconds and the target's
// gameserver_ gauges, from a registry made for this request only.
func (h *Handler) probe(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	target := q.Get("target")
	if err := validTarget(target); err != nil {
		http.Error(w, "probe: "+err.Error(), http.StatusBadRequest)
		return
	}
	protocol := q.Get("protocol")
	if protocol == "" {
		protocol = "a2s"
	}
	if protocol != "a2s" && protocol != "ogp" {
		http.Error(w, fmt.Sprintf("probe: unknown protocol %q (want a2s or ogp)", protocol), http.StatusBadRequest)
		return
	}
	timeout, err := probeTimeout(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"), h.opts.ProbeTimeout)
	if err != nil {
		http.Error(w, "probe: "+err.Error(), http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout + 10*time.Second))

	select {
	case h.probes <- struct{}{}:
	default:
		http.Error(w, fmt.Sprintf("probe: %d probes are running; try again later", cap(h.probes)), http.StatusServiceUnavailable)
		return
	}
	type outcome struct {
		state monitor.ServerState
		err   error
	}
	done := make(chan outcome, 1)
	start := time.Now()
	go func() {
		// The slot is freed when the probe ends, not when the request does,
		// so that probes which ignore their deadline cannot pile up.
		defer func() { <-h.probes }()
		s, err := h.live.Probe(ctx, target, protocol)
		done <- outcome{s, err}
	}()
	var res outcome
	select {
	case res = <-done:
	case <-ctx.Done():
		res.err = ctx.Err()
	}
	elapsed := time.Since(start)
	success := res.err == nil && res.state.Status == monitor.StatusUp

	// Built for this request only, as blackbox_exporter's fresh registry
	// per probe: nothing from another probe or from the monitor leaks in.
	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		e := newExposition()
		e.add(famProbeSuccess, boolFloat(success), nil)
		e.add(famProbeDuration, elapsed.Seconds(), nil)
		s := res.state
		if !success {
			s.Status = monitor.StatusDown
		}
		e.serverGauges(&s, nil)
		return e.families(), nil
	})
	promhttp.HandlerFor(gather, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// validTarget checks a probe target: HOST:PORT with a port from 1 to
// 65535 and a host name of at most 253 bytes.
func validTarget(target string) error {
	if target == "" {
		return fmt.Errorf("missing target (want target=HOST:PORT)")
	}
	host, port, err := net.SplitHostPort(target)
	if err != nil {
		return fmt.Errorf("target %q: want HOST:PORT", target)
	}
	if host == "" || len(host) > 253 {
		return fmt.Errorf("target %q: bad host", target)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("target %q: port must be 1 to 65535", target)
	}
	return nil
}

// probeTimeout is the header's scrape timeout less probeMargin (but at
// least half of it), or def without the header.
func probeTimeout(header string, def time.Duration) (time.Duration, error) {
	if header == "" {
		return def, nil
	}
	secs, err := strconv.ParseFloat(header, 64)
	if err != nil || !(secs > 0) {
		return 0, fmt.Errorf("X-Prometheus-Scrape-Timeout-Seconds %q: want a positive number of seconds", header)
	}
	scrape := maxProbeTimeout
	if secs < scrape.Seconds() {
		scrape = time.Duration(secs * float64(time.Second))
	}
	return max(scrape-probeMargin, scrape/2), nil
}
