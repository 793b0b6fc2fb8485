package udpserve

import "net/netip"

// DefaultRateSources is how many sources a limiter made by LimiterOf
// remembers when the server's RateSources is zero.
const DefaultRateSources = 1 << 16

// LimiterOf is the limiter of a UDP server's RateLimit, RateBurst and
// RateSources options, with the conventions of docs/conventions.md: a
// negative rate is no limit (nil), zero is defRate; a burst of zero is
// twice the rate (at least 1); sources of zero is DefaultRateSources.
func LimiterOf(rate float64, burst, sources int, defRate float64) *RateLimiter {
	if rate < 0 {
		return nil
	}
	if rate == 0 {
		rate = defRate
	}
	b := float64(burst)
	if b <= 0 {
		b = max(2*rate, 1)
	}
	if sources <= 0 {
		sources = DefaultRateSources
	}
	return NewRateLimiter(rate, b, sources)
}

// Budget is what a UDP server that answers without a challenge may send:
// replies budgeted per source (its RateLimit, RateBurst and RateSources
// options, read by LimiterOf) and in all (its GlobalLimit, in bursts of
// as many). The master server and Satisfactory's answer with one, so that
// a spoofed request earns its victim a bounded number of replies. A nil
// Budget allows everything. It is safe for concurrent use.
type Budget struct {
	source, global *RateLimiter
}

// NewBudget returns the budget of a server's options: rate, burst and
// sources per source as LimiterOf reads them (defBurst, when positive,
// being the burst of the default rate), and global replies a second in
// all (zero: defGlobal; negative: no global budget).
func NewBudget(rate float64, burst, sources int, defRate float64, defBurst int, global, defGlobal float64) *Budget {
	if burst == 0 && rate == 0 && defBurst > 0 {
		burst = defBurst
	}
	b := &Budget{source: LimiterOf(rate, burst, sources, defRate)}
	if global >= 0 {
		if global == 0 {
			global = defGlobal
		}
		b.global = NewRateLimiter(global, global, 1)
	}
	return b
}

// everyone is the one key of the global budget.
var everyone = netip.IPv4Unspecified()

// Allow spends a reply of a's source, and of the global budget, at now
// (UnixNano), and reports whether both had one.
func (b *Budget) Allow(a netip.Addr, now int64) bool {
	if b == nil {
		return true
	}
	return (b.source == nil || b.source.Allow(a, now)) && (b.global == nil || b.global.Allow(everyone, now))
}
