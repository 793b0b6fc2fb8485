package udpserve

import (
	"net/netip"
	"testing"
)

// Sources keep their own budget; the addresses of one IPv6 /64 share one;
// a token comes back after 1/rate; a full table forgets its oldest half.
func TestRateLimiter(t *testing.T) {
	t.Parallel()
	l := NewRateLimiter(1, 2, 1024) // 1 a second, bursts of 2
	var sources []netip.Addr
	for i := 1; i <= 8; i++ {
		ip := netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})
		if i%2 == 0 {
			ip = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, byte(i), 15: 1})
		}
		sources = append(sources, ip)
	}
	for _, ip := range sources {
		if !l.Allow(ip, 1) || !l.Allow(ip, 2) || l.Allow(ip, 3) {
			t.Errorf("%v: the burst of 2 is not its own", ip)
		}
	}
	if !l.Allow(sources[0], 1e9+3) || l.Allow(sources[0], 1e9+4) {
		t.Error("one token did not come back after a second")
	}
	a, b := netip.MustParseAddr("2001:db8:1:2::1"), netip.MustParseAddr("2001:db8:1:2:ffff::9")
	if !l.Allow(a, 1) || !l.Allow(b, 2) || l.Allow(a, 3) {
		t.Error("the addresses of one /64 do not share a budget")
	}
	mapped := netip.MustParseAddr("::ffff:192.0.2.1")
	if l.Allow(mapped, 1e9+5) {
		t.Error("an IPv4-mapped address is not its IPv4 source")
	}

	small := NewRateLimiter(1, 1, 2)
	x, y, z := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3")
	small.Allow(x, 1)
	small.Allow(y, 1)
	small.Allow(z, 1) // x and y become the previous generation
	if small.Allow(x, 2) {
		t.Error("x was forgotten one generation too early")
	}
	small.Allow(netip.MustParseAddr("10.0.0.4"), 3) // z, x current: rotates, y is dropped
	if !small.Allow(y, 4) {
		t.Error("y, two generations old, was not forgotten")
	}
	if n := len(small.cur) + len(small.prev); n > 4 {
		t.Errorf("%d sources held, want at most 2×2", n)
	}
}

// A flood of distinct sources never grows the table beyond two
// generations.
func TestRateLimiterBounded(t *testing.T) {
	t.Parallel()
	const limit = 64
	l := NewRateLimiter(10, 2, limit)
	for i := range 10000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if !l.Allow(a, int64(i)) {
			t.Fatalf("new source %v refused", a)
		}
		if n := len(l.cur) + len(l.prev); n > 2*limit {
			t.Fatalf("table holds %d entries, bound is %d", n, 2*limit)
		}
	}
}

// A Budget reads a server's options by the conventions: defaults for
// zero (the default burst going with the default rate only), none for
// negative; it spends per source and in all.
func TestBudget(t *testing.T) {
	t.Parallel()
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	allowed := func(bu *Budget, src netip.Addr, n int) int {
		got := 0
		for range n {
			if bu.Allow(src, 1) {
				got++
			}
		}
		return got
	}
	if got := allowed(NewBudget(0, 0, 0, 0.5, 30, -1, 0), a, 100); got != 30 {
		t.Errorf("the default burst: %d allowed, want 30", got)
	}
	if got := allowed(NewBudget(2, 0, 0, 0.5, 30, -1, 0), a, 100); got != 4 {
		t.Errorf("a rate of 2, burst left zero: %d allowed, want twice the rate", got)
	}
	if got := allowed(NewBudget(-1, 0, 0, 0.5, 30, -1, 0), a, 100); got != 100 {
		t.Errorf("no budgets: %d allowed of 100", got)
	}
	g := NewBudget(-1, 0, 0, 0.5, 30, 5, 100)
	if got := allowed(g, a, 4) + allowed(g, b, 4); got != 5 {
		t.Errorf("a global budget of 5: %d allowed to two sources", got)
	}
	if got := allowed(NewBudget(-1, 0, 0, 0.5, 30, 0, 7), a, 100); got != 7 {
		t.Errorf("the default global budget: %d allowed, want 7", got)
	}
	var none *Budget
	if !none.Allow(a, 1) {
		t.Error("a nil Budget refuses")
	}
}
