package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/result"
)

// startFleet starts a simulated fleet on free loopback ports.
func startFleet(t *testing.T, cfg sim.FleetConfig) *sim.Fleet {
	t.Helper()
	cfg.Host = "127.0.0.1"
	f, err := sim.StartFleetAnywhere(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func fleetTargets(f *sim.Fleet) string {
	var b strings.Builder
	b.WriteString("# fleet\n\n")
	for i := range f.Len() {
		fmt.Fprintf(&b, "%s\n", f.Addr(i))
	}
	return b.String()
}

// collect runs a scan and returns the results by address.
func collect(t *testing.T, s *Scanner, targets io.Reader) (map[netip.AddrPort]*Outcome, Summary) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	got := map[netip.AddrPort]*Outcome{}
	sum, err := s.Scan(ctx, targets, func(r *Outcome) {
		if _, dup := got[r.Result.Addr]; dup {
			t.Errorf("%s emitted twice", r.Result.Addr)
		}
		got[r.Result.Addr] = r
	})
	if err != nil {
		t.Fatalf("Scan: %v", err)
	}
	return got, sum
}

func checkFleetResult(t *testing.T, f *sim.Fleet, i int, r *Outcome) {
	t.Helper()
	want := sim.FleetContent(i)
	a := a2sOf(r)
	if r.Status != StatusAnswered || a == nil {
		t.Fatalf("server %d: status %v, err %v, a2s %+v", i, r.Status, r.Result.Err, a)
	}
	if a.Info == nil || string(a.Info.Name) != want.Name || a.Info.Port != f.Addr(i).Port() {
		t.Errorf("server %d: info %+v, want name %q", i, a.Info, want.Name)
	}
	if a.Players == nil || len(a.Players.List) != len(want.Players) {
		t.Errorf("server %d: players %+v, want %d", i, a.Players, len(want.Players))
	}
	if a.Rules == nil || len(a.Rules.List) != len(want.Rules) {
		t.Fatalf("server %d: rules %+v, want %d", i, a.Rules, len(want.Rules))
	}
	if v, ok := a.Rules.Get("sv_fleet_index"); !ok || string(v) != fmt.Sprint(i) {
		t.Errorf("server %d: sv_fleet_index = %q", i, v)
	}
}

func TestScanFleet(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sim.FleetConfig{N: 200, Challenge: true})
	// Patient, so that a slow moment (the race detector on a busy
	// machine) does not look like loss.
	s := &Scanner{Concurrency: 64, Timeout: 10 * time.Second, MinTimeout: 10 * time.Second}
	got, sum := collect(t, s, strings.NewReader(fleetTargets(f)))
	if sum.Targets != 200 || sum.Answered != 200 || len(got) != 200 {
		t.Fatalf("summary %+v, %d results", sum, len(got))
	}
	for i := range f.Len() {
		checkFleetResult(t, f, i, got[f.Addr(i)])
	}
	// INFO, INFO with the challenge, PLAYER and RULES: the challenge the
	// INFO earned is reused.
	if st := f.Stats(); st.Requests != 4*200 || st.Challenges != 200 {
		t.Errorf("fleet saw %+v, want 800 requests and 200 challenges", st)
	}
	if sum.Resent != 0 || sum.Sent != 800 {
		t.Errorf("sent %d, resent %d on a lossless loopback", sum.Sent, sum.Resent)
	}
}

func TestScanLossRetries(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sim.FleetConfig{N: 200, Challenge: true, Loss: 0.05, Reorder: 0.05, Duplicate: 0.05, Seed: 7})
	s := &Scanner{Concurrency: 100, Retries: 4, MinTimeout: 20 * time.Millisecond, Timeout: 200 * time.Millisecond}
	got, sum := collect(t, s, strings.NewReader(fleetTargets(f)))
	if sum.Answered < 198 {
		t.Fatalf("answered %d of 200 at 5%% loss: %+v", sum.Answered, sum)
	}
	for i := range f.Len() {
		if r := got[f.Addr(i)]; r.Status == StatusAnswered {
			checkFleetResult(t, f, i, r)
		}
	}
	if sum.Resent == 0 || f.Stats().Dropped == 0 {
		t.Errorf("no loss seen: %+v, fleet %+v", sum, f.Stats())
	}
}

func TestScanSelectedSections(t *testing.T) {
	t.Parallel()
	f := startFleet(t, sim.FleetConfig{N: 5})
	got, sum := collect(t, &Scanner{Query: a2sQuery([]result.Section{result.SectionPlayers})}, strings.NewReader(fleetTargets(f)))
	if sum.Answered != 5 {
		t.Fatalf("%+v", sum)
	}
	for _, r := range got {
		if a := a2sOf(r); a.Info != nil || a.Rules != nil || a.Players == nil {
			t.Errorf("%s: asked for players only, got %+v", r.Result.Addr, a)
		}
	}
	if st := f.Stats(); st.Requests != 5 {
		t.Errorf("fleet saw %d requests, want 5", st.Requests)
	}
}

// silentTargets binds n loopback sockets that never answer.
func silentTargets(t *testing.T, n int) string {
	list, _ := silentServers(t, n)
	return list
}

// silentServers binds n loopback sockets that never answer, and returns
// the list of their addresses and the sockets.
func silentServers(t *testing.T, n int) (string, []*net.UDPConn) {
	t.Helper()
	var b strings.Builder
	var conns []*net.UDPConn
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintln(&b, c.LocalAddr())
		conns = append(conns, c)
	}
	return b.String(), conns
}

func TestScanTimeoutAndBadLines(t *testing.T) {
	t.Parallel()
	list := silentTargets(t, 3) + "not a target\n127.0.0.1:99999\n"
	s := &Scanner{Retries: 1, Timeout: 30 * time.Millisecond, MinTimeout: 10 * time.Millisecond}
	var results []*Outcome
	sum, err := s.Scan(context.Background(), strings.NewReader(list), func(r *Outcome) { results = append(results, r) })
	if err != nil {
		t.Fatal(err)
	}
	if sum.Targets != 5 || sum.TimedOut != 3 || sum.Failed != 2 || len(results) != 5 {
		t.Fatalf("summary %+v, %d results", sum, len(results))
	}
	for _, r := range results {
		switch r.Status {
		case StatusTimedOut:
			for _, err := range []error{sectionErr(r, result.SectionInfo), sectionErr(r, result.SectionPlayers), sectionErr(r, result.SectionRules)} {
				if !errors.Is(err, a2s.ErrTimeout) {
					t.Errorf("%s: section error %v, want a2s.ErrTimeout", r.Result.Addr, err)
				}
			}
		case StatusFailed:
			if !errors.Is(r.Result.Err, ErrBadTarget) || r.Result.Err.Kind != result.KindInvalid || a2sOf(r).Info != nil {
				t.Errorf("line %d: %v, %+v", r.Target.Line, r.Result.Err, a2sOf(r))
			}
		default:
			t.Errorf("unexpected %+v", r)
		}
	}
	// A silent server costs one send and one retry of INFO only.
	if sum.Sent != 6 || sum.Resent != 3 {
		t.Errorf("sent %d, resent %d; want 6 and 3", sum.Sent, sum.Resent)
	}
}

func TestScanCancel(t *testing.T) {
	t.Parallel()
	// Canceling a scan ends every target in flight with a canceled result:
	// every target read gets its line, and the summary counts them.
	list, conns := silentServers(t, 50)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Scanner{Timeout: 20 * time.Second, MinTimeout: 20 * time.Second, Retries: 5, Deadline: -1}
	type outcome struct {
		sum Summary
		err error
	}
	done := make(chan outcome, 1)
	var results []*Outcome
	go func() {
		sum, err := s.Scan(ctx, strings.NewReader(list), func(r *Outcome) { results = append(results, r) })
		done <- outcome{sum, err}
	}()
	// Cancel once every target is in flight: each server got its request.
	buf := make([]byte, 64)
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	var o outcome
	select {
	case o = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Scan did not return after cancellation")
	}
	if !errors.Is(o.err, context.Canceled) {
		t.Errorf("Scan returned %v, want context.Canceled", o.err)
	}
	if o.sum.Targets != 50 || o.sum.Canceled != 50 || len(results) != 50 {
		t.Fatalf("summary %+v, %d results", o.sum, len(results))
	}
	for _, r := range results {
		if r.Status != StatusCanceled || r.Result.Err.Kind != result.KindCanceled || !errors.Is(sectionErr(r, result.SectionInfo), context.Canceled) || errors.Is(sectionErr(r, result.SectionInfo), a2s.ErrTimeout) {
			t.Errorf("%s: status %v, %+v", r.Result.Addr, r.Status, a2sOf(r))
		}
	}
}

// limitServer answers A2S_INFO on n ports after a delay, recording how
// many requests were open at once.
type limitServer struct {
	mu       sync.Mutex
	open     int
	maxOpen  int
	requests int
}

func startLimitServer(t *testing.T, n int, delay time.Duration) (*limitServer, string) {
	ls := &limitServer{}
	in := &a2s.Info{Format: a2s.TypeInfoReply, Name: a2s.Text("limited")}
	reply, err := in.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		fmt.Fprintln(&b, c.LocalAddr())
		go func() {
			buf := make([]byte, 1500)
			for {
				_, from, err := c.ReadFromUDPAddrPort(buf)
				if err != nil {
					return
				}
				ls.mu.Lock()
				ls.requests++
				ls.open++
				ls.maxOpen = max(ls.maxOpen, ls.open)
				ls.mu.Unlock()
				time.Sleep(delay) // the server takes its time to answer
				ls.mu.Lock()
				ls.open--
				ls.mu.Unlock()
				c.WriteToUDPAddrPort(reply, from)
			}
		}()
	}
	return ls, b.String()
}

func TestScanMaxPerIP(t *testing.T) {
	t.Parallel()
	ls, list := startLimitServer(t, 20, 5*time.Millisecond)
	s := &Scanner{Query: a2sInfo, MaxPerIP: 3, Concurrency: 20, Timeout: 5 * time.Second, MinTimeout: 5 * time.Second}
	_, sum := collect(t, s, strings.NewReader(list))
	if sum.Answered != 20 {
		t.Fatalf("%+v", sum)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.maxOpen > 3 || ls.maxOpen < 1 {
		t.Errorf("%d servers of one IP queried at once, limit 3", ls.maxOpen)
	}
}

func TestScanHostInterval(t *testing.T) {
	t.Parallel()
	// Each server is listed three times: its queries must be one at a
	// time and HostInterval apart.
	ls, list := startLimitServer(t, 4, 0)
	const gap = 100 * time.Millisecond
	var sends sendTimes
	s := &Scanner{Query: a2sInfo, HostInterval: gap, Timeout: 5 * time.Second, MinTimeout: 5 * time.Second, Debug: sends.hook}
	sum, err := s.Scan(context.Background(), strings.NewReader(list+list+list), nil)
	if err != nil {
		t.Fatal(err)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if sum.Answered != 12 || ls.requests != 12 {
		t.Fatalf("%+v, %d requests", sum, ls.requests)
	}
	sends.check(t, gap)
	if len(sends.at) != 4 {
		t.Errorf("requests to %d servers, want 4", len(sends.at))
	}
}

// lineSource generates a target list line by line, never as a whole, and
// counts the bytes handed out.
type lineSource struct {
	addrs []string
	n, i  int
	pend  []byte
	read  atomic.Int64
	check func(read int64) // if set, called with the bytes read so far at each Read
}

func (l *lineSource) Read(p []byte) (int, error) {
	for len(l.pend) < len(p) && l.i < l.n {
		l.pend = append(l.pend, l.addrs[l.i%len(l.addrs)]...)
		l.pend = append(l.pend, '\n')
		l.i++
	}
	if len(l.pend) == 0 {
		return 0, io.EOF
	}
	n := copy(p, l.pend)
	l.pend = append(l.pend[:0], l.pend[n:]...)
	read := l.read.Add(int64(n))
	if l.check != nil {
		l.check(read)
	}
	return n, nil
}

func TestScanStreamsTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("30k queries")
	}
	f := startFleet(t, sim.FleetConfig{N: 200})
	// Enough targets that holding their results would show (30k results
	// take tens of MB), far more than are ever in flight.
	n := 30_000
	if testutil.Race {
		n = 10_000 // the race detector makes each query ten times slower
	}
	src := &lineSource{n: n}
	for i := range f.Len() {
		src.addrs = append(src.addrs, f.Addr(i).String())
	}
	lineLen := int64(len(src.addrs[0]) + 1)
	const concurrency = 256
	s := &Scanner{Query: a2sInfo, Concurrency: concurrency, Rate: -1}

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	var results int
	var maxAhead int64
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()
	sum, err := s.Scan(ctx, src, func(r *Outcome) {
		results++
		maxAhead = max(maxAhead, src.read.Load()-int64(results)*lineLen)
		if results%10_000 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	// The reader is never far ahead of the results: the targets in flight
	// and taken ahead of the dispatcher, the line reader's buffer and the
	// source's own chunk.
	if limit := (concurrency+feedBuffer+64)*lineLen + 16<<10 + 32<<10; maxAhead > limit {
		t.Errorf("the scan read up to %d bytes ahead of its results, limit %d", maxAhead, limit)
	}
	if sum.Targets != n || sum.Answered < n*999/1000 {
		t.Fatalf("%+v", sum)
	}
	// Holding 30k targets and results would take tens of MB.
	if grow := int64(peak) - int64(base); grow > 8<<20 {
		t.Errorf("heap in use grew by %d bytes while scanning %d targets", grow, n)
	}
	t.Logf("heap in use: base %d, peak %d; %v", base, peak, sum.Elapsed)
}

// closedTargets returns n loopback ports nobody listens on. They are on
// 127.0.0.2, where the other tests bind nothing that could take them.
func closedTargets(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for range n {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, c.LocalAddr())
		c.Close()
	}
	return b.String()
}

func TestScanLiveServersFirst(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("closed ports look silent where ICMP errors are not reported")
	}
	// A rate-limited scan of a list whose live servers come first, then
	// many closed ports, all in flight at once. Every first request waits
	// for its token; the live servers' next requests go before the first
	// requests still waiting, so they are done before most closed ports
	// have been asked at all. (Sending in arrival order, every closed port
	// would be asked, and reported, before any live server is done.)
	const live, closed = 50, 400
	f := startFleet(t, sim.FleetConfig{N: live, Challenge: true})
	list := fleetTargets(f) + closedTargets(t, closed)
	// Patient, so that no request is resent: each closed port gets one
	// datagram, each live server four. The kernel limits the ICMP errors
	// it sends per second, host-wide (net.ipv4.icmp_msgs_per_sec): a closed
	// port whose error was not sent ends at the Deadline, which is long
	// enough for a live server's four exchanges on a loaded machine (with
	// one second, a CI run at load 15 saw one live server time out).
	s := &Scanner{Rate: 1000, Burst: 1, Timeout: 10 * time.Second, MinTimeout: 10 * time.Second, Deadline: 5 * time.Second}
	var order []Status
	sum, err := s.Scan(testutil.Context(t), strings.NewReader(list), func(r *Outcome) { order = append(order, r.Status) })
	if err != nil {
		t.Fatal(err)
	}
	// A closed port costs one datagram: INFO, then the ICMP error.
	if sum.Answered != live || sum.Unreachable+sum.TimedOut != closed || sum.Unreachable < closed/2 || sum.Sent != 4*live+closed {
		t.Fatalf("%+v", sum)
	}
	answered, early := 0, 0
	for _, st := range order {
		if st == StatusAnswered {
			if answered++; answered == live {
				break
			}
		} else {
			early++
		}
	}
	if early > closed/2 {
		t.Errorf("%d of %d closed ports were done before the last live server", early, closed)
	}
}

func TestScanReadError(t *testing.T) {
	t.Parallel()
	// A list that fails half-way: the targets read are scanned, and Scan
	// returns the read error.
	boom := errors.New("disk on fire")
	list := io.MultiReader(strings.NewReader("bad:x\nworse:y\n"), iotest.ErrReader(boom))
	var results int
	sum, err := (&Scanner{}).Scan(testutil.Context(t), list, func(*Outcome) { results++ })
	if !errors.Is(err, boom) || sum.Targets != 2 || results != 2 {
		t.Fatalf("err %v, %+v, %d results", err, sum, results)
	}
}

func TestScanCancelWaiting(t *testing.T) {
	t.Parallel()
	// Targets waiting for their turn (a server listed twice, an IP address
	// at MaxPerIP) are canceled too: every target read gets its result.
	list, conns := silentServers(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := &Scanner{MaxPerIP: 2, Timeout: 20 * time.Second, MinTimeout: 20 * time.Second, Deadline: -1}
	done := make(chan Summary, 1)
	var results []*Outcome
	go func() {
		sum, err := s.Scan(ctx, strings.NewReader(list+list+list), func(r *Outcome) { results = append(results, r) })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Scan returned %v", err)
		}
		done <- sum
	}()
	buf := make([]byte, 64)
	conns[0].SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, _, err := conns[0].ReadFromUDPAddrPort(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	sum := <-done
	// The scan may not have read every line when it was canceled; those
	// it read all get a result.
	if sum.Targets < 1 || sum.Canceled != sum.Targets || len(results) != sum.Targets {
		t.Fatalf("summary %+v, %d results", sum, len(results))
	}
	for _, r := range results {
		if r.Status != StatusCanceled {
			t.Errorf("%s: status %v", r.Result.Addr, r.Status)
		}
	}
}
