// Package ratelog bounds the log lines that a network peer can trigger.
// A server that logs every refused connection or dropped datagram lets a
// flood of them flood its log too; a [Limiter] lets a few lines of each
// kind through per interval and then counts what it suppressed, reporting
// the count with the next line of that kind it lets through.
//
// It uses the standard library only.
package ratelog

import (
	"fmt"
	"sync"
	"time"
)

// Defaults of a zero Limiter.
const (
	DefaultBurst    = 5
	DefaultInterval = 10 * time.Second
)

// Limiter passes at most Burst lines of each kind per Interval to Logf.
// The zero value, given a Logf, is ready to use; a nil Logf makes it
// discard everything. It is safe for concurrent use.
type Limiter struct {
	Logf     func(format string, args ...any)
	Burst    int           // lines of one kind per interval; 0 means DefaultBurst
	Interval time.Duration // 0 means DefaultInterval
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time

	mu    sync.Mutex
	kinds map[string]*window
}

type window struct {
	start      time.Time
	passed     int
	suppressed int
}

// maxKinds bounds the table of kinds, in case a caller builds kinds from
// peer input; beyond it, the table is cleared.
const maxKinds = 1024

// Printf logs a line of the given kind, unless this kind already used up
// its lines for the current interval. The first line of a new interval
// says how many lines of its kind were suppressed before it.
func (l *Limiter) Printf(kind, format string, args ...any) {
	if l == nil || l.Logf == nil {
		return
	}
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	burst, interval := l.Burst, l.Interval
	if burst <= 0 {
		burst = DefaultBurst
	}
	if interval <= 0 {
		interval = DefaultInterval
	}
	t := now()
	l.mu.Lock()
	if l.kinds == nil || len(l.kinds) >= maxKinds {
		l.kinds = make(map[string]*window)
	}
	w := l.kinds[kind]
	if w == nil {
		w = &window{start: t}
		l.kinds[kind] = w
	}
	suppressed := 0
	if t.Sub(w.start) >= interval {
		suppressed = w.suppressed
		*w = window{start: t}
	}
	if w.passed >= burst {
		w.suppressed++
		l.mu.Unlock()
		return
	}
	w.passed++
	l.mu.Unlock()
	if suppressed > 0 {
		format += fmt.Sprintf(" (%d more like this suppressed)", suppressed)
	}
	l.Logf(format, args...)
}
