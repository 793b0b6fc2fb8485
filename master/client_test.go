package master_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/master/mastertest"
	"github.com/gsq-project/gsq/serverlist"
)

// fleet is n servers: app 240 (CS:S), the odd ones with players, the
// first half in Europe.
func fleet(n int) *serverlist.Fleet {
	servers := make([]serverlist.Server, n)
	for i := range servers {
		region := serverlist.RegionEurope
		if i >= n/2 {
			region = serverlist.RegionUSWest
		}
		servers[i] = serverlist.Server{
			Addr:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 3, byte(i >> 8), byte(i)}), 27015),
			AppID: 240, GameDir: "cstrike", Players: i % 2, MaxPlayers: 16, Region: region,
		}
	}
	return serverlist.NewFleet(servers)
}

func addrs(f *serverlist.Fleet, keep func(*serverlist.Server) bool) []netip.AddrPort {
	var out []netip.AddrPort
	for _, s := range f.Servers() {
		if keep == nil || keep(&s) {
			out = append(out, s.Addr)
		}
	}
	return out
}

// The client lists every profile of the fake master: the list comes
// whole, each address once, whatever the paging.
func TestClientProfiles(t *testing.T) {
	t.Parallel()
	f := fleet(1500)
	want := addrs(f, nil)
	for _, name := range mastertest.ProfileNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, err := mastertest.LookupProfile(name)
			if err != nil {
				t.Fatal(err)
			}
			srv := mastertest.NewServer(p, f)
			defer srv.Close()
			c := &master.Client{Timeout: 200 * time.Millisecond, Retries: 6}
			defer c.Close()
			var got []netip.AddrPort
			r, err := c.List(testutil.Context(t), srv.Addr(), master.Query{Region: serverlist.RegionWorld}, func(page []netip.AddrPort) bool {
				got = append(got, page...)
				return true
			})
			if err != nil || !r.Complete {
				t.Fatalf("%v (%+v)", err, r)
			}
			slices.SortFunc(got, netip.AddrPort.Compare)
			if !slices.Equal(got, want) {
				t.Fatalf("%d addresses, want the fleet's %d", len(got), len(want))
			}
			if p.Loss > 0 && (srv.Dropped() == 0 || int64(r.Stats.Resent) < srv.Dropped()) {
				t.Errorf("a lossy master dropped %d replies, and %d requests were resent", srv.Dropped(), r.Stats.Resent)
			}
		})
	}
}

// Filters are advisory: a master that ignores them lists servers that do
// not match, which is why gsq checks each with its own query.
func TestClientAdvisoryFilter(t *testing.T) {
	t.Parallel()
	f := fleet(600)
	q := master.Query{Region: serverlist.RegionEurope, Filter: `\empty\1`}
	flt, _ := serverlist.Parse(q.Filter)
	want := addrs(f, func(s *serverlist.Server) bool { return s.Region == serverlist.RegionEurope && flt.Match(s) })
	c := &master.Client{Timeout: 200 * time.Millisecond}
	defer c.Close()
	for name, wantN := range map[string]int{"open": len(want), "advisory": 300} { // the Europe half
		p, _ := mastertest.LookupProfile(name)
		srv := mastertest.NewServer(p, f)
		var got []netip.AddrPort
		_, err := c.List(testutil.Context(t), srv.Addr(), q, func(page []netip.AddrPort) bool {
			got = append(got, page...)
			return true
		})
		srv.Close()
		if err != nil || len(got) != wantN {
			t.Errorf("%s: %d addresses, want %d (%v)", name, len(got), wantN, err)
		}
		if name == "open" && !slices.Equal(got, want) {
			t.Errorf("open: not the servers that match")
		}
	}
}

// each sees the first page while the second is asked for (the list
// streams: the listing moves on only between calls), and returning false
// stops the listing without an error.
func TestClientStreams(t *testing.T) {
	t.Parallel()
	p, _ := mastertest.LookupProfile("open")
	srv := mastertest.NewServer(p, fleet(1000))
	defer srv.Close()
	c := &master.Client{}
	defer c.Close()
	calls := 0
	r, err := c.List(testutil.Context(t), srv.Addr(), master.Query{Region: serverlist.RegionWorld}, func(page []netip.AddrPort) bool {
		calls++
		if got := srv.Received(); got > 2 {
			t.Errorf("the master had %d queries when the first page was handed out", got)
		}
		return false
	})
	if err != nil || r.Complete || calls != 1 || r.Addresses != master.DefaultPageSize {
		t.Errorf("stopped: %v, %d calls (%+v)", err, calls, r)
	}
}

// Valve's budget: 30 pages a minute to one address, then a minute of
// silence, which the client reads as a timeout after what came.
func TestClientValveBudget(t *testing.T) {
	t.Parallel()
	p, _ := mastertest.LookupProfile("valve")
	srv := mastertest.NewServer(p, fleet(10000))
	defer srv.Close()
	// The silence is the only wait: a page comes well within a second.
	c := &master.Client{Timeout: time.Second, Retries: -1}
	defer c.Close()
	n := 0
	r, err := c.List(testutil.Context(t), srv.Addr(), master.Query{Region: serverlist.RegionWorld}, func(page []netip.AddrPort) bool {
		n += len(page)
		return true
	})
	if !errors.Is(err, master.ErrTimeout) || srv.Sent() != 30 || srv.Dropped() != 1 {
		t.Errorf("%v: the master sent %d pages, and dropped %d queries", err, srv.Sent(), srv.Dropped())
	}
	if r.Pages != 30 || n != (r.Pages-r.Stale)*master.DefaultPageSize {
		t.Errorf("%d addresses in %d pages (%d stale), %+v", n, r.Pages, r.Stale, r.Stats)
	}
}

// A second listing of the same master waits for the first (replies carry
// no id to tell them apart); listings of two masters run at once.
func TestClientOneListingPerMaster(t *testing.T) {
	t.Parallel()
	p, _ := mastertest.LookupProfile("open")
	f := fleet(2000)
	a := mastertest.NewServer(p, f)
	defer a.Close()
	b := mastertest.NewServer(p, f)
	defer b.Close()
	c := &master.Client{}
	defer c.Close()
	var wg sync.WaitGroup
	results := make([]int, 4)
	for i, srv := range []*mastertest.Server{a, a, b, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := c.List(testutil.Context(t), srv.Addr(), master.Query{Region: serverlist.RegionWorld}, nil)
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = r.Addresses
		}()
	}
	wg.Wait()
	for i, n := range results {
		if n != 2000 {
			t.Errorf("listing %d: %d addresses", i, n)
		}
	}
	if a.Received() != 18 || b.Received() != 18 {
		t.Errorf("%d and %d queries, want 9 a listing (no listing disturbed the other)", a.Received(), b.Received())
	}
}

// A closed port is unreachable at once; a canceled context, a closed
// client and a context's deadline end a listing with their errors.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	closed, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := closed.LocalAddr().(*net.UDPAddr).AddrPort()
	closed.Close()
	c := &master.Client{Timeout: 5 * time.Second}
	defer c.Close()
	_, err = c.List(testutil.Context(t), port, master.Query{}, nil)
	if !errors.Is(err, master.ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("closed port: %v", err)
	}

	silent, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	quiet := silent.LocalAddr().(*net.UDPAddr).AddrPort()
	ctx, cancel := context.WithTimeout(testutil.Context(t), 50*time.Millisecond)
	defer cancel()
	_, err = c.List(ctx, quiet, master.Query{}, nil)
	if !errors.Is(err, master.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a context's deadline: %v", err)
	}
	ctx, cancel = context.WithCancel(testutil.Context(t))
	cancel()
	if _, err = c.List(ctx, quiet, master.Query{}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	var oe *master.OpError
	if !errors.As(err, &oe) || oe.Op != "list" || oe.Addr != quiet.String() {
		t.Errorf("not an *OpError naming the master: %#v", err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := c.List(testutil.Context(t), quiet, master.Query{}, nil)
		done <- err
	}()
	// The listing waits on its silent master until Close ends it.
	buf := make([]byte, 64)
	_ = silent.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := silent.ReadFrom(buf); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-done; !errors.Is(err, master.ErrClientClosed) {
		t.Errorf("closed client: %v", err)
	}
	if _, err := c.List(testutil.Context(t), quiet, master.Query{}, nil); !errors.Is(err, master.ErrClientClosed) {
		t.Errorf("after Close: %v", err)
	}
}
