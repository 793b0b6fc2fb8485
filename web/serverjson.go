package web

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gsq-project/gsq/monitor"
)

// appendServer appends a server's state as the API shows it:
//
//	{"name", "target", "protocol", "labels"?, "status", "since", "last_poll",
//	 "last_success", "consecutive_failures", "ping_ms", "query_duration_ms",
//	 "uptime_24h", "summary", "last_error"?, "queries"?, "players"?}
//
// Times are RFC 3339 in UTC with milliseconds, or null; ping_ms,
// query_duration_ms and uptime_24h are null when unknown. players (who is
// online, with score and duration_seconds) is there when withPlayers is
// set and the monitor has the list.
//
// It is written by hand because the server list encodes thousands of
// these per request; the summary, whose fields belong to package result,
// goes through encoding/json so that a field added there shows here too.
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
	b = append(b, `,"summary":`...)
	sum, err := json.Marshal(s.Summary)
	if err != nil {
		sum = []byte("{}")
	}
	b = append(b, sum...)
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

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does:
// quotes, backslashes and control characters escaped, <, > and & as
// \u escapes (so that the JSON is safe inside HTML too), U+2028 and
// U+2029 escaped, and each byte of invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
