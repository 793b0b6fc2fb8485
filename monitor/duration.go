package monitor

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnits are the units a duration in the config may use. Days,
// weeks and years are calendar-free: 24, 168 and 8760 hours.
var durationUnits = []struct {
	name string
	d    time.Duration
}{
	// Longer names first, so that "ms" is not read as "m".
	{"ms", time.Millisecond},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
	{"d", 24 * time.Hour},
	{"w", 7 * 24 * time.Hour},
	{"y", 365 * 24 * time.Hour},
}

// errDurationSyntax is the cause of every malformed duration; its text is
// the hint a user sees.
var errDurationSyntax = errors.New("use a number and a unit, as in 30s, 5m, 2h, 1h30m or 14d")

// ParseDuration reads a duration as people write them in a config: one or
// more number-and-unit pairs ("30s", "1h30m", "1.5h", "14d"), with the
// units ms, s, m, h, d (24h), w (7d) and y (365d). A bare 0 is zero; any
// other bare number is an error, since "30" could mean seconds or minutes.
// Negative durations are errors. The CLI's duration flags take the same
// words, so that a flag and the config never disagree.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "0" {
		return 0, nil
	}
	if in == "" {
		return 0, fmt.Errorf("empty duration: %w", errDurationSyntax)
	}
	if _, err := strconv.ParseFloat(in, 64); err == nil {
		return 0, fmt.Errorf("%s has no unit: write %ss for seconds, %sm for minutes", in, in, in)
	}
	var total float64
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && (rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("%q is not a duration: %w", in, errDurationSyntax)
		}
		n, err := strconv.ParseFloat(rest[:i], 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration: %w", in, errDurationSyntax)
		}
		rest = rest[i:]
		unit := time.Duration(0)
		for _, u := range durationUnits {
			if strings.HasPrefix(rest, u.name) {
				unit, rest = u.d, rest[len(u.name):]
				break
			}
		}
		if unit == 0 {
			return 0, fmt.Errorf("%q is not a duration: %w", in, errDurationSyntax)
		}
		total += n * float64(unit)
	}
	if total > float64(math.MaxInt64) {
		return 0, fmt.Errorf("%q is too long a duration (at most about 292 years)", in)
	}
	return time.Duration(total), nil
}

// FormatDuration writes d the way ParseDuration reads it, in the two
// largest units that matter: "45s", "1m30s", "2h", "3d4h". It rounds to
// the second (to the millisecond below one second).
func FormatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + FormatDuration(-d)
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	d = d.Round(time.Second)
	var b strings.Builder
	parts := 0
	for i := len(durationUnits) - 1; i >= 1 && parts < 2; i-- { // no "ms" above a second
		u := durationUnits[i]
		if u.name == "w" || u.name == "y" {
			continue // "10d" reads better than "1w3d"
		}
		if n := d / u.d; n > 0 || parts > 0 {
			if n > 0 {
				fmt.Fprintf(&b, "%d%s", n, u.name)
			}
			d -= n * u.d
			parts++
		}
	}
	return b.String()
}
