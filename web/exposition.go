package web

import (
	"slices"
	"strings"

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
	typ        dto.MetricType
}{
	famUp:              {"gameserver_up", "Whether the game server is up (1) or not (0), after the monitor's down threshold.", dto.MetricType_GAUGE},
	famPlayers:         {"gameserver_players", "Players online at the last successful poll.", dto.MetricType_GAUGE},
	famPlayersMax:      {"gameserver_players_max", "Player slots the server announces.", dto.MetricType_GAUGE},
	famBots:            {"gameserver_bots", "Bots online at the last successful poll.", dto.MetricType_GAUGE},
	famQueryDuration:   {"gameserver_query_duration_seconds", "How long the last poll took, failed or not.", dto.MetricType_GAUGE},
	famPing:            {"gameserver_ping_seconds", "Round-trip time of the last successful poll.", dto.MetricType_GAUGE},
	famInfo:            {"gameserver_info", "What the server announces, as labels; the value is always 1.", dto.MetricType_GAUGE},
	famQueries:         {"gameserver_queries_total", "Polls by outcome.", dto.MetricType_COUNTER},
	famLastSuccess:     {"gameserver_last_success_timestamp_seconds", "When the last successful poll ended, in seconds since the Unix epoch.", dto.MetricType_GAUGE},
	famFailures:        {"gameserver_consecutive_failures", "Polls failed in a row since the last success.", dto.MetricType_GAUGE},
	famPlayerConnected: {"gameserver_player_connected_seconds", "How long a player has been connected, as the server reports it.", dto.MetricType_GAUGE},
	famPlayerScore:     {"gameserver_player_score", "A player's score, as the server reports it.", dto.MetricType_GAUGE},
	famProbeSuccess:    {"probe_success", "Whether the game server answered (1) or not (0).", dto.MetricType_GAUGE},
	famProbeDuration:   {"probe_duration_seconds", "How long the probe took.", dto.MetricType_GAUGE},
}

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

// Label names shared by every exposition, as the pointers dto wants.
var (
	labelResult  = ptrTo("result")
	labelPlayer  = ptrTo("player")
	labelInfo    = []*string{ptrTo("name"), ptrTo("map"), ptrTo("game"), ptrTo("version")}
	resultLabels = func() []*dto.LabelPair {
		out := make([]*dto.LabelPair, len(queryResults))
		for i, r := range queryResults {
			out[i] = &dto.LabelPair{Name: labelResult, Value: ptrTo(r)}
		}
		return out
	}()
)

func ptrTo[T any](v T) *T { return &v }

// exposition builds metric families straight as the client library's
// protobuf messages, which it then encodes. A scrape of 10,000 servers
// has some 130,000 series; built as constant metrics and gathered by a
// registry, most of a scrape went into sorting and checking them again.
// Series are added in server order; the families come out sorted by name.
type exposition struct {
	fams [famCount]*dto.MetricFamily
}

func newExposition() *exposition {
	e := &exposition{}
	for i := range e.fams {
		d := &familyDefs[i]
		e.fams[i] = &dto.MetricFamily{Name: &d.name, Help: &d.help, Type: ptrTo(d.typ)}
	}
	return e
}

// add adds a series. labels may be shared with other series: nothing
// changes them once added.
func (e *exposition) add(f family, v float64, labels []*dto.LabelPair) {
	m := &dto.Metric{Label: labels}
	if familyDefs[f].typ == dto.MetricType_COUNTER {
		m.Counter = &dto.Counter{Value: &v}
	} else {
		m.Gauge = &dto.Gauge{Value: &v}
	}
	e.fams[f].Metric = append(e.fams[f].Metric, m)
}

// families returns the families that have series, sorted by name.
func (e *exposition) families() []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, famCount)
	for _, f := range e.fams {
		if len(f.Metric) > 0 {
			out = append(out, f)
		}
	}
	slices.SortFunc(out, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return out
}

// withLabels returns base and more labels, in a new slice.
func withLabels(base []*dto.LabelPair, more ...*dto.LabelPair) []*dto.LabelPair {
	return append(slices.Clip(base), more...)
}

// serverGauges adds the gauges /metrics and /probe share: up, the
// durations, the player counts and info. Counts are added only while the
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
		pairs := make([]*dto.LabelPair, len(info))
		for i, v := range info {
			pairs[i] = &dto.LabelPair{Name: labelInfo[i], Value: ptrTo(optLabel(v))}
		}
		e.add(famInfo, 1, withLabels(base, pairs...))
	}
}

// monitored adds every series of a monitored server: the shared gauges,
// and the poll counters and times that only the monitor has.
func (e *exposition) monitored(s *monitor.ServerState, base []*dto.LabelPair, players bool) {
	e.serverGauges(s, base)
	e.add(famFailures, float64(s.ConsecutiveFailures), base)
	if !s.LastSuccess.IsZero() {
		e.add(famLastSuccess, unixSeconds(s.LastSuccess), base)
	}
	for i, r := range queryResults {
		e.add(famQueries, float64(s.Queries[r]), withLabels(base, resultLabels[i]))
	}
	for r, n := range s.Queries {
		if !slices.Contains(queryResults, r) {
			e.add(famQueries, float64(n), withLabels(base, &dto.LabelPair{Name: labelResult, Value: ptrTo(labelValue(r))}))
		}
	}
	if players && s.Status == monitor.StatusUp {
		e.players(s, base)
	}
}

// players adds the per-player series. Two players of the same name would
// make two series with the same labels, which a scrape rejects: the first
// of them (in the server's order) is kept.
func (e *exposition) players(s *monitor.ServerState, base []*dto.LabelPair) {
	seen := make(map[string]bool, len(s.Players))
	for _, p := range s.Players {
		name := labelValue(p.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		labels := withLabels(base, &dto.LabelPair{Name: labelPlayer, Value: &name})
		e.add(famPlayerConnected, p.Duration.Seconds(), labels)
		e.add(famPlayerScore, float64(p.Score), labels)
	}
}

// gatherServers returns the families of every monitored server, from the
// monitor's cached state: a scrape never queries a game server. A server
// not polled yet has no series: there is nothing true to say of it yet.
func gatherServers(live Live, players bool) []*dto.MetricFamily {
	states := live.Servers()
	keys, names := configLabelNames(states)
	// The labels every series of a server has, sorted by name as the
	// client library keeps them: the identity, then the config's.
	type label struct {
		name *string
		key  string // the config key, for a config label
		id   int    // the index in identityLabels, or -1
	}
	labels := make([]label, 0, len(identityLabels)+len(keys))
	for i, n := range identityLabels {
		labels = append(labels, label{name: ptrTo(n), id: i})
	}
	for i, n := range names {
		labels = append(labels, label{name: ptrTo(n), key: keys[i], id: -1})
	}
	slices.SortFunc(labels, func(a, b label) int { return strings.Compare(*a.name, *b.name) })

	e := newExposition()
	// One allocation each for every server's label pairs and values.
	n := len(labels)
	pairs := make([]dto.LabelPair, n*len(states))
	values := make([]string, n*len(states))
	ptrs := make([]*dto.LabelPair, n*len(states))
	for i := range states {
		s := &states[i]
		if s.LastPoll.IsZero() {
			continue
		}
		ident := [...]string{s.Name, s.Target, s.Protocol}
		base := ptrs[i*n : (i+1)*n : (i+1)*n]
		for j, l := range labels {
			k := i*n + j
			if l.id >= 0 {
				values[k] = labelValue(ident[l.id])
			} else {
				values[k] = labelValue(s.Labels[l.key])
			}
			pairs[k].Name, pairs[k].Value = l.name, &values[k]
			base[j] = &pairs[k]
		}
		e.monitored(s, base, players)
	}
	return e.families()
}
