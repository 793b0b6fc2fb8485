package mastertest

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/serverlist"
)

func TestLookupProfile(t *testing.T) {
	t.Parallel()
	names := ProfileNames()
	if len(names) != len(Profiles()) || !slices.Contains(names, "valve") {
		t.Fatalf("ProfileNames() = %v", names)
	}
	for _, n := range names {
		if p, err := LookupProfile(n); err != nil || p.Name != n || p.Description == "" {
			t.Errorf("LookupProfile(%q) = %+v, %v", n, p, err)
		}
	}
	if _, err := LookupProfile("hl2master"); err == nil || !strings.Contains(err.Error(), "valve, open") {
		t.Errorf("unknown profile: %v, want an error listing the names", err)
	}
}

// Valve's budget on the fake's clock: 30 pages a minute from a source's
// first, then 60 s of silence, then a new minute; each source its own.
func TestValveBudget(t *testing.T) {
	t.Parallel()
	p, _ := LookupProfile("valve")
	s := &Server{Profile: p, sources: map[netip.Addr]*budget{}}
	now := time.Unix(1000, 0)
	s.now = func() time.Time { return now }
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("192.0.2.2")
	for i := range 30 {
		if !s.allow(a) {
			t.Fatalf("page %d refused", i+1)
		}
		now = now.Add(time.Second)
	}
	if s.allow(a) {
		t.Fatal("page 31 within the minute allowed")
	}
	if !s.allow(b) {
		t.Error("another source shares the budget")
	}
	now = now.Add(59 * time.Second)
	if s.allow(a) {
		t.Error("allowed during the silence")
	}
	now = now.Add(2 * time.Second)
	if !s.allow(a) {
		t.Error("refused after the silence")
	}
	// A source that keeps within 30 pages a minute is never silenced.
	c := netip.MustParseAddr("192.0.2.3")
	for i := range 300 {
		if !s.allow(c) {
			t.Fatalf("page %d at 1 every 2.5 s refused", i+1)
		}
		now = now.Add(2500 * time.Millisecond)
	}
}

// The paging quirks, read with the codec: no marker, all at once, the
// seed repeated at the top of each page.
func TestQuirks(t *testing.T) {
	t.Parallel()
	var servers []serverlist.Server
	for i := range 500 {
		servers = append(servers, serverlist.Server{Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)}), 1)})
	}
	fleet := serverlist.NewFleet(servers)
	first, _ := (&master.Query{Region: serverlist.RegionWorld}).AppendBinary(nil)
	seeded, _ := (&master.Query{Region: serverlist.RegionWorld, Seed: servers[229].Addr}).AppendBinary(nil)
	last, _ := (&master.Query{Region: serverlist.RegionWorld, Seed: servers[499].Addr}).AppendBinary(nil)
	from := netip.MustParseAddrPort("127.0.0.1:5")
	read := func(p string, q []byte) (n []int, ends []bool, firsts []netip.AddrPort) {
		prof, _ := LookupProfile(p)
		s := NewServer(prof, fleet)
		defer s.Close()
		for _, reply := range s.answer(from, q) {
			addrs, end, err := master.ParseReply(reply, nil)
			if err != nil {
				t.Fatalf("%s: %v", p, err)
			}
			n, ends = append(n, len(addrs)), append(ends, end)
			if len(addrs) > 0 {
				firsts = append(firsts, addrs[0])
			}
		}
		return n, ends, firsts
	}
	if n, ends, _ := read("open", last); !slices.Equal(n, []int{0}) || !ends[0] {
		t.Errorf("open, after the last: %v %v", n, ends)
	}
	if n, ends, _ := read("no-end", last); !slices.Equal(n, []int{0}) || ends[0] {
		t.Errorf("no-end, after the last: %v %v", n, ends)
	}
	if n, ends, _ := read("all-at-once", first); !slices.Equal(n, []int{231, 231, 38}) || !ends[2] {
		t.Errorf("all-at-once: %v %v", n, ends)
	}
	if n, _, firsts := read("inclusive", seeded); !slices.Equal(n, []int{231}) || firsts[0] != servers[229].Addr {
		t.Errorf("inclusive: %v, first %v", n, firsts)
	}
}
