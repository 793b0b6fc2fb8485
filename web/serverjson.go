package web

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
)

// appendServer appends a server's state as the API shows it:
//
//	{"name", "target", "protocol", "labels"?, "status", "since", "last_poll",
//	 "last_success", "consecutive_failures", "ping_ms", "query_duration_ms",
//	 "uptime_24h", "recent_polls"?, "interval_seconds"?, "summary", "last_error"?, "queries"?, "players"?,
//	 "players_hidden"?}
//
// Times are RFC 3339 in UTC with milliseconds, or null; ping_ms,
// query_duration_ms and uptime_24h are null when unknown. players (who is
// online, with score and duration_seconds) is there when withPlayers is
// set and the monitor has the list; players_hidden (true) when the server
// says players are on but hides who (Minecraft's hide-online-players).
//
// It is written by hand because the server list encodes thousands of
// these per request; its strings go through internal/jsonenc, HTML-safe,
// and the summary is package result's own encoding (HTML-safe too), so
// that it reads the same here as in `gsq query --json`.
func appendServer(b []byte, s *monitor.ServerState, withPlayers bool) []byte {
	b = append(b, `{"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"target":`...)
	b = appendString(b, s.Target)
	b = append(b, `,"protocol":`...)
	b = appendString(b, s.Protocol)
	if len(s.Labels) > 0 {
		b = append(b, `,"labels":{`...)
		for i, k := range sortedKeys(s.Labels) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = appendString(b, s.Labels[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"status":`...)
	b = appendString(b, string(s.Status))
	b = append(b, `,"since":`...)
	b = appendTime(b, s.Since)
	b = append(b, `,"last_poll":`...)
	b = appendTime(b, s.LastPoll)
	b = append(b, `,"last_success":`...)
	b = appendTime(b, s.LastSuccess)
	b = append(b, `,"consecutive_failures":`...)
	b = strconv.AppendInt(b, int64(s.ConsecutiveFailures), 10)
	b = append(b, `,"ping_ms":`...)
	b = appendMillis(b, s.Ping)
	b = append(b, `,"query_duration_ms":`...)
	b = appendMillis(b, s.QueryDuration)
	b = append(b, `,"uptime_24h":`...)
	if s.Uptime24h != nil && !math.IsNaN(*s.Uptime24h) && !math.IsInf(*s.Uptime24h, 0) {
		b = strconv.AppendFloat(b, *s.Uptime24h, 'g', -1, 64)
	} else {
		b = append(b, "null"...)
	}
	if s.RecentPolls != "" {
		b = append(b, `,"recent_polls":`...)
		b = appendString(b, s.RecentPolls)
	}
	if s.Interval > 0 {
		b = append(b, `,"interval_seconds":`...)
		b = strconv.AppendFloat(b, s.Interval.Seconds(), 'g', -1, 64)
	}
	b = append(b, `,"summary":`...)
	b = appendSummary(b, &s.Summary)
	if s.LastError != nil {
		b = append(b, `,"last_error":{"kind":`...)
		b = appendString(b, string(s.LastError.Kind))
		b = append(b, `,"message":`...)
		b = appendString(b, s.LastError.Message)
		b = append(b, '}')
	}
	if len(s.Queries) > 0 {
		b = append(b, `,"queries":{`...)
		for i, k := range sortedKeys(s.Queries) {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, k)
			b = append(b, ':')
			b = strconv.AppendUint(b, s.Queries[k], 10)
		}
		b = append(b, '}')
	}
	if withPlayers && s.Players != nil {
		b = append(b, `,"players":[`...)
		for i, p := range s.Players {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = appendString(b, p.Name)
			b = append(b, `,"score":`...)
			b = strconv.AppendInt(b, p.Score, 10)
			b = append(b, `,"duration_seconds":`...)
			b = strconv.AppendFloat(b, p.Duration.Seconds(), 'f', -1, 64)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if s.PlayersHidden {
		b = append(b, `,"players_hidden":true`...)
	}
	if len(s.Vantages) > 0 {
		b = append(b, `,"vantages":[`...)
		for i, v := range s.Vantages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"region":`...)
			b = appendString(b, v.Region)
			b = append(b, `,"status":`...)
			b = appendString(b, string(v.Status))
			b = append(b, `,"at":`...)
			b = appendTime(b, v.At)
			b = append(b, `,"ping_ms":`...)
			b = appendMillis(b, v.Ping)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// appendTime appends t as jsonTime does.
func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"')
}

// timeLayout is RFC 3339 with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// appendMillis appends d in milliseconds to 10 µs, or null when not
// positive.
func appendMillis(b []byte, d time.Duration) []byte {
	if d <= 0 {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, math.Round(float64(d)/1e4)/100, 'f', -1, 64)
}

// appendString appends s as a JSON string, safe inside HTML too.
func appendString(b []byte, s string) []byte { return jsonenc.AppendString(b, s, true) }

// appendSummary appends a summary as package result encodes it, with <,
// > and & escaped as everything else here is.
func appendSummary(b []byte, s *result.Summary) []byte { return s.AppendHTMLSafeJSON(b) }
