package duration

import (
	"encoding/json"
	"flag"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	good := map[string]time.Duration{
		"0":        0,
		"0s":       0,
		"30s":      30 * time.Second,
		" 5m ":     5 * time.Minute,
		"1h30m":    90 * time.Minute,
		"1.5h":     90 * time.Minute,
		"500ms":    500 * time.Millisecond,
		"250us":    250 * time.Microsecond,
		"250µs":    250 * time.Microsecond,
		"10ns":     10,
		"14d":      14 * 24 * time.Hour,
		"2w":       14 * 24 * time.Hour,
		"1y":       365 * 24 * time.Hour,
		"1d12h":    36 * time.Hour,
		"1m500ms":  time.Minute + 500*time.Millisecond,
		"-5s":      -5 * time.Second,
		"+2m":      2 * time.Minute,
		"-1h30m":   -90 * time.Minute,
		"1h1m1s1m": time.Hour + 2*time.Minute + time.Second,
	}
	for in, want := range good {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                      "empty duration",
		"30":                    "30 has no unit: write 30s",
		"1.5":                   "1.5 has no unit",
		"-1":                    "-1 has no unit",
		"30x":                   `"30x" is not a duration: use a number and a unit`,
		"s":                     `"s" is not a duration`,
		"-":                     `"-" is not a duration`,
		"--5s":                  `"--5s" is not a duration`,
		"1..5s":                 `"1..5s" is not a duration`,
		"5 m":                   `"5 m" is not a duration`,
		"1000000y":              "too long a duration",
		"forever":               `"forever" is not a duration`,
		"1e3s":                  `"1e3s" is not a duration`,
		".s":                    `".s" is not a duration`,
		"9223372036854775808ns": "too long a duration",
	}
	for in, want := range bad {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
		250 * time.Millisecond:                "250ms",
		90 * time.Second:                      "1m30s",
		time.Hour + 30*time.Second:            "1h30s",
		26*time.Hour + 500*time.Millisecond:   "1d2h500ms",
		10 * 24 * time.Hour:                   "10d",
		-90 * time.Second:                     "-1m30s",
		1500 * time.Nanosecond:                "1us500ns",
		math.MinInt64:                         "-106751d23h47m16s854ms775us808ns",
		59*time.Second + 600*time.Millisecond: "59s600ms",
	} {
		if got := Format(d); got != want {
			t.Errorf("Format(%v) = %q, want %q", d, got, want)
		}
		if back, err := Parse(Format(d)); err != nil || back != d {
			t.Errorf("Format(%v) does not read back: %v, %v", d, back, err)
		}
	}
}

func TestBrief(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                                     "0s",
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
		if got := Brief(d); got != want {
			t.Errorf("Brief(%v) = %q, want %q", d, got, want)
		}
		if _, err := Parse(Brief(d)); err != nil {
			t.Errorf("Brief(%v) = %q does not read: %v", d, Brief(d), err)
		}
	}
}

// TestFlagAndText: a Duration is a flag value and reads and writes
// itself as text, in one grammar.
func TestFlagAndText(t *testing.T) {
	t.Parallel()
	var interval time.Duration
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(new(strings.Builder))
	fs.Var((*Duration)(&interval), "interval", "how often")
	if err := fs.Parse([]string{"--interval", "1d"}); err != nil || interval != 24*time.Hour {
		t.Errorf("--interval 1d: %v, %v", interval, err)
	}
	if err := fs.Parse([]string{"--interval", "30"}); err == nil || !strings.Contains(err.Error(), "30 has no unit") {
		t.Errorf("--interval 30: %v", err)
	}
	var v struct{ Every Duration }
	if err := json.Unmarshal([]byte(`{"Every": "1h30m"}`), &v); err != nil || v.Every != Duration(90*time.Minute) {
		t.Errorf("JSON: %v, %v", v.Every, err)
	}
	if b, err := json.Marshal(v); err != nil || string(b) != `{"Every":"1h30m"}` {
		t.Errorf("JSON: %s, %v", b, err)
	}
	if (Duration(0)).Type() != "duration" {
		t.Error("Type")
	}
}

// FuzzParse: no input panics, and what Format and Brief write reads
// back (Format exactly).
func FuzzParse(f *testing.F) {
	for _, s := range []string{"30s", "1h30m", "1.5h", "14d", "0", "30", "-1s", "9999999999y", "1e3s", ".s", "1..2m", "1µs", "-2w3d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err != nil {
			return
		}
		if back, err := Parse(Format(d)); err != nil || back != d {
			t.Fatalf("Format(%v) = %q reads back as %v, %v", d, Format(d), back, err)
		}
		if _, err := Parse(Brief(d)); err != nil {
			t.Fatalf("Brief(%v) = %q does not read back: %v", d, Brief(d), err)
		}
	})
}

func TestParseDoesNotEchoALongText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 64<<10) + "x"
	_, err := Parse(long)
	if err == nil {
		t.Fatal("Parse of a 64 KiB text: no error")
	}
	if msg := err.Error(); len(msg) > 200 {
		t.Fatalf("Parse of a 64 KiB text: a %d-byte error: %.80q...", len(msg), msg)
	}
}
