package ogp

import (
	"net/netip"
	"testing"
)

// TestRateLimiterSources: addresses in different buckets keep their own
// budget; the addresses of one IPv6 /64 share one.
func TestRateLimiterSources(t *testing.T) {
	t.Parallel()
	s := &Server{RateLimit: 1e-9, RateBurst: 2, RateSources: 1024}
	s.init()
	l := s.limiter
	used := map[uint64]bool{}
	var distinct []netip.Addr
	for i := 1; len(distinct) < 8; i++ {
		ip := netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})
		if i%2 == 0 {
			ip = netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, byte(i), 15: 1})
		}
		if !used[l.index(ip)] {
			used[l.index(ip)] = true
			distinct = append(distinct, ip)
		}
	}
	for _, ip := range distinct {
		if !l.allow(ip, 1) || !l.allow(ip, 2) || l.allow(ip, 3) {
			t.Errorf("%v: the burst of 2 is not its own", ip)
		}
	}
	s = &Server{RateLimit: 1e-9, RateBurst: 2}
	s.init()
	l = s.limiter
	a, b := netip.MustParseAddr("2001:db8:1:2::1"), netip.MustParseAddr("2001:db8:1:2:ffff::9")
	if l.index(a) != l.index(b) {
		t.Fatalf("one /64 in two buckets")
	}
	if !l.allow(a, 1) || !l.allow(b, 2) || l.allow(a, 3) {
		t.Errorf("the addresses of one /64 do not share a budget")
	}
}
