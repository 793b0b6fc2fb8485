package scan

import (
	"hash/maphash"
	"strconv"
	"strings"
)

// Seen is the set of the servers a target list has named so far: the one
// rule by which gsq scan and gsq monitor -f find a list's duplicates and
// skip them. Two targets are the same server when their addresses are
// equal (an IP literal) or their host names, in any case, and ports are.
//
// A server is kept as a 64-bit hash of its address (about 16 bytes each,
// where the addresses would take 60): two servers of a list of a million
// share a hash with odds of one in 30 million. The zero value is ready to
// use; a Seen is not safe for concurrent use.
type Seen struct {
	seed maphash.Seed
	m    map[uint64]struct{}
}

// Add adds t, a target without Err, and reports whether it is new:
// false means a duplicate.
func (s *Seen) Add(t Target) bool {
	if s.m == nil {
		s.seed, s.m = maphash.MakeSeed(), map[uint64]struct{}{}
	}
	var h uint64
	if t.Addr.IsValid() {
		h = maphash.Comparable(s.seed, t.Addr)
	} else {
		h = maphash.String(s.seed, strings.ToLower(t.Host)+" "+strconv.Itoa(int(t.Port)))
	}
	if _, dup := s.m[h]; dup {
		return false
	}
	s.m[h] = struct{}{}
	return true
}
