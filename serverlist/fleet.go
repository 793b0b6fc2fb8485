package serverlist

import (
	"net/netip"
	"slices"
	"sync"
)

// Fleet is a set of server descriptions that a list answers from: the
// fake Web API, the fake master and master.Server list one, and a
// simulated fleet (gsq serve --fleet) describes itself as one (see
// [FromA2S]). It keeps its servers in address order (IP, then port),
// the order the master protocol pages in, one per address. It is safe for
// concurrent use; Set replaces the servers while lists read them, so a
// test can add servers and retire others between two listings.
type Fleet struct {
	mu      sync.RWMutex
	servers []Server // sorted by Addr, one per Addr
}

// NewFleet returns a fleet of servers (see Set).
func NewFleet(servers []Server) *Fleet {
	f := new(Fleet)
	f.Set(servers)
	return f
}

// Set replaces the fleet's servers with a copy of servers, sorted by
// address; of two servers with the same address the later one stays.
func (f *Fleet) Set(servers []Server) {
	s := slices.Clone(servers)
	slices.SortStableFunc(s, func(a, b Server) int { return a.Addr.Compare(b.Addr) })
	s = compactLast(s)
	f.mu.Lock()
	f.servers = s
	f.mu.Unlock()
}

// compactLast keeps, of each run of servers with one address, the last.
func compactLast(s []Server) []Server {
	out := s[:0]
	for i := range s {
		if i+1 < len(s) && s[i+1].Addr == s[i].Addr {
			continue
		}
		out = append(out, s[i])
	}
	return out
}

// Servers returns a copy of the fleet's servers, in address order.
func (f *Fleet) Servers() []Server {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.Clone(f.servers)
}

// Len returns the number of servers.
func (f *Fleet) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.servers)
}

// Lookup returns the server at addr.
func (f *Fleet) Lookup(addr netip.AddrPort) (Server, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i, ok := slices.BinarySearchFunc(f.servers, addr, func(s Server, a netip.AddrPort) int { return s.Addr.Compare(a) })
	if !ok {
		return Server{}, false
	}
	return f.servers[i], true
}

// Select calls each, in address order, with every server in region that
// matches flt, up to limit of them (no limit when limit is 0 or less), and
// returns how many it called each with and whether more servers matched
// beyond the limit. region is a region, or RegionWorld (or any negative)
// for every region. A filter holding `\collapse_addr_hash\1`
// keeps the first server of each IP address. each may stop the walk by
// returning false. The server each gets is valid until it returns.
func (f *Fleet) Select(flt Filter, region Region, limit int, each func(*Server) bool) (n int, more bool) {
	collapse := flt.collapses()
	var seen map[netip.Addr]bool
	if collapse {
		seen = map[netip.Addr]bool{}
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	for i := range f.servers {
		s := &f.servers[i]
		if region >= 0 && region != RegionWorld && s.Region != region || !flt.Match(s) {
			continue
		}
		if collapse {
			if seen[s.Addr.Addr()] {
				continue
			}
			seen[s.Addr.Addr()] = true
		}
		if limit > 0 && n == limit {
			return n, true
		}
		n++
		if !each(s) {
			return n, false
		}
	}
	return n, false
}

// collapses reports whether f asks for one server per address.
func (f Filter) collapses() bool {
	for _, t := range f.Terms {
		if t.Key == "collapse_addr_hash" && t.Value == "1" {
			return true
		}
	}
	return false
}
