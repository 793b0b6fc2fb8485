package monitor

import (
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	t.Parallel()
	good := map[string]time.Duration{
		"0":       0,
		"0s":      0,
		"30s":     30 * time.Second,
		" 5m ":    5 * time.Minute,
		"1h30m":   90 * time.Minute,
		"1.5h":    90 * time.Minute,
		"500ms":   500 * time.Millisecond,
		"14d":     14 * 24 * time.Hour,
		"2w":      14 * 24 * time.Hour,
		"1y":      365 * 24 * time.Hour,
		"1d12h":   36 * time.Hour,
		"1m500ms": time.Minute + 500*time.Millisecond,
	}
	for in, want := range good {
		got, err := ParseDuration(in)
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":         "empty duration",
		"30":       "30 has no unit: write 30s",
		"1.5":      "1.5 has no unit",
		"30x":      `"30x" is not a duration: use a number and a unit`,
		"-5s":      `"-5s" is not a duration`,
		"s":        `"s" is not a duration`,
		"1..5s":    `"1..5s" is not a duration`,
		"5 m":      `"5 m" is not a duration`,
		"1000000y": "too long a duration",
		"forever":  `"forever" is not a duration`,
	}
	for in, want := range bad {
		_, err := ParseDuration(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDuration(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		250 * time.Millisecond:                "250ms",
		45 * time.Second:                      "45s",
		90 * time.Second:                      "1m30s",
		time.Hour:                             "1h",
		time.Hour + 30*time.Second:            "1h",
		26 * time.Hour:                        "1d2h",
		10 * 24 * time.Hour:                   "10d",
		-90 * time.Second:                     "-1m30s",
		59*time.Second + 600*time.Millisecond: "1m",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if d >= time.Second && d%time.Second == 0 && d < time.Hour {
			if back, err := ParseDuration(FormatDuration(d)); err != nil || back != d {
				t.Errorf("FormatDuration(%v) does not read back: %v, %v", d, back, err)
			}
		}
	}
}
