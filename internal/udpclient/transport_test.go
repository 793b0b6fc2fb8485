package udpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

func open(t *testing.T, cfg Config) *Transport {
	t.Helper()
	cfg.LocalAddr = netip.MustParseAddrPort("127.0.0.1:0")
	tr, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// echoServer answers every datagram "qID" on a loopback socket with "rID",
// and "qID!" with two copies, until the test ends.
func echoServer(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			reply := append([]byte{'r'}, bytes.TrimSuffix(buf[1:n], []byte("!"))...)
			c.WriteToUDPAddrPort(reply, from)
			if bytes.HasSuffix(buf[:n], []byte("!")) {
				c.WriteToUDPAddrPort(reply, from)
			}
		}
	}()
	return c.LocalAddr().(*net.UDPAddr).AddrPort()
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) netip.AddrPort {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	addr := c.LocalAddr().(*net.UDPAddr).AddrPort()
	c.Close()
	return addr
}

// echoConv is a toy protocol's conversation: it sends "qID" until "rID"
// comes back, Retries times after Timeout each, ignoring other replies.
type echoConv struct {
	id       string
	timeout  time.Duration
	retries  int
	sent     int
	due      bool
	expiry   time.Time
	done     bool
	heard    bool
	err      error
	received int
}

func newEcho(id string, timeout time.Duration, retries int) *echoConv {
	return &echoConv{id: id, timeout: timeout, retries: retries, due: true}
}

func (c *echoConv) Pending() bool { return c.due && !c.done }
func (c *echoConv) AppendRequest(b []byte, now time.Time) ([]byte, bool) {
	if !c.Pending() {
		return b, false
	}
	c.due = false
	c.expiry = now.Add(Backoff(c.timeout, 0, c.sent))
	c.sent++
	return append(append(b, 'q'), c.id...), true
}
func (c *echoConv) Receive(b []byte, now time.Time) {
	if len(b) > 0 && b[0] == 'r' && string(b[1:]) == c.id && !c.done {
		c.received++
		c.heard, c.done = true, true
	}
}
func (c *echoConv) Wake() time.Time {
	if c.done {
		return time.Time{}
	}
	return c.expiry
}
func (c *echoConv) Tick(now time.Time) {
	if c.done || now.Before(c.expiry) {
		return
	}
	if c.sent > c.retries {
		c.Fail(errors.New("timeout"))
		return
	}
	c.due = true
}
func (c *echoConv) Done() bool                       { return c.done }
func (c *echoConv) Heard() bool                      { return c.heard }
func (c *echoConv) Resending() bool                  { return c.sent > 0 }
func (c *echoConv) RoundTrip() (time.Duration, bool) { return 0, false }
func (c *echoConv) Challenge() (uint32, bool)        { return 0, false }
func (c *echoConv) Fail(err error) {
	if !c.done {
		c.done, c.err = true, err
	}
}
func (c *echoConv) Unreachable(err error) { c.Fail(fmt.Errorf("unreachable: %w", err)) }

// Two clients share one Transport: conversations with two servers, and
// two with the same server at once, each get their own answer; a copy of
// a server's datagram goes to each peer of that server.
func TestExchangeSharedByClients(t *testing.T) {
	t.Parallel()
	tr := open(t, Config{Name: "test"})
	a, b := echoServer(t), echoServer(t)
	var wg sync.WaitGroup
	convs := make([]*echoConv, 40)
	for i := range convs {
		convs[i] = newEcho(fmt.Sprint(i), time.Second, 3)
		srv := a
		if i%2 == 1 {
			srv = b
		}
		wg.Go(func() { tr.Exchange(testutil.Context(t), srv, convs[i], nil) })
	}
	wg.Wait()
	for i, c := range convs {
		if c.err != nil || !c.done || c.received != 1 {
			t.Errorf("conversation %d: done %v, received %d, %v", i, c.done, c.received, c.err)
		}
	}
}

// recorder is a Peer that keeps what it is handed.
type recorder struct {
	mu      sync.Mutex
	got     []string
	reports []error
	failed  []error
	seen    chan struct{}
}

func newRecorder() *recorder { return &recorder{seen: make(chan struct{}, 100)} }

func (r *recorder) HandleDatagram(from netip.AddrPort, b []byte, now time.Time, out *Batch) {
	r.mu.Lock()
	r.got = append(r.got, string(b))
	r.mu.Unlock()
	r.seen <- struct{}{}
}
func (r *recorder) HandleUnreachable(from netip.AddrPort, err error) {
	r.mu.Lock()
	r.reports = append(r.reports, err)
	r.mu.Unlock()
	r.seen <- struct{}{}
}
func (r *recorder) HandleSendError(to netip.AddrPort, err error) {
	r.mu.Lock()
	r.failed = append(r.failed, err)
	r.mu.Unlock()
	r.seen <- struct{}{}
}

func (r *recorder) wait(t *testing.T, n int) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for range n {
		select {
		case <-r.seen:
		case <-timer.C:
			t.Fatalf("waited for %d events", n)
		}
	}
}

func (r *recorder) datagrams() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.got...)
}

// Demultiplexing: each server's datagrams go to the peers attached to
// it, every one of them, and to no one else; a datagram from a server
// nobody is attached to counts as stray.
func TestDemultiplexing(t *testing.T) {
	t.Parallel()
	tr := open(t, Config{Name: "test"})
	a, b := echoServer(t), echoServer(t)
	ra1, ra2, rb := newRecorder(), newRecorder(), newRecorder()
	var la1, la2, lb Link
	for _, att := range []struct {
		l *Link
		a netip.AddrPort
		p Peer
	}{{&la1, a, ra1}, {&la2, a, ra2}, {&lb, b, rb}} {
		if err := tr.Attach(att.l, att.a, att.p); err != nil {
			t.Fatal(err)
		}
	}
	tr.Send([]byte("qa"), a)
	tr.Send([]byte("qb!"), b)
	ra1.wait(t, 1)
	ra2.wait(t, 1)
	rb.wait(t, 2)
	for name, tc := range map[string]struct {
		r    *recorder
		want string
	}{"a1": {ra1, "[ra]"}, "a2": {ra2, "[ra]"}, "b": {rb, "[rb rb]"}} {
		if got := fmt.Sprint(tc.r.datagrams()); got != tc.want {
			t.Errorf("peer %s got %s, want %s", name, got, tc.want)
		}
	}
	// Detached, a peer gets nothing more; its server's datagrams stray.
	tr.Detach(&la1)
	tr.Detach(&la2)
	tr.Send([]byte("qa2"), a)
	tr.Send([]byte("qb2"), b) // b's answer comes after a's: a's is read by then
	rb.wait(t, 1)
	if len(ra1.datagrams()) != 1 || len(ra2.datagrams()) != 1 {
		t.Errorf("detached peers got %v and %v", ra1.datagrams(), ra2.datagrams())
	}
	deadline := time.Now().Add(10 * time.Second)
	for tr.Stray() != 1 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	if tr.Stray() != 1 {
		t.Errorf("Stray = %d, want 1", tr.Stray())
	}
}

// ICMP reports go to the peers of the server they are about (Linux).
func TestUnreachableRouting(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("only Linux reports ICMP errors to unconnected sockets")
	}
	tr := open(t, Config{Name: "test"})
	closed, live := closedPort(t), echoServer(t)
	rc, rl := newRecorder(), newRecorder()
	var lc, ll Link
	tr.Attach(&lc, closed, rc)
	tr.Attach(&ll, live, rl)
	tr.Send([]byte("q1"), closed)
	tr.Send([]byte("q1"), live)
	rc.wait(t, 1)
	rl.wait(t, 1)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.reports) != 1 || !errors.Is(rc.reports[0], syscall.ECONNREFUSED) || len(rc.got) != 0 {
		t.Errorf("closed port: reports %v, datagrams %v", rc.reports, rc.got)
	}
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if len(rl.reports) != 0 || len(rl.got) != 1 {
		t.Errorf("live server: reports %v, datagrams %v", rl.reports, rl.got)
	}

	// An Exchange with the closed port ends at once, not at its timeout.
	c := newEcho("x", time.Minute, 0)
	tr.Exchange(testutil.Context(t), closed, c, nil)
	if !errors.Is(c.err, syscall.ECONNREFUSED) {
		t.Errorf("exchange with a closed port: %v", c.err)
	}
}

// The read loop's Batch sends what peers queue in reply, together, once
// the datagrams read are digested.
func TestBatchInReply(t *testing.T) {
	t.Parallel()
	tr := open(t, Config{Name: "test"})
	srv := echoServer(t)
	done := make(chan []string, 1)
	p := &replier{srv: srv, n: 3, done: done}
	var l Link
	tr.Attach(&l, srv, p)
	tr.Send([]byte("q0"), srv)
	select {
	case got := <-done:
		if fmt.Sprint(got) != "[r0 r1 r2]" {
			t.Errorf("got %v", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answers")
	}
}

// replier answers each "rN" with "qN+1" through the read loop's Batch,
// until it has n datagrams.
type replier struct {
	srv  netip.AddrPort
	n    int
	got  []string
	done chan []string
}

func (r *replier) HandleDatagram(from netip.AddrPort, b []byte, now time.Time, out *Batch) {
	r.got = append(r.got, string(b))
	if len(r.got) == r.n {
		r.done <- r.got
		return
	}
	if err := out.Send([]byte(fmt.Sprintf("q%d", len(r.got))), r.srv); err != nil {
		panic(err)
	}
}
func (r *replier) HandleUnreachable(netip.AddrPort, error) {}
func (r *replier) HandleSendError(netip.AddrPort, error)   {}

// An Exchange ends with its context, and with the Transport: Close fails
// it with Config.ErrClosed, and so does every Exchange after.
func TestExchangeEnds(t *testing.T) {
	t.Parallel()
	silent := closedPort(t)
	silentConn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(silent))
	if err != nil {
		t.Skip("the port was taken meanwhile")
	}
	defer silentConn.Close()
	errClosed := errors.New("test: closed")
	tr := open(t, Config{Name: "test", ErrClosed: errClosed})

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c := newEcho("1", time.Minute, 0)
	tr.Exchange(ctx, silent, c, nil)
	if !errors.Is(c.err, context.DeadlineExceeded) {
		t.Errorf("ended by its context: %v", c.err)
	}

	started := make(chan struct{})
	ended := make(chan error)
	go func() {
		c := newEcho("2", time.Minute, 0)
		tr.Exchange(testutil.Context(t), silent, c, func() {
			select {
			case <-started:
			default:
				close(started)
			}
		})
		ended <- c.err
	}()
	<-started
	tr.Close()
	if err := <-ended; !errors.Is(err, errClosed) {
		t.Errorf("ended by Close: %v", err)
	}
	c = newEcho("3", time.Minute, 0)
	tr.Exchange(testutil.Context(t), silent, c, nil)
	if !errors.Is(c.err, errClosed) {
		t.Errorf("after Close: %v", c.err)
	}
}

// failingConn fails every read with err.
type failingConn struct {
	net.PacketConn
	err error
}

func (c *failingConn) ReadFrom([]byte) (int, net.Addr, error) { return 0, nil, c.err }

// After MaxReadErrors read errors in a row the read loop ends, and the
// conversations fail with the read error, named by the package.
func TestReadLoopGivesUp(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	tr := open(t, Config{Name: "test", Conn: &failingConn{pc, boom}})
	<-tr.Done()
	if err := tr.Err(); !errors.Is(err, boom) || err.Error() != "test: read: boom" {
		t.Errorf("Err = %v", err)
	}
	c := newEcho("1", time.Minute, 0)
	tr.Exchange(testutil.Context(t), closedPort(t), c, nil)
	if !errors.Is(c.err, boom) {
		t.Errorf("exchange after the loop ended: %v", c.err)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		timeout, max time.Duration
		attempt      int
		want         time.Duration
	}{
		{time.Second, 0, 0, time.Second},
		{time.Second, 0, 1, 1500 * time.Millisecond},
		{time.Second, 0, 2, 2250 * time.Millisecond},
		{time.Second, 2 * time.Second, 2, 2 * time.Second},
		{100 * time.Millisecond, time.Second, 1000, time.Second},
	} {
		if got := Backoff(tc.timeout, tc.max, tc.attempt); got != tc.want {
			t.Errorf("Backoff(%v, %v, %d) = %v, want %v", tc.timeout, tc.max, tc.attempt, got, tc.want)
		}
	}
	// Uncapped, the wait stops growing past a day and more, before it
	// overflows.
	if got := Backoff(time.Hour, 0, 1000); got <= 1<<50 || got > 1<<52 {
		t.Errorf("Backoff(1h, 0, 1000) = %v", got)
	}
}

// An Exchange that cannot start (its context has ended, or the Transport
// is closed) still fails its conversation and takes one step, so that a
// driver showing sections as they end shows these too; nothing is sent.
func TestExchangeThatCannotStart(t *testing.T) {
	t.Parallel()
	tr := open(t, Config{Name: "test"})
	srv := echoServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{{"ended context", ctx, context.Canceled}, {"closed", testutil.Context(t), net.ErrClosed}} {
		if tc.want == net.ErrClosed {
			tr.Close()
		}
		c := newEcho("1", time.Minute, 0)
		steps := 0
		tr.Exchange(tc.ctx, srv, c, func() { steps++ })
		if !errors.Is(c.err, tc.want) || steps != 1 || c.sent != 0 {
			t.Errorf("%s: %v, %d steps, %d sent", tc.name, c.err, steps, c.sent)
		}
	}
}
