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

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
)

// The metric names follow the unified set of the game-server exporters:
// one family per figure, the server's identity in labels, and the strings
// that change (map, version, the announced name) only on gameserver_info,
// so that a map change does not start new numeric series.
const (
	nameUp               = "gameserver_up"
	namePlayers          = "gameserver_players"
	namePlayersMax       = "gameserver_players_max"
	nameBots             = "gameserver_bots"
	nameQueryDuration    = "gameserver_query_duration_seconds"
	namePing             = "gameserver_ping_seconds"
	nameInfo             = "gameserver_info"
	nameQueries          = "gameserver_queries_total"
	nameLastSuccess      = "gameserver_last_success_timestamp_seconds"
	nameFailures         = "gameserver_consecutive_failures"
	namePlayerConnected  = "gameserver_player_connected_seconds"
	namePlayerScore      = "gameserver_player_score"
	maxLabelValueBytes   = 256
	labelPrefixCollision = "label_"
)

// queryResults are the outcomes gameserver_queries_total always has a
// series for, so that rate() works from the first scrape.
var queryResults = []string{"ok", "timeout", "unreachable", "error"}

// identityLabels name a monitored server on every series.
var identityLabels = []string{"server", "target", "protocol"}

// infoLabels are the strings only gameserver_info carries.
var infoLabels = []string{"name", "map", "game", "version"}

// reservedLabels are label names a config label may not take.
var reservedLabels = map[string]bool{
	"server": true, "target": true, "protocol": true, "result": true, "player": true,
	"name": true, "map": true, "game": true, "version": true, "job": true, "instance": true,
}

// descs are the descriptors of one exposition: their variable labels are
// the base labels (the identity and the config's labels on /metrics, none
// on /probe) plus each family's own.
type descs struct {
	up, players, playersMax, bots, queryDuration, ping, info *prometheus.Desc
	queries, lastSuccess, failures                           *prometheus.Desc
	playerConnected, playerScore                             *prometheus.Desc
}

func newDescs(base []string) *descs {
	with := func(extra ...string) []string { return append(slices.Clip(base), extra...) }
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &descs{
		up:              d(nameUp, "Whether the game server is up (1) or not (0), after the monitor's down threshold.", base),
		players:         d(namePlayers, "Players online at the last successful poll.", base),
		playersMax:      d(namePlayersMax, "Player slots the server announces.", base),
		bots:            d(nameBots, "Bots online at the last successful poll.", base),
		queryDuration:   d(nameQueryDuration, "How long the last poll took, failed or not.", base),
		ping:            d(namePing, "Round-trip time of the last successful poll.", base),
		info:            d(nameInfo, "What the server announces, as labels; the value is always 1.", with(infoLabels...)),
		queries:         d(nameQueries, "Polls by outcome.", with("result")),
		lastSuccess:     d(nameLastSuccess, "When the last successful poll ended, in seconds since the Unix epoch.", base),
		failures:        d(nameFailures, "Polls failed in a row since the last success.", base),
		playerConnected: d(namePlayerConnected, "How long a player has been connected, as the server reports it.", with("player")),
		playerScore:     d(namePlayerScore, "A player's score, as the server reports it.", with("player")),
	}
}

// serverCollector exposes every monitored server from the monitor's
// cached state: a scrape never queries a game server.
type serverCollector struct {
	live    Live
	players bool
}

// Describe sends nothing: the config's labels, and so the label names,
// can change on a reload, which makes this an unchecked collector.
func (c *serverCollector) Describe(chan<- *prometheus.Desc) {}

// Collect sends the metrics of every server.
func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	states := c.live.Servers()
	keys, names := configLabelNames(states)
	d := newDescs(append(slices.Clip(identityLabels), names...))
	values := make([]string, 0, len(identityLabels)+len(keys))
	emit := emitter(ch)
	for i := range states {
		s := &states[i]
		if s.LastPoll.IsZero() {
			continue // not polled yet: nothing true to say
		}
		values = append(values[:0], labelValue(s.Name), labelValue(s.Target), labelValue(s.Protocol))
		for _, k := range keys {
			values = append(values, labelValue(s.Labels[k]))
		}
		serverGauges(emit, d, s, values)
		emit(d.failures, prometheus.GaugeValue, float64(s.ConsecutiveFailures), values...)
		if !s.LastSuccess.IsZero() {
			emit(d.lastSuccess, prometheus.GaugeValue, unixSeconds(s.LastSuccess), values...)
		}
		for _, r := range queryResults {
			emit(d.queries, prometheus.CounterValue, float64(s.Queries[r]), append(values, r)...)
		}
		for r, n := range s.Queries {
			if !slices.Contains(queryResults, r) {
				emit(d.queries, prometheus.CounterValue, float64(n), append(values, labelValue(r))...)
			}
		}
		if c.players && s.Status == monitor.StatusUp {
			playerMetrics(emit, d, s, values)
		}
	}
}

// serverGauges emits the gauges /metrics and /probe share: up, the
// durations, the player counts and info. Counts are emitted only while
// the server is up, so that a dead server's last count does not linger.
func serverGauges(emit emitFunc, d *descs, s *monitor.ServerState, values []string) {
	up := s.Status == monitor.StatusUp
	emit(d.up, prometheus.GaugeValue, boolFloat(up), values...)
	if s.QueryDuration > 0 {
		emit(d.queryDuration, prometheus.GaugeValue, s.QueryDuration.Seconds(), values...)
	}
	if !up {
		return
	}
	if s.Ping > 0 {
		emit(d.ping, prometheus.GaugeValue, s.Ping.Seconds(), values...)
	}
	sum := &s.Summary
	for _, g := range []struct {
		desc *prometheus.Desc
		v    *int
	}{{d.players, sum.Players}, {d.playersMax, sum.MaxPlayers}, {d.bots, sum.Bots}} {
		if g.v != nil {
			emit(g.desc, prometheus.GaugeValue, float64(*g.v), values...)
		}
	}
	if summaryHasInfo(sum) {
		emit(d.info, prometheus.GaugeValue, 1,
			append(values, optLabel(sum.Name), optLabel(sum.Map), optLabel(sum.Game), optLabel(sum.Version))...)
	}
}

// playerMetrics emits the per-player series. Two players of the same name
// would make two series with the same labels, which a scrape rejects: the
// first of them (the server's order) is kept.
func playerMetrics(emit emitFunc, d *descs, s *monitor.ServerState, values []string) {
	seen := make(map[string]bool, len(s.Players))
	for _, p := range s.Players {
		name := labelValue(p.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		v := append(slices.Clip(values), name)
		emit(d.playerConnected, prometheus.GaugeValue, p.Duration.Seconds(), v...)
		emit(d.playerScore, prometheus.GaugeValue, float64(p.Score), v...)
	}
}

// emitFunc sends one constant metric.
type emitFunc func(desc *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string)

// emitter returns an emitFunc that sends to ch. A metric that cannot be
// made (which the label sanitising should prevent) is sent as an invalid
// metric, which the scrape reports, rather than dropped in silence.
func emitter(ch chan<- prometheus.Metric) emitFunc {
	return func(desc *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		m, err := prometheus.NewConstMetric(desc, t, v, labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(desc, err)
		}
		ch <- m
	}
}

func summaryHasInfo(s *result.Summary) bool {
	return s.Name != nil || s.Map != nil || s.Game != nil || s.Version != nil
}

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
// runtime's and the process's.
func newMetricsHandler(live Live, players bool) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		&serverCollector{live: live, players: players},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          reg, // counts its own errors in promhttp_metric_handler_errors_total
		EnableOpenMetrics: true,
	})
}
