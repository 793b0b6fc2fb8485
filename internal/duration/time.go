package duration

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The times ParseTime takes: those that nanoseconds since 1970 in an
// int64 hold (1677 to 2262), as the store and time.Time's arithmetic
// count them. A time beyond them would wrap.
var minTime, maxTime = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// ParseTime is gsq's one grammar for a point in time, wherever a person
// writes one (the monitor API's from and to, `gsq monitor export
// --from`): an RFC 3339 time (2026-11-24T21:00:00Z), a date (2026-11-24,
// its midnight UTC), Unix seconds, "now", or a duration before now such
// as -24h or -7d. A time outside 1677-2262 is an error, never a
// wrapped-around one.
func ParseTime(s string, now time.Time) (time.Time, error) {
	if s == "now" {
		return now, nil
	}
	t, ok := time.Time{}, false
	if strings.HasPrefix(s, "-") {
		if d, err := Parse(s[1:]); err == nil && d >= 0 {
			t, ok = now.Add(-d), true
		}
	}
	if secs, err := strconv.ParseFloat(s, 64); !ok && err == nil && secs >= 0 && !math.IsInf(secs, 0) {
		if secs >= float64(maxTime.Unix()) {
			return time.Time{}, fmt.Errorf("%q is out of range: Unix seconds go up to %d (%d)", s, maxTime.Unix()-1, maxTime.Year())
		}
		t, ok = time.Unix(0, int64(secs*1e9)), true
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if ok {
			break
		}
		var err error
		t, err = time.Parse(layout, s)
		ok = err == nil
	}
	if !ok {
		return time.Time{}, fmt.Errorf("%q is not a time: want RFC 3339 (2026-11-24T21:00:00Z), a date (2026-11-24), Unix seconds, now, or -DURATION (-24h)", s)
	}
	if t.Before(minTime) || t.After(maxTime) {
		return time.Time{}, fmt.Errorf("%q is out of range: times go from %d to %d", s, minTime.Year(), maxTime.Year())
	}
	return t, nil
}
