package web

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/gsq-project/gsq/internal/textenc"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// configLabelNames returns the config label keys used by any server,
// sorted, and the Prometheus label name of each: characters a label name
// cannot have become '_', and a name that would collide with one of ours
// gets the prefix "label_". Servers without a key get an empty value,
// which Prometheus treats as no label.
func configLabelNames(states []monitor.ServerState) (keys, names []string) {
	for i := range states {
		for k := range states[i].Labels {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	taken := make(map[string]bool, len(keys))
	out := keys[:0:0]
	for _, k := range keys {
		n := sanitizeLabelName(k)
		if reservedLabels[n] || strings.HasPrefix(n, "__") {
			n = labelPrefixCollision + strings.TrimLeft(n, "_")
		}
		if taken[n] {
			continue // two keys that differ only in invalid characters: the first wins
		}
		taken[n] = true
		out = append(out, k)
		names = append(names, n)
	}
	return out, names
}

func sanitizeLabelName(k string) string {
	b := []byte(k)
	for i, c := range b {
		ok := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && '0' <= c && c <= '9'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// labelValue makes a server-supplied string a valid label value: valid
// UTF-8 (a scrape rejects anything else) of at most 256 bytes, with no
// control character (each becomes U+FFFD, as in the CSV export): the
// exposition escapes only the line break, and an escape sequence or a
// carriage return would act in a terminal or a log that shows it.
func labelValue(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = textenc.ReplaceControls(s, utf8.RuneError)
	if len(s) > maxLabelValueBytes {
		cut := maxLabelValueBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

func optLabel(s *string) string {
	if s == nil {
		return ""
	}
	return labelValue(*s)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func unixSeconds(t time.Time) float64 {
	return float64(t.UnixNano()) / 1e9
}

// newMetricsHandler serves /metrics: every server's series, the
// monitor's own counters, and the Go runtime's and the process's, from a
// registry of the client library.
func newMetricsHandler(st store.Store, live Live, hub *hub, players bool, more ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&monitorCollector{store: st, live: live, hub: hub},
	)
	reg.MustRegister(more...)
	if c, ok := live.(prometheus.Collector); ok {
		reg.MustRegister(c) // a fleet's worker or API node: its own series
	}
	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		own, err := reg.Gather()
		servers, serr := gatherServers(live, players)
		fams := append(own, servers...)
		slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
		return fams, errors.Join(err, serr)
	})
	return promhttp.HandlerFor(gather, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}

// The monitor's own series: what it lost, and what waits.
var (
	descAlerts = prometheus.NewDesc("gsq_alerts_total",
		"Alerts by webhook and what became of them: sent (the receiver took it), failed (given up on after its attempts, or refused), dropped (its queue was full, or the monitor stopped first without a store to keep it), kept (left in the store when the monitor stopped, sent at the next start), silenced (a maintenance window held it back). Each failure and drop is logged too.",
		[]string{"webhook", "result"}, nil)
	descAlertMessages = prometheus.NewDesc("gsq_alert_messages_total",
		"Messages a webhook's receiver took: one alert, or a group of alerts that came together.", []string{"webhook"}, nil)
	descAlertThrottled = prometheus.NewDesc("gsq_alert_throttled_total",
		"429 answers a webhook's receiver gave (sent too much): the message waits its Retry-After and goes again.", []string{"webhook"}, nil)
	descAlertsQueued = prometheus.NewDesc("gsq_alerts_queued",
		"Alerts waiting for their webhook.", []string{"webhook"}, nil)
	descSubscribersDropped = prometheus.NewDesc("gsq_event_subscribers_dropped_total",
		"Event subscribers the monitor cut off because they fell a whole buffer behind: they subscribe again and reload; no event is skipped silently.", nil, nil)
	descStoreRefused = prometheus.NewDesc("gsq_store_refused_total",
		"What the history store refused to keep of a server because the server went over its hourly budget (sessions opened, bytes of new player names, map and version changes; docs/store.md): a hostile or broken server cannot grow the database without bound.",
		[]string{"server", "kind"}, nil)
	descSamplesDropped = prometheus.NewDesc("gsq_monitor_samples_dropped_total",
		"Samples the monitor dropped, oldest first, because the history store could not take them (PostgreSQL unreachable, say) while its bounded queue of samples waiting to be written was full. Each drop is logged too; writing resumes by itself.", nil, nil)
	descStreamsDropped = prometheus.NewDesc("gsq_live_streams_dropped_total",
		"Live streams (/api/v1/events) closed because their client, or the monitor's subscription behind them, fell a whole buffer behind: the page reconnects and reloads.", nil, nil)
)

// monitorCollector collects the monitor's own counters.
type monitorCollector struct {
	store store.Store
	live  Live
	hub   *hub
}

// Describe sends the descriptions of the monitor's own series.
func (c *monitorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descAlerts, descAlertMessages, descAlertThrottled, descAlertsQueued, descSubscribersDropped, descStreamsDropped, descStoreRefused, descSamplesDropped} {
		ch <- d
	}
}

// Collect sends the monitor's own series.
func (c *monitorCollector) Collect(ch chan<- prometheus.Metric) {
	for _, w := range c.live.AlertStats() {
		name := labelValue(w.Webhook)
		for _, r := range []struct {
			result string
			n      uint64
		}{{"sent", w.Sent}, {"failed", w.Failed}, {"dropped", w.Dropped}, {"kept", w.Kept}, {"silenced", w.Silenced}} {
			ch <- prometheus.MustNewConstMetric(descAlerts, prometheus.CounterValue, float64(r.n), name, r.result)
		}
		ch <- prometheus.MustNewConstMetric(descAlertMessages, prometheus.CounterValue, float64(w.Messages), name)
		ch <- prometheus.MustNewConstMetric(descAlertThrottled, prometheus.CounterValue, float64(w.Throttled), name)
		ch <- prometheus.MustNewConstMetric(descAlertsQueued, prometheus.GaugeValue, float64(w.Queued), name)
	}
	ch <- prometheus.MustNewConstMetric(descSubscribersDropped, prometheus.CounterValue, float64(c.live.SubscribersDropped()))
	ch <- prometheus.MustNewConstMetric(descStreamsDropped, prometheus.CounterValue, float64(c.hub.dropped.Load()))
	if d, ok := c.live.(interface{ SamplesDropped() uint64 }); ok {
		ch <- prometheus.MustNewConstMetric(descSamplesDropped, prometheus.CounterValue, float64(d.SamplesDropped()))
	}
	if c.store == nil {
		return
	}
	for server, r := range c.store.Refused() {
		name := labelValue(server)
		ch <- prometheus.MustNewConstMetric(descStoreRefused, prometheus.CounterValue, float64(r.Sessions), name, "sessions")
		ch <- prometheus.MustNewConstMetric(descStoreRefused, prometheus.CounterValue, float64(r.Names), name, "names")
		ch <- prometheus.MustNewConstMetric(descStoreRefused, prometheus.CounterValue, float64(r.Changes), name, "changes")
	}
}
