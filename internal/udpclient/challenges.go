package udpclient

import (
	"net/netip"
	"sync"
)

// DefaultChallenges is the number of servers whose challenges a cache
// keeps by default: a2s.Client, ogp.Client and a scan session alike.
const DefaultChallenges = 1 << 16

// Challenges keeps the challenges servers gave, so that the next
// conversation with a server asks everything at once instead of earning
// the challenge first. It holds at most its size of servers, and forgets
// by the CLOCK rule (second chance): each entry carries a mark set when it
// is read; when the cache is full, a hand sweeps the entries in the order
// they were stored, clearing marks, and the first entry it finds unmarked
// gives its place to the new one. A server asked again and again keeps its
// challenge; one asked once goes first; nothing is ever cleared wholesale.
// The cost is constant per call, and it never allocates once full. It is
// safe for concurrent use.
type Challenges struct {
	mu    sync.Mutex
	size  int
	index map[netip.AddrPort]int32 // the slot of each server
	slots []challengeSlot
	hand  int
}

type challengeSlot struct {
	addr   netip.AddrPort
	value  uint32
	marked bool
}

// NewChallenges returns a cache of size servers (DefaultChallenges when
// size is not positive).
func NewChallenges(size int) *Challenges {
	if size <= 0 {
		size = DefaultChallenges
	}
	return &Challenges{size: size, index: make(map[netip.AddrPort]int32)}
}

// Len returns the number of servers held.
func (c *Challenges) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.slots)
}

// Get returns the challenge kept for addr, and marks it used. A nil cache
// holds nothing.
func (c *Challenges) Get(addr netip.AddrPort) (challenge uint32, ok bool) {
	if c == nil {
		return 0, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[addr]
	if !ok {
		return 0, false
	}
	s := &c.slots[i]
	s.marked = true
	return s.value, true
}

// Put keeps challenge for addr, in the place of the entry the CLOCK rule
// picks when the cache is full. A nil cache keeps nothing.
func (c *Challenges) Put(addr netip.AddrPort, challenge uint32) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.index[addr]; ok {
		c.slots[i].value = challenge
		return
	}
	if len(c.slots) < c.size {
		c.index[addr] = int32(len(c.slots))
		c.slots = append(c.slots, challengeSlot{addr: addr, value: challenge})
		return
	}
	for c.slots[c.hand].marked {
		c.slots[c.hand].marked = false
		c.hand = (c.hand + 1) % len(c.slots)
	}
	delete(c.index, c.slots[c.hand].addr)
	c.slots[c.hand] = challengeSlot{addr: addr, value: challenge}
	c.index[addr] = int32(c.hand)
	c.hand = (c.hand + 1) % len(c.slots)
}
