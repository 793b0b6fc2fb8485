package web

import (
	"errors"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/gsq-project/gsq/monitor"
)

// family is one metric family of the exposition.
type family int

// The families. The names follow the unified set of the game-server
// exporters: one family per figure, the server's identity in labels, and
// the strings that change (map, version, the announced name) only on
// gameserver_info, so that a map change does not start new numeric
// series.
const (
	famUp family = iota
	famPlayers
	famPlayersMax
	famBots
	famQueryDuration
	famPing
	famInfo
	famQueries
	famLastSuccess
	famFailures
	famPlayerConnected
	famPlayerScore
	famProbeSuccess
	famProbeDuration
	famCount
)

var familyDefs = [famCount]struct {
	name, help string
	typ        prometheus.ValueType
	labels     []string // besides the server's own labels
}{
	famUp:              {"gameserver_up", "Whether the game server is up (1) or not (0), after the monitor's down threshold.", prometheus.GaugeValue, nil},
	famPlayers:         {"gameserver_players", "Players online at the last successful poll.", prometheus.GaugeValue, nil},
	famPlayersMax:      {"gameserver_players_max", "Player slots the server announces.", prometheus.GaugeValue, nil},
	famBots:            {"gameserver_bots", "Bots online at the last successful poll.", prometheus.GaugeValue, nil},
	famQueryDuration:   {"gameserver_query_duration_seconds", "How long the last poll took, failed or not.", prometheus.GaugeValue, nil},
	famPing:            {"gameserver_ping_seconds", "Round-trip time of the last successful poll.", prometheus.GaugeValue, nil},
	famInfo:            {"gameserver_info", "What the server announces, as labels; the value is always 1.", prometheus.GaugeValue, infoLabels},
	famQueries:         {"gameserver_queries_total", "Polls by outcome.", prometheus.CounterValue, []string{"result"}},
	famLastSuccess:     {"gameserver_last_success_timestamp_seconds", "When the last successful poll ended, in seconds since the Unix epoch.", prometheus.GaugeValue, nil},
	famFailures:        {"gameserver_consecutive_failures", "Polls failed in a row since the last success.", prometheus.GaugeValue, nil},
	famPlayerConnected: {"gameserver_player_connected_seconds", "How long a player has been connected, as the server reports it.", prometheus.GaugeValue, []string{"player"}},
	famPlayerScore:     {"gameserver_player_score", "A player's score, as the server reports it.", prometheus.GaugeValue, []string{"player"}},
	famProbeSuccess:    {"probe_success", "Whether the game server answered (1) or not (0).", prometheus.GaugeValue, nil},
	famProbeDuration:   {"probe_duration_seconds", "How long the probe took.", prometheus.GaugeValue, nil},
}

// infoLabels are gameserver_info's labels.
var infoLabels = []string{"name", "map", "game", "version"}

// Limits on what a game server or the config puts in labels.
const (
	maxLabelValueBytes   = 256      // a label value taken from a game server
	labelPrefixCollision = "label_" // prefixed to a config label named like one of ours
)

// queryResults are the outcomes gameserver_queries_total always has a
// series for, so that rate() works from the first scrape.
var queryResults = []string{"ok", "timeout", "unreachable", "error"}

// identityLabels name a monitored server on every series.
var identityLabels = []string{"server", "target", "protocol"}

// reservedLabels are label names a config label may not take: ours, and
// those Prometheus sets on its own.
var reservedLabels = map[string]bool{
	"server": true, "target": true, "protocol": true, "result": true, "player": true,
	"name": true, "map": true, "game": true, "version": true, "job": true, "instance": true,
}

// collectorFunc is a prometheus.Collector that collects what its
// function sends, on each scrape. It describes nothing: it is an
// unchecked collector, since the label names of the servers' series
// follow the config, which a reload changes.
type collectorFunc func(ch chan<- prometheus.Metric)

// Describe describes nothing: see collectorFunc.
func (collectorFunc) Describe(chan<- *prometheus.Desc) {}

// Collect sends what the function sends.
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

// exposition makes the series of one scrape, every family with the same
// server labels first (base, which may be none: /probe's), and hands
// each to emit.
type exposition struct {
	emit  func(f family, m prometheus.Metric)
	base  []string // the names of the server labels
	descs [famCount]*prometheus.Desc
}

// newExposition makes the families' descriptions for servers labelled
// with base.
func newExposition(emit func(family, prometheus.Metric), base []string) *exposition {
	e := &exposition{emit: emit, base: base}
	for i := range e.descs {
		d := &familyDefs[i]
		e.descs[i] = prometheus.NewDesc(d.name, d.help, slices.Concat(base, d.labels), nil)
	}
	return e
}

// toChannel is an exposition's emit for a Collector: it sends each
// series to ch.
func toChannel(ch chan<- prometheus.Metric) func(family, prometheus.Metric) {
	return func(_ family, m prometheus.Metric) { ch <- m }
}

// labels returns a server's label pairs, values in the order of the base
// names, sorted by name as a Metric writes them: every series of the
// server shares them.
func (e *exposition) labels(values ...string) []*dto.LabelPair {
	pairs := make([]*dto.LabelPair, len(values))
	for i := range values {
		pairs[i] = &dto.LabelPair{Name: &e.base[i], Value: &values[i]}
	}
	slices.SortFunc(pairs, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	return pairs
}

// add makes a series of family f: the server's label pairs, and values
// of f's own labels.
func (e *exposition) add(f family, v float64, server []*dto.LabelPair, more ...string) {
	d := &familyDefs[f]
	labels := server
	if len(more) > 0 {
		labels = slices.Clone(server)
		for i := range more {
			labels = append(labels, &dto.LabelPair{Name: &d.labels[i], Value: &more[i]})
		}
		slices.SortFunc(labels, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	}
	e.emit(f, &serverMetric{desc: e.descs[f], typ: d.typ, value: v, labels: labels})
}

// serverMetric is one series of a server: a constant value, as
// MustNewConstMetric makes, but with label pairs shared by all the
// server's series. MustNewConstMetric makes the pairs anew for each
// series: for 10,000 servers, 130,000 series of six labels, that is six
// times the allocations of the scrape (BenchmarkMetrics10k).
type serverMetric struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	value  float64
	labels []*dto.LabelPair // sorted by name; shared, never changed
}

// Desc returns the family's description.
func (m *serverMetric) Desc() *prometheus.Desc { return m.desc }

// Write writes the series.
func (m *serverMetric) Write(out *dto.Metric) error {
	out.Label = m.labels
	v := m.value
	if m.typ == prometheus.CounterValue {
		out.Counter = &dto.Counter{Value: &v}
	} else {
		out.Gauge = &dto.Gauge{Value: &v}
	}
	return nil
}

// serverGauges sends the gauges /metrics and /probe share: up, the
// durations, the player counts and info. Counts are sent only while the
// server is up, so that a dead server's last count does not linger.
func (e *exposition) serverGauges(s *monitor.ServerState, base []*dto.LabelPair) {
	up := s.Status == monitor.StatusUp
	e.add(famUp, boolFloat(up), base)
	if s.QueryDuration > 0 {
		e.add(famQueryDuration, s.QueryDuration.Seconds(), base)
	}
	if !up {
		return
	}
	if s.Ping > 0 {
		e.add(famPing, s.Ping.Seconds(), base)
	}
	sum := &s.Summary
	for _, g := range []struct {
		f family
		v *int
	}{{famPlayers, sum.Players}, {famPlayersMax, sum.MaxPlayers}, {famBots, sum.Bots}} {
		if g.v != nil {
			e.add(g.f, float64(*g.v), base)
		}
	}
	info := []*string{sum.Name, sum.Map, sum.Game, sum.Version}
	if slices.ContainsFunc(info, func(p *string) bool { return p != nil }) {
		values := make([]string, len(info))
		for i, v := range info {
			values[i] = optLabel(v)
		}
		e.add(famInfo, 1, base, values...)
	}
}

// monitored sends every series of a monitored server: the shared gauges,
// and the poll counters and times that only the monitor has.
func (e *exposition) monitored(s *monitor.ServerState, base []*dto.LabelPair, players bool) {
	e.serverGauges(s, base)
	e.add(famFailures, float64(s.ConsecutiveFailures), base)
	if !s.LastSuccess.IsZero() {
		e.add(famLastSuccess, unixSeconds(s.LastSuccess), base)
	}
	for _, r := range queryResults {
		e.add(famQueries, float64(s.Queries[r]), base, r)
	}
	for r, n := range s.Queries {
		if !slices.Contains(queryResults, r) {
			e.add(famQueries, float64(n), base, labelValue(r))
		}
	}
	if players && s.Status == monitor.StatusUp {
		e.players(s, base)
	}
}

// players sends the per-player series. Two players of the same name
// would make two series with the same labels, which a scrape rejects:
// the first of them (in the server's order) is kept.
func (e *exposition) players(s *monitor.ServerState, base []*dto.LabelPair) {
	seen := make(map[string]bool, len(s.Players))
	for _, p := range s.Players {
		name := labelValue(p.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		e.add(famPlayerConnected, p.Duration.Seconds(), base, name)
		e.add(famPlayerScore, float64(p.Score), base, name)
	}
}

// gatherServers makes the series of every monitored server, from the
// monitor's cached state (a scrape never queries a game server), as
// metric families whose series are in server order. It is a Collector's
// work without a registry's Gather around it: with 10,000 servers, some
// 130,000 series, the registry's checks and its sort by label values
// cost ten times the rest of the scrape (BenchmarkMetrics10k), for an
// order no reader needs; the series are consistent by construction, one
// description per family. A server not polled yet has no series: there
// is nothing true to say of it yet.
func gatherServers(live Live, players bool) ([]*dto.MetricFamily, error) {
	var fams [famCount]*dto.MetricFamily
	var err error
	emit := func(f family, m prometheus.Metric) {
		if fams[f] == nil {
			d := &familyDefs[f]
			typ := dto.MetricType_GAUGE
			if d.typ == prometheus.CounterValue {
				typ = dto.MetricType_COUNTER
			}
			fams[f] = &dto.MetricFamily{Name: &d.name, Help: &d.help, Type: &typ}
		}
		pb := &dto.Metric{}
		err = errors.Join(err, m.Write(pb))
		fams[f].Metric = append(fams[f].Metric, pb)
	}
	states := live.Servers()
	keys, names := configLabelNames(states)
	e := newExposition(emit, slices.Concat(identityLabels, names))
	for i := range states {
		s := &states[i]
		if s.LastPoll.IsZero() {
			continue
		}
		values := make([]string, 0, len(identityLabels)+len(keys))
		values = append(values, labelValue(s.Name), labelValue(s.Target), labelValue(s.Protocol))
		for _, k := range keys {
			values = append(values, labelValue(s.Labels[k]))
		}
		e.monitored(s, e.labels(values...), players)
	}
	var out []*dto.MetricFamily
	for _, f := range fams {
		if f != nil {
			out = append(out, f)
		}
	}
	return out, err
}
