package udpserve

import (
	"net/netip"
	"sync"

	"github.com/gsq-project/gsq/internal/sourcekey"
)

// RateLimiter is a token bucket per source, the limit of the UDP servers'
// RateLimit, RateBurst and RateSources options. A source is an IPv4
// address, or the /64 prefix of an IPv6 address, which one host commonly
// holds whole. Its table holds two generations of at most sources entries
// each: when the current one is full it becomes the previous one and the
// older is dropped, so memory is bounded and a forgotten source merely
// starts with a full bucket. It is safe for concurrent use.
type RateLimiter struct {
	mu        sync.Mutex
	rate      float64 // tokens per nanosecond
	burst     float64
	max       int
	cur, prev map[netip.Addr]tokenBucket
}

type tokenBucket struct {
	tokens float64
	last   int64 // UnixNano of the last request
}

// NewRateLimiter returns a limiter of perSecond requests a second per
// source, burst at once, that remembers up to 2×sources sources.
func NewRateLimiter(perSecond, burst float64, sources int) *RateLimiter {
	return &RateLimiter{rate: perSecond / 1e9, burst: burst, max: max(sources, 1), cur: make(map[netip.Addr]tokenBucket)}
}

// Allow takes a token from the bucket of a's source at now (UnixNano),
// and reports whether there was one.
func (l *RateLimiter) Allow(a netip.Addr, now int64) bool {
	a = sourcekey.Of(a)
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.cur[a]
	if !ok {
		if b, ok = l.prev[a]; !ok {
			b = tokenBucket{tokens: l.burst, last: now}
		}
		if len(l.cur) >= l.max {
			l.prev, l.cur = l.cur, make(map[netip.Addr]tokenBucket, len(l.cur))
		}
	}
	b.tokens = min(l.burst, b.tokens+float64(now-b.last)*l.rate)
	b.last = now
	allowed := b.tokens >= 1
	if allowed {
		b.tokens--
	}
	l.cur[a] = b
	return allowed
}
