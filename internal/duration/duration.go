// Package duration is gsq's one grammar for durations, wherever a person
// writes one: a flag (`gsq monitor --interval 1d`), a config file
// (`interval: 1d`), a query parameter of the monitor's API
// (`from=-7d`). prometheus/common's model.Duration is the model: Go's
// units, and days, weeks and years on top.
//
// A duration is one or more number-and-unit pairs, as in 30s, 1h30m,
// 1.5h or 14d, optionally after a minus sign. The units are ns, us (or
// µs), ms, s, m, h, d (24h), w (7d) and y (365d): calendar-free. A bare
// 0 is zero; any other bare number is an error, since "30" could mean
// seconds or minutes. Whether a negative or a zero duration makes sense
// is the caller's to say (a config's range check, say).
package duration

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// units are the units a duration may use, the two-letter names first,
// so that "ms" is not read as "m".
var units = []struct {
	name string
	d    time.Duration
}{
	{"ns", time.Nanosecond},
	{"us", time.Microsecond},
	{"µs", time.Microsecond},
	{"ms", time.Millisecond},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
	{"d", 24 * time.Hour},
	{"w", 7 * 24 * time.Hour},
	{"y", 365 * 24 * time.Hour},
}

// errSyntax is the cause of every malformed duration; its text is the
// hint a user sees.
// maxText is the longest text Parse reads; a longer one is refused
// without being echoed in the error.
const maxText = 64

var errSyntax = errors.New("use a number and a unit, as in 30s, 5m, 2h, 1h30m or 14d")

// Parse reads a duration written in the package's grammar. Spaces around
// it are ignored.
func Parse(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	switch in {
	case "0", "-0", "+0":
		return 0, nil
	case "":
		return 0, fmt.Errorf("empty duration: %w", errSyntax)
	}
	if len(in) > maxText {
		// No duration is this long; the text is not echoed, as it may be
		// anything a config or a request carried.
		return 0, fmt.Errorf("a %d-byte text is not a duration: %w", len(in), errSyntax)
	}
	if _, err := strconv.ParseFloat(in, 64); err == nil {
		return 0, fmt.Errorf("%s has no unit: write %ss for seconds, %sm for minutes", in, in, in)
	}
	rest, neg := in, false
	if rest[0] == '-' || rest[0] == '+' {
		neg, rest = rest[0] == '-', rest[1:]
	}
	bad := fmt.Errorf("%q is not a duration: %w", in, errSyntax)
	if rest == "" {
		return 0, bad
	}
	const limit = 1 << 63 // nanoseconds: one more than time.Duration holds
	tooLong := fmt.Errorf("%q is too long a duration (at most about 292 years)", in)
	var total uint64
	for rest != "" {
		// The number: integer digits, exact, and a fraction.
		var whole, frac uint64
		scale := 1.0
		i, digits := 0, 0
		for ; i < len(rest) && '0' <= rest[i] && rest[i] <= '9'; i++ {
			if whole > (limit-1)/10 {
				return 0, tooLong
			}
			whole = whole*10 + uint64(rest[i]-'0')
			digits++
		}
		if i < len(rest) && rest[i] == '.' {
			for i++; i < len(rest) && '0' <= rest[i] && rest[i] <= '9'; i++ {
				if frac < (limit-1)/10 { // further digits are below a nanosecond's worth
					frac, scale = frac*10+uint64(rest[i]-'0'), scale*10
				}
				digits++
			}
		}
		if digits == 0 {
			return 0, bad
		}
		rest = rest[i:]
		var unit uint64
		for _, u := range units {
			if strings.HasPrefix(rest, u.name) {
				unit, rest = uint64(u.d), rest[len(u.name):]
				break
			}
		}
		if unit == 0 {
			return 0, bad
		}
		if whole > limit/unit {
			return 0, tooLong
		}
		v := whole*unit + uint64(float64(frac)*(float64(unit)/scale))
		if total += v; v > limit || total > limit {
			return 0, tooLong
		}
	}
	switch {
	case neg:
		return -time.Duration(total), nil // total == limit is math.MinInt64
	case total == limit:
		return 0, tooLong
	}
	return time.Duration(total), nil
}

// formatUnits are the units Format writes, largest first: no weeks or
// years, since "10d" reads better than "1w3d".
var formatUnits = []struct {
	name string
	d    time.Duration
}{
	{"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second},
	{"ms", time.Millisecond}, {"us", time.Microsecond}, {"ns", time.Nanosecond},
}

// Format writes d exactly, in the grammar Parse reads: every unit from
// days down that is not zero, as in 1d2h, 1m30s or 1s500ms; "0s" for
// zero.
func Format(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	u := uint64(d)
	if d < 0 {
		b.WriteByte('-')
		u = -u // math.MinInt64 too: as an unsigned number it is its own magnitude
	}
	for _, unit := range formatUnits {
		if n := u / uint64(unit.d); n > 0 {
			b.WriteString(strconv.FormatUint(n, 10))
			b.WriteString(unit.name)
			u -= n * uint64(unit.d)
		}
	}
	return b.String()
}

// Brief writes d for people, in the two largest units that matter:
// "45s", "1m30s", "2h", "3d4h". It rounds to the second (to the
// millisecond below one second), so it is for messages, not for what
// must read back exactly.
func Brief(d time.Duration) string {
	if d < 0 {
		return "-" + Brief(-d)
	}
	if d < time.Second {
		return Format(d.Round(time.Millisecond))
	}
	d = d.Round(time.Second)
	var b strings.Builder
	parts := 0
	for _, u := range formatUnits[:4] {
		if n := d / u.d; n > 0 || parts > 0 {
			if n > 0 {
				fmt.Fprintf(&b, "%d%s", n, u.name)
			}
			d -= n * u.d
			parts++
			if parts == 2 {
				break
			}
		}
	}
	return b.String()
}

// Duration is a time.Duration that reads and writes itself in the
// package's grammar: as a command-line flag (it is a flag.Value and a
// pflag.Value), and as text in JSON, YAML or any encoding that uses
// encoding.TextMarshaler. A *time.Duration converts to a *Duration, so
// that a flag can fill a field of type time.Duration:
//
//	f.Var((*duration.Duration)(&o.interval), "interval", "how often")
type Duration time.Duration

// String writes the duration as Format does.
func (d Duration) String() string { return Format(time.Duration(d)) }

// Set reads the duration as Parse does, for a flag.
func (d *Duration) Set(s string) error {
	v, err := Parse(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Type names the flag's value in help texts.
func (Duration) Type() string { return "duration" }

// MarshalText writes the duration as Format does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads the duration as Parse does.
func (d *Duration) UnmarshalText(b []byte) error { return d.Set(string(b)) }
