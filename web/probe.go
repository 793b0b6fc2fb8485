package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/protocol"
)

// probeMargin is what /probe keeps of the scrape's timeout for itself, so
// that its answer reaches Prometheus before the scrape gives up: a probe
// that outlives the scrape makes the series vanish instead of reading 0.
const probeMargin = 500 * time.Millisecond

// maxProbeTimeout caps the timeout a scrape header can ask for.
const maxProbeTimeout = 2 * time.Minute

// probe serves /probe?target=HOST:PORT&protocol=NAME (a protocol of the
// registry in package protocol; its default when absent) the way
// Prometheus' blackbox_exporter does: it queries the target once, now, and answers 200
// with probe_success 0 or 1, probe_duration_seconds and the target's
// gameserver_ gauges, from a registry made for this request only.
func (h *Handler) probe(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	target := q.Get("target")
	if err := validTarget(target); err != nil {
		http.Error(w, "probe: "+err.Error(), http.StatusBadRequest)
		return
	}
	proto := protocol.Default
	if name := q.Get("protocol"); name != "" {
		p, err := protocol.Lookup(name)
		if err != nil {
			http.Error(w, "probe: "+err.Error(), http.StatusBadRequest)
			return
		}
		proto = p
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
		s, err := h.live.Probe(ctx, target, proto.Name)
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
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectorFunc(func(ch chan<- prometheus.Metric) {
		e := newExposition(toChannel(ch), nil)
		e.add(famProbeSuccess, boolFloat(success), nil)
		e.add(famProbeDuration, elapsed.Seconds(), nil)
		s := res.state
		if !success {
			s.Status = monitor.StatusDown
		}
		e.serverGauges(&s, nil)
	}))
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// validTarget checks a probe target: HOST:PORT as every gsq command reads
// an address (internal/hostport), the port given.
func validTarget(target string) error {
	if target == "" {
		return fmt.Errorf("missing target (want target=HOST:PORT)")
	}
	if _, err := hostport.Parse(target, 0); err != nil {
		return fmt.Errorf("target %q: %v (want HOST:PORT)", target, err)
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
