package monitor

import (
	"net/netip"
	"slices"
)

// Roster is the membership of one discovery source: the servers it has
// listed, kept until they are missing from RetireAfter listings in a row,
// and at most MaxServers of them. It is pure (no I/O, no clock) and not
// safe for concurrent use.
//
// A listing is read as it comes: Begin, Saw for every address listed,
// End. A listing that failed or was cut short adds the servers it saw but
// counts none missing: an incomplete list is no evidence that a server
// is gone.
type Roster struct {
	src     *Discovery
	members map[netip.AddrPort]*rosterEntry
	// Full counts the servers of the last listing left out because the
	// roster was full.
	Full int
}

type rosterEntry struct {
	missed int  // listings in a row without the server
	seen   bool // listed by the listing being read
	added  bool // first listed by the listing being read
}

// NewRoster returns the empty roster of src.
func NewRoster(src *Discovery) *Roster {
	return &Roster{src: src, members: map[netip.AddrPort]*rosterEntry{}}
}

// Begin starts reading a listing.
func (r *Roster) Begin() {
	r.Full = 0
	for _, e := range r.members {
		e.seen = false
	}
}

// Len is the number of members.
func (r *Roster) Len() int { return len(r.members) }

// Members returns the members, in address order.
func (r *Roster) Members() []netip.AddrPort {
	out := make([]netip.AddrPort, 0, len(r.members))
	for addr := range r.members {
		out = append(out, addr)
	}
	slices.SortFunc(out, netip.AddrPort.Compare)
	return out
}

// Saw records that the listing lists addr, and reports whether addr is a
// member now (false: the roster is full).
func (r *Roster) Saw(addr netip.AddrPort) bool {
	if e, ok := r.members[addr]; ok {
		e.seen = true
		return true
	}
	if len(r.members) >= r.src.MaxServers {
		r.Full++
		return false
	}
	r.members[addr] = &rosterEntry{seen: true, added: true}
	return true
}

// End ends the listing, complete or not, and returns the servers it
// added and those it retired, each in address order.
func (r *Roster) End(complete bool) (added, retired []netip.AddrPort) {
	for addr, e := range r.members {
		switch {
		case e.seen:
			if e.added {
				added = append(added, addr)
				e.added = false
			}
			e.missed = 0
		case complete:
			e.missed++
			if e.missed >= r.src.RetireAfter {
				retired = append(retired, addr)
				delete(r.members, addr)
			}
		}
	}
	slices.SortFunc(added, netip.AddrPort.Compare)
	slices.SortFunc(retired, netip.AddrPort.Compare)
	return added, retired
}
