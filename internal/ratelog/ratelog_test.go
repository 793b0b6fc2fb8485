package ratelog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestLimiterBurstAndSuppressedCount(t *testing.T) {
	t.Parallel()
	var lines []string
	now := time.Unix(1000, 0)
	l := &Limiter{
		Logf:     func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) },
		Burst:    2,
		Interval: time.Second,
		Now:      func() time.Time { return now },
	}
	for i := 0; i < 10; i++ {
		l.Printf("refused", "refused %d", i)
	}
	l.Printf("other", "other kind")
	if len(lines) != 3 || lines[0] != "refused 0" || lines[1] != "refused 1" || lines[2] != "other kind" {
		t.Fatalf("lines in the first interval = %q", lines)
	}
	now = now.Add(time.Second)
	l.Printf("refused", "refused %d", 10)
	if got := lines[len(lines)-1]; got != "refused 10 (8 more like this suppressed)" {
		t.Fatalf("first line of the next interval = %q", got)
	}
	l.Printf("refused", "refused %d", 11)
	if got := lines[len(lines)-1]; strings.Contains(got, "suppressed") {
		t.Fatalf("second line of the interval still reports suppression: %q", got)
	}
}

func TestLimiterNilAndNoLogf(t *testing.T) {
	t.Parallel()
	var l *Limiter
	l.Printf("k", "x") // must not panic
	(&Limiter{}).Printf("k", "x")
}

func TestLimiterKindTableIsBounded(t *testing.T) {
	t.Parallel()
	n := 0
	l := &Limiter{Logf: func(string, ...any) { n++ }}
	for i := 0; i < 3*maxKinds; i++ {
		l.Printf(fmt.Sprint(i), "x")
	}
	if len(l.kinds) > maxKinds {
		t.Fatalf("kinds table holds %d entries, above %d", len(l.kinds), maxKinds)
	}
	if n != 3*maxKinds {
		t.Fatalf("%d lines passed, want %d (one per new kind)", n, 3*maxKinds)
	}
}
