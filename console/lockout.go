package console

import (
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/sourcekey"
)

// DefaultLockoutSources is how many sources a Lockout remembers when Sources is
// zero.
const DefaultLockoutSources = 4096

// Lockout counts the failed logins of a console server's clients per
// source, the way the 7 Days to Die console (console-field-notes.md §4.2)
// and SRCDS's RCON do: a source that reaches the limit is blocked until
// the block time has passed since its last failure. A success does not
// reset the count, only time does, unless the server calls Reset (SRCDS
// does). A source is an IPv4 address or an IPv6 /64
// (internal/sourcekey). Limit and For must be set before use; Limit ≤ 0
// never blocks. It is safe for concurrent use.
type Lockout struct {
	Limit int           // failures that block a source
	For   time.Duration // how long after its last failure a source stays blocked, and failures are remembered
	// Sources bounds the table; beyond it, forgotten failures are dropped
	// first, then the counts of sources not blocked, then all. 0 means
	// DefaultLockoutSources.
	Sources int

	mu sync.Mutex
	m  map[netip.Addr]*lockoutEntry
}

type lockoutEntry struct {
	n    int
	last time.Time
}

// Blocked reports whether a's source is blocked at now.
func (t *Lockout) Blocked(a netip.Addr, now time.Time) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[sourcekey.Of(a)]
	return e != nil && t.Limit > 0 && e.n >= t.Limit && now.Sub(e.last) < t.For
}

// Reset forgets a's source's failures, for a server whose successful
// login clears them (Source RCON's); 7 Days to Die's does not.
func (t *Lockout) Reset(a netip.Addr) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.m, sourcekey.Of(a))
}

// Fail counts a failed login of a's source at now, and reports whether
// the source is blocked from now on.
func (t *Lockout) Fail(a netip.Addr, now time.Time) bool {
	src := sourcekey.Of(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[src]
	if e == nil || now.Sub(e.last) >= t.For {
		t.room(now)
		e = &lockoutEntry{}
		t.m[src] = e
	}
	e.n++
	e.last = now
	return t.Limit > 0 && e.n >= t.Limit
}

// room makes room for one more source. Under t.mu.
func (t *Lockout) room(now time.Time) {
	if t.m == nil {
		t.m = make(map[netip.Addr]*lockoutEntry)
	}
	max := t.Sources
	if max <= 0 {
		max = DefaultLockoutSources
	}
	if len(t.m) < max {
		return
	}
	for a, e := range t.m {
		if now.Sub(e.last) >= t.For {
			delete(t.m, a)
		}
	}
	// Then the counts of sources not blocked, so that failures from many
	// sources cannot lift the blocks; only a table of blocked sources
	// alone is cleared.
	for a, e := range t.m {
		if len(t.m) < max {
			return
		}
		if t.Limit <= 0 || e.n < t.Limit {
			delete(t.m, a)
		}
	}
	if len(t.m) >= max {
		clear(t.m)
	}
}
