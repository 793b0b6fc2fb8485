package ogp_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

// memServer serves the v0.91 sample answer on an in-memory socket at addr
// until the test's bubble ends.
func memServer(t *testing.T, n *memNet, addr string) *ogp.Server {
	t.Helper()
	a := ogptest.SampleAnswer(ogp.V091, 4)
	s := &ogp.Server{RateLimit: -1, Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) { return a, nil })}
	pc := n.listen(addr)
	done := make(chan error, 1)
	go func() { done <- s.Serve(pc) }()
	t.Cleanup(func() {
		s.Shutdown(context.Background())
		if err := <-done; !errors.Is(err, ogp.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
	})
	return s
}

// memClient is a client on an in-memory socket at addr.
func memClient(t *testing.T, n *memNet, addr string) (*ogp.Client, *memConn) {
	t.Helper()
	pc := n.listen(addr)
	c := &ogp.Client{PacketConn: pc, Timeout: time.Second}
	t.Cleanup(func() { c.Close() })
	return c, pc
}

func callStats(t *testing.T, err error) ogp.Stats {
	t.Helper()
	var ce *ogp.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v has no *ogp.CallError", err)
	}
	return ce.Stats
}

// TestTimeoutConventions: a silent server gives an *OpError naming the
// operation and the address, which is a net.Error timeout matching
// ErrTimeout and os.ErrDeadlineExceeded, after 1 + Retries attempts, each
// waiting half as long again as the one before, or at the Deadline.
func TestTimeoutConventions(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n memNet
		silent := n.listen("10.0.0.2:7776")
		for _, tc := range []struct {
			retries  int
			deadline time.Duration
			sent     int
			took     time.Duration
			msg      string
		}{
			{0, 0, 3, 4750 * time.Millisecond, "ogp: ping 10.0.0.2:7776: timeout after 3 attempts"},
			{-1, 0, 1, time.Second, "ogp: ping 10.0.0.2:7776: timeout after 1 attempt"},
			{4, -1, 5, 13187500 * time.Microsecond, "ogp: ping 10.0.0.2:7776: timeout after 5 attempts"},
			{4, 0, 4, 5 * time.Second, "ogp: ping 10.0.0.2:7776: timeout after 4 attempts"}, // the Deadline
		} {
			c, _ := memClient(t, &n, "10.0.0.1:5000")
			c.Retries, c.Deadline = tc.retries, tc.deadline
			start := time.Now()
			_, err := c.Ping(t.Context(), silent.addr)
			if err == nil || err.Error() != tc.msg {
				t.Fatalf("Retries %d: err = %v, want %q", tc.retries, err, tc.msg)
			}
			if took := time.Since(start); took != tc.took {
				t.Errorf("Retries %d, Deadline %v: took %v, want %v", tc.retries, tc.deadline, took, tc.took)
			}
			var ne net.Error
			var oe *ogp.OpError
			if !errors.As(err, &ne) || !ne.Timeout() || !errors.As(err, &oe) || oe.Op != "ping" {
				t.Errorf("Retries %d: %#v is not an *OpError timeout", tc.retries, err)
			}
			if !errors.Is(err, ogp.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("Retries %d: does not match ErrTimeout and os.ErrDeadlineExceeded", tc.retries)
			}
			if st := callStats(t, err); st != (ogp.Stats{Sent: tc.sent, Resent: tc.sent - 1}) {
				t.Errorf("Retries %d: stats %+v", tc.retries, st)
			}
			if got := len(silent.in); got != tc.sent {
				t.Errorf("Retries %d: the server got %d pings, want %d", tc.retries, got, tc.sent)
			}
			for len(silent.in) > 0 {
				<-silent.in
			}
			c.Close()
		}

		c, _ := memClient(t, &n, "10.0.0.1:5001")
		ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel()
		_, err := c.Ping(ctx, silent.addr)
		if !errors.Is(err, ogp.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "ogp: ping 10.0.0.2:7776: timeout") {
			t.Errorf("context deadline: %v", err)
		}
		ctx, cancel = context.WithCancel(t.Context())
		go func() {
			synctest.Wait() // the ping waits for its answer
			cancel()
		}()
		_, err = c.Ping(ctx, silent.addr)
		if !errors.Is(err, context.Canceled) || errors.Is(err, ogp.ErrTimeout) || err.Error() != "ogp: ping 10.0.0.2:7776: context canceled" {
			t.Errorf("canceled: %v", err)
		}
		c.Close()
		if _, err := c.Ping(t.Context(), silent.addr); !errors.Is(err, ogp.ErrClientClosed) || !strings.HasPrefix(err.Error(), "ogp: ping 10.0.0.2:7776: ") {
			t.Errorf("closed: %v", err)
		}
	})
}

// TestCloseFailsPendingCalls: Close ends a call that waits for an answer.
func TestCloseFailsPendingCalls(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n memNet
		silent := n.listen("10.0.0.2:7776")
		c, _ := memClient(t, &n, "10.0.0.1:5000")
		go func() {
			synctest.Wait()
			c.Close()
		}()
		if _, err := c.Ping(t.Context(), silent.addr); !errors.Is(err, ogp.ErrClientClosed) {
			t.Fatalf("err = %v, want ErrClientClosed", err)
		}
	})
}

// TestStats: what a call sent is on the Result and on the error, so a
// caller can count datagrams and resends right.
func TestStats(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		n := memNet{}
		memServer(t, &n, "10.0.0.2:7776")
		var mu sync.Mutex
		received := 0
		n.drop = func(_, to netip.AddrPort, _ []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			if to.Port() != 7776 {
				return false
			}
			received++
			return received == 2 // the query after the re-challenge
		}
		c, _ := memClient(t, &n, "10.0.0.1:5000")
		q := ogp.Query{Request: ogp.RequestRules}
		resp, err := c.Query(t.Context(), netip.MustParseAddrPort("10.0.0.2:7776"), &q)
		if err != nil {
			t.Fatal(err)
		}
		if want := (ogp.Stats{Sent: 3, Resent: 1, Rechallenged: 1}); resp.Stats != want {
			t.Errorf("stats %+v, want %+v", resp.Stats, want)
		}
		if resp.RTT <= 0 {
			t.Errorf("RTT %v", resp.RTT)
		}
		// Now the challenge is known: one datagram.
		resp, err = c.Query(t.Context(), netip.MustParseAddrPort("10.0.0.2:7776"), &q)
		if err != nil || resp.Stats != (ogp.Stats{Sent: 1}) {
			t.Fatalf("second query: %+v, %v", resp, err)
		}
	})
}

// TestRechallengeLimit: a server that rejects every challenge costs 1 + 3
// datagrams and ends in ErrTooManyChallenges.
func TestRechallengeLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		n := memNet{}
		s := memServer(t, &n, "10.0.0.2:7776")
		n.drop = func(_, to netip.AddrPort, _ []byte) bool {
			if to.Port() == 7776 {
				s.RotateChallenge()
				s.RotateChallenge()
			}
			return false
		}
		c, _ := memClient(t, &n, "10.0.0.1:5000")
		q := ogp.QueryAll(ogp.V091)
		_, err := c.Query(t.Context(), netip.MustParseAddrPort("10.0.0.2:7776"), &q)
		if !errors.Is(err, ogp.ErrTooManyChallenges) {
			t.Fatalf("err = %v", err)
		}
		if st := callStats(t, err); st != (ogp.Stats{Sent: 4, Rechallenged: 3}) {
			t.Fatalf("stats %+v", st)
		}
	})
}

// scriptConn is a PacketConn whose reads follow a script once a request
// was written: each step is an error to return, or nil for the answer to
// the last request.
type scriptConn struct {
	memConn
	mu      sync.Mutex
	script  []error
	written chan []byte
	last    []byte
	reads   int
}

func newScriptConn(script ...error) *scriptConn {
	return &scriptConn{memConn: memConn{closed: make(chan struct{})}, script: script, written: make(chan []byte, 8)}
}

func (c *scriptConn) WriteTo(b []byte, _ net.Addr) (int, error) {
	c.written <- append([]byte(nil), b...)
	return len(b), nil
}

var serverAddr = netip.MustParseAddrPort("10.0.0.2:7776")

func (c *scriptConn) ReadFrom(b []byte) (int, net.Addr, error) {
	c.mu.Lock()
	for len(c.script) == 0 || c.last == nil {
		c.mu.Unlock()
		select {
		case req := <-c.written:
			c.mu.Lock()
			c.last = req
			continue
		case <-c.closed:
			return 0, nil, net.ErrClosed
		}
	}
	defer c.mu.Unlock()
	c.reads++
	step := c.script[0]
	c.script = c.script[1:]
	if step != nil {
		return 0, nil, step
	}
	h, _, _ := ogp.ParseHeader(c.last)
	c.last = nil
	a := ogp.Header{Type: h.Type, Flags: ogp.FlagAnswer | ogp.FlagRequestID, RequestID: h.RequestID}
	p, _ := a.AppendBinary(nil)
	return copy(b, p), net.UDPAddrFromAddrPort(serverAddr), nil
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// TestReadLoopGivesUp: the read loop skips timeouts and up to 15 read
// errors in a row; the 16th fails the pending call with that error, and
// every later call too.
func TestReadLoopGivesUp(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	errs := func(n int) []error {
		s := make([]error, n)
		for i := range s {
			s[i] = boom
		}
		return s
	}
	synctest.Test(t, func(t *testing.T) {
		// 15 errors, a timeout, the answer; 15 errors, the answer.
		script := append(append(errs(15), timeoutErr{}, nil), append(errs(15), nil)...)
		pc := newScriptConn(script...)
		c := &ogp.Client{PacketConn: pc, Timeout: time.Hour}
		defer c.Close()
		for i := range 2 {
			if _, err := c.Ping(t.Context(), serverAddr); err != nil {
				t.Fatalf("ping %d: %v", i, err)
			}
		}
	})
	synctest.Test(t, func(t *testing.T) {
		pc := newScriptConn(errs(20)...)
		c := &ogp.Client{PacketConn: pc, Timeout: time.Hour}
		defer c.Close()
		_, err := c.Ping(t.Context(), serverAddr)
		if !errors.Is(err, boom) || err.Error() != "ogp: ping 10.0.0.2:7776: read: boom" {
			t.Fatalf("err = %v, want the read error", err)
		}
		pc.mu.Lock()
		reads := pc.reads
		pc.mu.Unlock()
		if reads != 16 {
			t.Errorf("%d reads, want 16", reads)
		}
		if _, err := c.Ping(t.Context(), serverAddr); !errors.Is(err, boom) {
			t.Errorf("later call: %v", err)
		}
	})
}

// pingResponder answers one Ping on a loopback socket and reports the
// address it came from.
func pingResponder(t *testing.T) (netip.AddrPort, <-chan netip.AddrPort) {
	t.Helper()
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	from := make(chan netip.AddrPort, 1)
	go func() {
		buf := make([]byte, 1500)
		n, src, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		from <- src
		h, _, err := ogp.ParseHeader(buf[:n])
		if err != nil {
			return
		}
		a := ogp.Header{Type: h.Type, Flags: ogp.FlagAnswer | ogp.FlagRequestID, RequestID: h.RequestID}
		p, _ := a.AppendBinary(nil)
		conn.WriteToUDPAddrPort(p, src)
	}()
	return conn.LocalAddr().(*net.UDPAddr).AddrPort(), from
}

// TestClientSocketOptions: LocalAddr binds the client's own socket, and a
// caller's PacketConn is used and closed by Close.
func TestClientSocketOptions(t *testing.T) {
	t.Parallel()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	local := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	pc.Close()

	addr, from := pingResponder(t)
	c := &ogp.Client{LocalAddr: local, ReadBuffer: -1}
	defer c.Close()
	if _, err := c.Ping(ctxT(t), addr); err != nil {
		t.Fatalf("LocalAddr %v: %v", local, err)
	}
	if got := <-from; got != local {
		t.Errorf("ping came from %v, want LocalAddr %v", got, local)
	}
	// The port is taken now: a second client bound to it fails to open.
	c2 := &ogp.Client{LocalAddr: local}
	defer c2.Close()
	if _, err := c2.Ping(ctxT(t), addr); err == nil || !strings.Contains(err.Error(), "open socket") {
		t.Errorf("second client on %v: %v", local, err)
	}

	addr, from = pingResponder(t)
	own, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c3 := &ogp.Client{PacketConn: own}
	if _, err := c3.Ping(ctxT(t), addr); err != nil {
		t.Fatalf("PacketConn: %v", err)
	}
	if got := <-from; got != own.LocalAddr().(*net.UDPAddr).AddrPort() {
		t.Errorf("ping came from %v, not the PacketConn %v", got, own.LocalAddr())
	}
	c3.Close()
	if _, err := own.WriteTo([]byte("x"), own.LocalAddr()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("the caller's PacketConn is still open after Close: %v", err)
	}
}

// answering serves addr on n, answering each datagram with reply(it) (nil:
// no answer) until the test ends.
func answering(t *testing.T, n *memNet, addr string, reply func([]byte) []byte) *memConn {
	pc := n.listen(addr)
	go func() {
		for d := range pc.in {
			if b := reply(d.b); b != nil {
				pc.WriteTo(b, net.UDPAddrFromAddrPort(d.from))
			}
		}
	}()
	t.Cleanup(func() { close(pc.in) })
	return pc
}

// pingEnds pings addr until the attempts run out, then until a context's
// deadline does, and checks each error.
func pingEnds(t *testing.T, c *ogp.Client, addr netip.AddrPort, check func(name string, err error)) {
	t.Helper()
	_, err := c.Ping(t.Context(), addr)
	check("retries", err)
	ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
	defer cancel()
	_, err = c.Ping(ctx, addr)
	check("context deadline", err)
}

// TestGarbageIsNotSilence: a server that answers, but never with OGP, is
// reported as such once the attempts or the context's deadline run out
// (a protocol error matching ErrNotOGP and the parse error of its first
// datagram, not a timeout).
func TestGarbageIsNotSilence(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n memNet
		junk := answering(t, &n, "10.0.0.3:7776", func([]byte) []byte { return []byte("HTTP/1.0 400 Bad Request\r\n\r\n") })
		c, _ := memClient(t, &n, "10.0.0.1:5002")
		pingEnds(t, c, junk.addr, func(name string, err error) {
			t.Helper()
			var oe *ogp.OpError
			var ne net.Error
			const want = "ogp: ping 10.0.0.3:7776: answered, but not with OGP (parse header at offset 0: not an OGP packet)"
			if err == nil || err.Error() != want || !errors.Is(err, ogp.ErrNotOGP) || !errors.As(err, &oe) {
				t.Errorf("%s: %v, want %q matching ErrNotOGP", name, err, want)
			}
			if errors.Is(err, ogp.ErrTimeout) || errors.As(err, &ne) && ne.Timeout() {
				t.Errorf("%s: %v is a timeout", name, err)
			}
		})
	})
}

// TestIncompleteSplitAnswer: a server that sends only part of a split
// answer answered: the call times out still, with the fragments counted,
// and the error matches ErrIncomplete, at the end of the attempts and at
// the context's deadline.
func TestIncompleteSplitAnswer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var n memNet
		half := answering(t, &n, "10.0.0.4:7776", func(b []byte) []byte {
			req, _, err := ogp.ParseHeader(b)
			if err != nil {
				return nil
			}
			// Fragment 0 of 3 of a ping answer, the others lost.
			return packet(ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagAnswer | ogp.FlagRequestID | ogp.FlagSplit, RequestID: req.RequestID, SplitCount: 3}, 1, 2, 3)
		})
		c, _ := memClient(t, &n, "10.0.0.1:5003")
		pingEnds(t, c, half.addr, func(name string, err error) {
			t.Helper()
			if !errors.Is(err, ogp.ErrIncomplete) || !errors.Is(err, ogp.ErrTimeout) || !strings.Contains(err.Error(), "(got 1 of 3 fragments)") {
				t.Errorf("%s: %v, want a timeout matching ErrIncomplete with the fragments counted", name, err)
			}
		})
	})
}
