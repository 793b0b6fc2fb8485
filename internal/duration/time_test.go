package duration

import (
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 21, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"now":                  now,
		"-24h":                 now.Add(-24 * time.Hour),
		"-7d":                  now.Add(-7 * 24 * time.Hour),
		"1700000000":           time.Unix(1700000000, 0),
		"2026-11-24T20:00:00Z": now.Add(-time.Hour),
		"2026-11-24":           now.Add(-21 * time.Hour),
	} {
		got, err := ParseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	// Issue 19: ?from=9300000000 wrapped to the year 1677.
	for _, bad := range []string{"", "yesterday", "-x", "1e300", "-5", "-1e9d", "-NaNd", "+Inf", "NaN",
		"9300000000", "9223372037", "9999-12-31T00:00:00Z", "1000-01-01T00:00:00Z", "9999-12-31", "1000-01-01"} {
		if _, err := ParseTime(bad, now); err == nil {
			t.Errorf("ParseTime(%q): no error", bad)
		}
	}
}
