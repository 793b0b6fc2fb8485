package udpclient

import (
	"net/netip"
	"sync"
	"testing"
)

func addrN(i int) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 27015)
}

// The cache never holds more than its size, and when full forgets by the
// CLOCK rule: entries read since the hand last passed survive, the first
// unread one in store order goes.
func TestChallengesBoundAndEviction(t *testing.T) {
	t.Parallel()
	c := NewChallenges(4)
	for i := range 4 {
		c.Put(addrN(i), uint32(100+i))
	}
	// 1 and 3 are in use; 0 and 2 are not.
	for _, i := range []int{1, 3} {
		if v, ok := c.Get(addrN(i)); !ok || v != uint32(100+i) {
			t.Fatalf("Get(%d) = %d, %v", i, v, ok)
		}
	}
	c.Put(addrN(4), 104) // takes 0's place: unread, first in store order
	c.Put(addrN(5), 105) // the hand passes 1 (read: spared), takes 2's place
	if c.Len() != 4 {
		t.Fatalf("Len = %d, want 4", c.Len())
	}
	for i, want := range map[int]bool{0: false, 1: true, 2: false, 3: true, 4: true, 5: true} {
		if _, ok := c.Get(addrN(i)); ok != want {
			t.Errorf("server %d kept: %v, want %v", i, ok, want)
		}
	}
	// Updating a server keeps its place; a new challenge replaces the old.
	c.Put(addrN(1), 7)
	if v, _ := c.Get(addrN(1)); v != 7 || c.Len() != 4 {
		t.Errorf("after an update: %d, Len %d", v, c.Len())
	}
	// Many more servers than places: the size holds.
	for i := range 1000 {
		c.Put(addrN(i), uint32(i))
		if c.Len() > 4 {
			t.Fatalf("Len = %d after %d puts", c.Len(), i)
		}
	}
	if len(c.index) != len(c.slots) {
		t.Errorf("index %d entries, slots %d", len(c.index), len(c.slots))
	}
}

// A server read again and again keeps its challenge while a stream of
// servers asked once passes through.
func TestChallengesKeepHotServer(t *testing.T) {
	t.Parallel()
	c := NewChallenges(16)
	hot := netip.MustParseAddrPort("192.0.2.1:27015")
	c.Put(hot, 42)
	for i := range 10000 {
		if _, ok := c.Get(hot); !ok {
			t.Fatalf("the hot server was forgotten after %d others", i)
		}
		c.Put(addrN(i), uint32(i))
	}
}

func TestChallengesNilAndConcurrent(t *testing.T) {
	t.Parallel()
	var none *Challenges
	none.Put(addrN(1), 1)
	if _, ok := none.Get(addrN(1)); ok {
		t.Error("a nil cache holds something")
	}
	if NewChallenges(0).size != DefaultChallenges {
		t.Error("size 0 is not the default")
	}
	c := NewChallenges(64)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				c.Put(addrN(g*2000+i), uint32(i))
				c.Get(addrN(g*2000 + i/2))
			}
		})
	}
	wg.Wait()
	if c.Len() != 64 {
		t.Errorf("Len = %d, want 64", c.Len())
	}
}
