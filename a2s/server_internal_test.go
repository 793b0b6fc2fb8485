package a2s

import (
	"net/netip"
	"testing"
)

// TestRateLimiterBounded: a flood of distinct sources never grows the
// table beyond two generations.
func TestRateLimiterBounded(t *testing.T) {
	t.Parallel()
	const limit = 64
	l := newRateLimiter(10, 2, limit)
	for i := range 10000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if !l.allow(a, int64(i)) {
			t.Fatalf("new source %v refused", a)
		}
		if n := len(l.cur) + len(l.prev); n > 2*limit {
			t.Fatalf("table holds %d entries, bound is %d", n, 2*limit)
		}
	}
	// a source seen in the previous generation keeps its bucket
	a := netip.AddrFrom4([4]byte{192, 0, 2, 1})
	l.allow(a, 0)
	l.allow(a, 0)
	if l.allow(a, 0) {
		t.Error("burst of 2 allowed a third request")
	}
}
