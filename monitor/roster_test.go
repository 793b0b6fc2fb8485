package monitor

import (
	"net/netip"
	"slices"
	"testing"
)

func addrs(ports ...int) []netip.AddrPort {
	out := make([]netip.AddrPort, len(ports))
	for i, p := range ports {
		out[i] = netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(p))
	}
	return out
}

func listing(r *Roster, complete bool, ports ...int) (added, retired []netip.AddrPort) {
	r.Begin()
	for _, a := range addrs(ports...) {
		r.Saw(a)
	}
	return r.End(complete)
}

func TestRoster(t *testing.T) {
	r := NewRoster(&Discovery{RetireAfter: 2, MaxServers: 4})
	check := func(step string, gotAdded, gotRetired []netip.AddrPort, wantAdded, wantRetired []int, members ...int) {
		t.Helper()
		if !slices.Equal(gotAdded, addrs(wantAdded...)) || !slices.Equal(gotRetired, addrs(wantRetired...)) || !slices.Equal(r.Members(), addrs(members...)) {
			t.Errorf("%s: added %v retired %v members %v; want %v %v %v", step, gotAdded, gotRetired, r.Members(), wantAdded, wantRetired, members)
		}
	}
	a, x := listing(r, true, 3, 1, 2)
	check("first", a, x, []int{1, 2, 3}, nil, 1, 2, 3)
	a, x = listing(r, true, 1, 2, 4)
	check("3 missing once", a, x, []int{4}, nil, 1, 2, 3, 4)
	// Full: 3 is still a member while the listing is read, so 5 and 6 are
	// left out, and counted; 3, missing twice, is retired at its end.
	a, x = listing(r, true, 1, 2, 4, 5, 6)
	check("3 missing twice: retired; full", a, x, nil, []int{3}, 1, 2, 4)
	if r.Full != 2 {
		t.Errorf("Full %d, want 2", r.Full)
	}
	a, x = listing(r, true, 1, 2, 4, 5, 6)
	check("room again", a, x, []int{5}, nil, 1, 2, 4, 5)
	// An incomplete listing counts no one missing.
	for range 3 {
		a, x = listing(r, false, 1)
		check("incomplete", a, x, nil, nil, 1, 2, 4, 5)
	}
	// A server back before its retirement starts counting again.
	listing(r, true, 1, 2, 4)
	a, x = listing(r, true, 1, 2, 4, 5)
	check("5 back", a, x, nil, nil, 1, 2, 4, 5)
	listing(r, true, 1, 2, 4)
	a, x = listing(r, true)
	check("5 missing twice, the others once", a, x, nil, []int{5}, 1, 2, 4)
	a, x = listing(r, true)
	check("the others twice", a, x, nil, []int{1, 2, 4})
}

// TestRosterBounded lists far more servers than the roster takes: it
// never holds more than MaxServers.
func TestRosterBounded(t *testing.T) {
	r := NewRoster(&Discovery{RetireAfter: 1, MaxServers: 100})
	for round := range 5 {
		r.Begin()
		for i := range 10_000 {
			r.Saw(netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(round), byte(i >> 8), byte(i)}), 27015))
		}
		r.End(true)
		if r.Len() > 100 {
			t.Fatalf("round %d: %d members", round, r.Len())
		}
	}
	if r.Full == 0 {
		t.Error("Full not counted")
	}
}
