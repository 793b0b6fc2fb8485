package master

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/serverlist"
)

// serve starts s on a loopback socket and returns its address; the
// server shuts down when the test ends.
func serve(t *testing.T, s *Server) netip.AddrPort {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(pc) }()
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-served; !errors.Is(err, ErrServerClosed) {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
	return pc.LocalAddr().(*net.UDPAddr).AddrPort()
}

// list lists the master at addr with a new client, and returns the
// addresses in the order they came.
func list(t *testing.T, c *Client, addr netip.AddrPort, q Query) ([]netip.AddrPort, *Result, error) {
	t.Helper()
	var got []netip.AddrPort
	r, err := c.List(testutil.Context(t), addr, q, func(page []netip.AddrPort) bool {
		got = append(got, page...)
		return true
	})
	return got, r, err
}

// The server lists a fleet of 3,000 through the shared filter evaluator,
// page by page, to our client: the filter and the region are applied,
// and the pages are Valve's.
func TestServerListsFleet(t *testing.T) {
	t.Parallel()
	fleet := testFleet(3000)
	addr := serve(t, &Server{Handler: FleetHandler(fleet)})
	c := &Client{Timeout: time.Second}
	defer c.Close()
	var pages []int
	r, err := c.List(testutil.Context(t), addr, Query{Region: serverlist.RegionWorld}, func(page []netip.AddrPort) bool {
		pages = append(pages, len(page))
		return true
	})
	if err != nil || !r.Complete || r.Addresses != 3000 || r.Pages != 13 {
		t.Fatalf("all: %v (%+v)", err, r)
	}
	sum := 0
	for _, n := range pages {
		sum += n
	}
	if sum != 3000 || pages[0] != DefaultPageSize {
		t.Errorf("pages of %v", pages)
	}
	got, _, err := list(t, c, addr, Query{Region: serverlist.RegionEurope, Filter: `\appid\10\empty\1`})
	var want []netip.AddrPort
	for _, s := range fleet.Servers() {
		if s.Players > 0 {
			want = append(want, s.Addr)
		}
	}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("\\empty\\1: %d of %d, %v", len(got), len(want), err)
	}
	for _, q := range []Query{
		{Region: serverlist.RegionAsia},
		{Region: serverlist.RegionWorld, Filter: `\appid\11`},
		{Region: serverlist.RegionWorld, Filter: `\nor\1`}, // does not parse: nothing
	} {
		got, r, err := list(t, c, addr, q)
		if err != nil || len(got) != 0 || !r.Complete || r.Pages != 1 {
			t.Errorf("%+v: %v, %v (%+v)", q, got, err, r)
		}
	}
}

// Past its budget a source is not answered: the listing times out with
// what came, and resumes after Next once the budget is back.
func TestServerRateLimit(t *testing.T) {
	t.Parallel()
	s := &Server{Handler: FleetHandler(testFleet(3000)), RateLimit: 1e-9, RateBurst: 4}
	addr := serve(t, s)
	// The silence is the only wait: a page comes well within 500 ms.
	c := &Client{Timeout: 500 * time.Millisecond, Retries: -1}
	defer c.Close()
	got, r, err := list(t, c, addr, Query{Region: serverlist.RegionWorld})
	if !errors.Is(err, ErrTimeout) || len(got) != 4*DefaultPageSize || r.Next != got[len(got)-1] || r.Complete {
		t.Fatalf("past the budget: %v, %d addresses (%+v)", err, len(got), r)
	}
	if !strings.Contains(err.Error(), "page 5") {
		t.Errorf("error %q does not say which page went unanswered", err)
	}
	// Another source has its own budget; this one resumes where it was.
	s2 := &Server{Handler: FleetHandler(testFleet(3000))}
	addr2 := serve(t, s2)
	rest, r, err := list(t, c, addr2, Query{Region: serverlist.RegionWorld, Seed: r.Next})
	if err != nil || len(rest) != 3000-4*DefaultPageSize || slices.Contains(rest, got[0]) {
		t.Errorf("resumed: %v, %d addresses (%+v)", err, len(rest), r)
	}
}

// A Handler's unsorted list is paged in order; an address the protocol
// cannot carry stops the page, which is logged, not sent; Debug sees
// both ways; LocalAddr reports the socket.
func TestServerHandler(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var logs, debug []string
	var seen *Query
	h := HandlerFunc(func(from netip.AddrPort, q *Query) []netip.AddrPort {
		mu.Lock()
		seen = q
		mu.Unlock()
		if q.Filter == `\bad\1` {
			return []netip.AddrPort{netip.MustParseAddrPort("[2001:db8::1]:1")}
		}
		return []netip.AddrPort{netip.MustParseAddrPort("10.0.0.3:1"), netip.MustParseAddrPort("10.0.0.1:1"), netip.MustParseAddrPort("10.0.0.2:1")}
	})
	s := &Server{Handler: h, Logf: func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, fmt.Sprintf(format, args...))
	}, Debug: func(dir string, peer netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		debug = append(debug, dir)
	}}
	addr := serve(t, s)
	c := &Client{Timeout: 100 * time.Millisecond, Retries: -1}
	defer c.Close()
	got, _, err := list(t, c, addr, Query{Region: serverlist.RegionAfrica, Filter: `\gamedir\valve`})
	if got := s.LocalAddr(); got == nil || got.String() != addr.String() { // Serve has read a query
		t.Errorf("LocalAddr() = %v, want %v", got, addr)
	}
	if err != nil || len(got) != 3 || !slices.IsSortedFunc(got, netip.AddrPort.Compare) {
		t.Errorf("unsorted list: %v, %v", got, err)
	}
	mu.Lock()
	if seen == nil || seen.Region != serverlist.RegionAfrica || seen.Filter != `\gamedir\valve` || seen.Seed != Seed {
		t.Errorf("the handler saw %+v", seen)
	}
	mu.Unlock()
	if _, _, err := list(t, c, addr, Query{Filter: `\bad\1`}); !errors.Is(err, ErrTimeout) {
		t.Errorf("an IPv6 list: %v, want no answer", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logs) != 1 || !strings.Contains(logs[0], "2001:db8::1") {
		t.Errorf("logs %q", logs)
	}
	if !slices.Contains(debug, "recv") || !slices.Contains(debug, "send") {
		t.Errorf("Debug saw %v", debug)
	}
}

// What is not a query is not answered, nor is anything when the server
// has no handler.
func TestServerIgnores(t *testing.T) {
	t.Parallel()
	var rec recorder
	s := &Server{Handler: FleetHandler(testFleet(10)), RateLimit: -1, GlobalLimit: -1}
	from := netip.MustParseAddrPort("192.0.2.7:5000")
	for _, b := range [][]byte{nil, []byte("1"), []byte("1\xff0.0.0.0:0\x00"), []byte("2\xff0.0.0.0:0\x00\x00"),
		[]byte("1\xffhost:1\x00\x00\x00\x00\x00\x00\x00"), testutil.Unhex(t, "FFFFFFFF660A000000000000")} {
		s.HandlePacket(&rec, from, b)
	}
	(&Server{}).HandlePacket(&rec, from, testutil.Unhex(t, notesQuery))
	if len(rec.sent) != 0 {
		t.Errorf("%d replies to what is not a query", len(rec.sent))
	}
	s.HandlePacket(&rec, from, testutil.Unhex(t, notesQuery))
	if len(rec.sent) != 1 {
		t.Errorf("%d replies to the notes' query", len(rec.sent))
	}
}

// Shutdown before Serve makes ListenAndServe return ErrServerClosed.
func TestServerShutdownFirst(t *testing.T) {
	t.Parallel()
	s := &Server{Addr: "127.0.0.1:0", Handler: FleetHandler(testFleet(1))}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.ListenAndServe(); !errors.Is(err, ErrServerClosed) {
		t.Errorf("ListenAndServe after Shutdown: %v", err)
	}
}
