package web

import (
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/gsq-project/gsq/monitor"
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
// UTF-8 (a scrape rejects anything else) of at most 256 bytes.
func labelValue(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
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

// newMetricsHandler serves /metrics: every server's metrics, and the Go
// runtime's and the process's from a registry of the client library.
func newMetricsHandler(live Live, players bool) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	gather := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		own, err := reg.Gather()
		fams := append(own, gatherServers(live, players)...)
		slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
		return fams, err
	})
	return promhttp.HandlerFor(gather, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		EnableOpenMetrics: true,
	})
}
