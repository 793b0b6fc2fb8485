// Package mastertest runs fake master servers on loopback for tests, in
// the manner of net/http/httptest. A fake lists a serverlist.Fleet with
// the filter evaluator every gsq list shares, paging by the rule of
// master.Page, and each [Profile] plays a kind of master that clients
// meet: Valve's (231 entries a page, about 30 pages a minute to one
// address, then 60 seconds of silence: the Valve Developer Community
// wiki, PredatH0r/SteamServerBrowser#13), one that never ends its list
// with the marker, one that sends the whole list in answer to one query,
// one that ignores filters, one that repeats the seed at the top of each
// page, and a lossy one.
package mastertest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/fakeprofile"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/serverlist"
)

// Profile describes a fake master: how it pages, and how it limits.
type Profile struct {
	// Name is the profile's name (for LookupProfile).
	Name string
	// Description says which masters it plays.
	Description string
	// PageSize is how many entries a reply holds, the end marker
	// included (0: master.DefaultPageSize).
	PageSize int
	// PagesPerMinute is how many pages one source address is sent within
	// a minute from its first; the next query in that minute starts a
	// Silence. 0 sends without limit.
	PagesPerMinute int
	// Silence is how long a source past its budget is ignored.
	Silence time.Duration
	// NoEnd leaves the end marker out: the last page is merely short.
	NoEnd bool
	// AllAtOnce answers every query with all the pages after its seed,
	// one datagram each, as masters that do not page do.
	AllAtOnce bool
	// IgnoreFilter lists every server whatever the filter: filters are
	// advisory.
	IgnoreFilter bool
	// Inclusive starts each page with the seed address again, when it is
	// in the list.
	Inclusive bool
	// Loss is the probability (0..1) that a reply is dropped, drawn from
	// a generator seeded with Seed.
	Loss float64
	Seed uint64
}

// Profiles returns the built-in profiles, in a stable order.
func Profiles() []Profile {
	return []Profile{
		{Name: "valve", Description: "Valve's master: 231 entries a page, 30 pages a minute to one address, then 60 s of silence",
			PagesPerMinute: 30, Silence: time.Minute},
		{Name: "open", Description: "a private master without limits: 231 entries a page"},
		{Name: "no-end", Description: "a master whose list ends with a short page and no 0.0.0.0:0 marker", NoEnd: true},
		{Name: "all-at-once", Description: "a master that answers one query with every page at once", AllAtOnce: true},
		{Name: "advisory", Description: "a master that ignores the filter and lists every server", IgnoreFilter: true},
		{Name: "inclusive", Description: "a master that starts each page with the seed address again", Inclusive: true},
		{Name: "lossy", Description: "a master on a bad network: 30% of replies lost (seed 2)", Loss: 0.3, Seed: 2},
	}
}

// LookupProfile returns the built-in profile called name. The error
// lists the known names.
func LookupProfile(name string) (Profile, error) {
	return fakeprofile.Lookup("mastertest", Profiles(), Profile.name, name)
}

// ProfileNames lists the built-in profiles' names.
func ProfileNames() []string { return fakeprofile.Names(Profiles(), Profile.name) }

func (p Profile) name() string { return p.Name }

// Server is a fake master listening on 127.0.0.1.
type Server struct {
	// Profile is the profile the server plays.
	Profile Profile

	list     master.Handler
	conn     *net.UDPConn
	addr     netip.AddrPort
	done     chan struct{}
	close    sync.Once
	received atomic.Int64
	dropped  atomic.Int64
	sent     atomic.Int64

	mu      sync.Mutex
	sources map[netip.Addr]*budget
	rng     *rand.Rand
	now     func() time.Time // time.Now unless a test sets it
}

// budget is one source's minute.
type budget struct {
	start  time.Time
	pages  int
	silent time.Time // ignored until then
}

// NewServer starts a fake master playing p, listing fleet, on 127.0.0.1
// with a random port. It panics if it cannot listen, as httptest does.
// Close it when done. The fleet may change while the server runs.
func NewServer(p Profile, fleet *serverlist.Fleet) *Server {
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		panic(fmt.Sprintf("mastertest: listen: %v", err))
	}
	s := &Server{
		Profile: p,
		list:    master.FleetHandler(fleet),
		conn:    conn,
		addr:    conn.LocalAddr().(*net.UDPAddr).AddrPort(),
		done:    make(chan struct{}),
		sources: map[netip.Addr]*budget{},
		rng:     rand.New(rand.NewPCG(p.Seed, p.Seed)),
		now:     time.Now,
	}
	go s.serve()
	return s
}

// Addr returns the address the server listens on.
func (s *Server) Addr() netip.AddrPort { return s.addr }

// Received returns the number of queries received, well-formed or not.
func (s *Server) Received() int64 { return s.received.Load() }

// Dropped returns the number of queries not answered for the profile's
// budget, and of replies its Loss dropped.
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Sent returns the number of reply datagrams sent.
func (s *Server) Sent() int64 { return s.sent.Load() }

// Close stops the server and waits for its loop.
func (s *Server) Close() {
	s.close.Do(func() {
		s.conn.Close()
		<-s.done
	})
}

func (s *Server) serve() {
	defer close(s.done)
	buf := make([]byte, serverlist.MaxFilterLen+64)
	for {
		n, from, err := s.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		s.received.Add(1)
		for _, out := range s.answer(netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), buf[:n]) {
			if s.Profile.Loss > 0 && s.draw() < s.Profile.Loss {
				s.dropped.Add(1)
				continue
			}
			if _, err := s.conn.WriteToUDPAddrPort(out, from); err == nil {
				s.sent.Add(1)
			}
		}
	}
}

func (s *Server) draw() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rng.Float64()
}

// answer returns the replies to the datagram b from from, as the profile
// pages and limits.
func (s *Server) answer(from netip.AddrPort, b []byte) [][]byte {
	q, err := master.ParseQuery(b)
	if err != nil {
		return nil
	}
	if !s.allow(from.Addr()) {
		s.dropped.Add(1)
		return nil
	}
	p := s.Profile
	if p.IgnoreFilter {
		q.Filter = ""
	}
	list := s.list.ServeMaster(from, &q)
	size := p.PageSize
	if size == 0 {
		size = master.DefaultPageSize
	}
	var out [][]byte
	seed := q.Seed
	for {
		page, end := master.Page(list, seed, size)
		if p.Inclusive && seed != master.Seed {
			if _, ok := slices.BinarySearchFunc(list, seed, netip.AddrPort.Compare); ok {
				page, end = master.Page(list, seed, size-1)
				page = append([]netip.AddrPort{seed}, page...)
			}
		}
		reply, err := master.AppendReply(nil, page, end && !p.NoEnd)
		if err != nil {
			return out
		}
		out = append(out, reply)
		if end || !p.AllAtOnce || len(page) == 0 {
			return out
		}
		seed = page[len(page)-1]
	}
}

// allow spends a page of from's budget, or reports it silent.
func (s *Server) allow(from netip.Addr) bool {
	p := s.Profile
	if p.PagesPerMinute <= 0 {
		return true
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.sources[from]
	switch {
	case b == nil:
		b = &budget{start: now}
		s.sources[from] = b
	case now.Before(b.silent):
		return false
	case now.Sub(b.start) >= time.Minute:
		*b = budget{start: now}
	}
	if b.pages == p.PagesPerMinute {
		b.silent = now.Add(p.Silence)
		*b = budget{start: b.silent, silent: b.silent}
		return false
	}
	b.pages++
	return true
}
