package console

import (
	"net/netip"
	"testing"
	"time"
)

func TestLockoutBlocksAfterLimitUntilTimePasses(t *testing.T) {
	t.Parallel()
	tb := &Lockout{Limit: 3, For: time.Minute, Sources: 2}
	a := netip.MustParseAddr("2001:db8::1")
	same := netip.MustParseAddr("2001:db8::2") // the same /64
	now := time.Unix(1000, 0)
	if tb.Fail(a, now) || tb.Fail(same, now.Add(time.Second)) || tb.Blocked(a, now) {
		t.Fatal("blocked before the limit")
	}
	if !tb.Fail(a, now.Add(2*time.Second)) || !tb.Blocked(same, now.Add(61*time.Second)) {
		t.Fatal("not blocked at the limit, or the block counts from the first failure")
	}
	if tb.Blocked(a, now.Add(62*time.Second)) {
		t.Fatal("still blocked a minute after the last failure")
	}
	// The table stays within Sources.
	for i := range 10 {
		tb.Fail(netip.AddrFrom4([4]byte{192, 0, 2, byte(i)}), now)
	}
	if len(tb.m) > 2 {
		t.Errorf("%d sources remembered, limit 2", len(tb.m))
	}
	// A flood of failures from other sources does not lift a block.
	fl := &Lockout{Limit: 2, For: time.Minute, Sources: 4}
	fl.Fail(a, now)
	fl.Fail(a, now)
	for i := range 100 {
		fl.Fail(netip.AddrFrom4([4]byte{203, 0, 113, byte(i)}), now)
	}
	if !fl.Blocked(a, now) || len(fl.m) > 4 {
		t.Errorf("after a flood: blocked %v, %d sources remembered (limit 4)", fl.Blocked(a, now), len(fl.m))
	}
	// Reset forgets a source's failures.
	b := netip.MustParseAddr("198.51.100.7")
	tb.Fail(b, now)
	tb.Fail(b, now)
	tb.Reset(b)
	if tb.Fail(b, now) {
		t.Error("blocked after Reset and one failure")
	}
	never := &Lockout{For: time.Minute}
	for range 100 {
		if never.Fail(a, now) {
			t.Fatal("Limit 0 blocked")
		}
	}
}
