package rcon_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
)

// The tests in this file run the server inside a synctest bubble, on
// console/consoletest's in-memory network, whose connections carry any
// remote address, so deadlines, lockouts and back-off run on the bubble's
// clock: they take no real time and their timing can be checked exactly.

// pipeServer is a listener on an in-memory network.
type pipeServer struct {
	net *consoletest.Network
	*consoletest.Listener
}

// newPipeServer listens on a new in-memory network.
func newPipeServer(t *testing.T) *pipeServer {
	t.Helper()
	n := &consoletest.Network{}
	return &pipeServer{net: n, Listener: n.MustListen(t, "127.0.0.1:27015")}
}

// dial connects from the given address and returns the client's end once
// the server has accepted the connection.
func (l *pipeServer) dial(t *testing.T, from string) *peer {
	t.Helper()
	client, err := l.net.DialFrom(context.Background(), from, l.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { client.Close() })
	return &peer{nc: client, rd: rcon.NewReader(client, 0)}
}

// peer is the client's end of a pipe connection.
type peer struct {
	nc net.Conn
	rd *rcon.Reader
}

func (p *peer) send(t *testing.T, pkts ...rcon.Packet) {
	t.Helper()
	var b []byte
	for _, pk := range pkts {
		b, _ = pk.AppendBinary(b)
	}
	if _, err := p.nc.Write(b); err != nil {
		t.Fatalf("send: %v", err)
	}
}

// login logs in and reports whether the server accepted the password.
func (p *peer) login(t *testing.T, password string) bool {
	t.Helper()
	p.send(t, pkt(1, rcon.TypeAuth, password))
	for {
		r, err := p.rd.ReadPacket()
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		if r.Type == rcon.TypeAuthResponse {
			return r.ID != -1
		}
	}
}

// closedAfter waits until the server closes the connection, reading
// (and dropping) whatever it sends first, and returns how long that took
// on the bubble's clock.
func (p *peer) closedAfter(t *testing.T) time.Duration {
	t.Helper()
	d, err := p.waitClosed()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (p *peer) waitClosed() (time.Duration, error) {
	start := time.Now()
	for {
		if _, err := p.rd.ReadPacket(); err != nil {
			if !errors.Is(err, io.EOF) {
				return 0, fmt.Errorf("read: %w, want the connection closed", err)
			}
			return time.Since(start), nil
		}
	}
}

// isOpen reports whether the server still holds the connection, once
// every goroutine of the bubble has settled. The server must have
// nothing unread in flight to the client. The read waits a nanosecond
// of the bubble's clock: a deadline already past ends a read before it
// looks at the connection, as on a socket.
func (p *peer) isOpen() bool {
	synctest.Wait()
	p.nc.SetReadDeadline(time.Now().Add(time.Nanosecond))
	defer p.nc.SetReadDeadline(time.Time{})
	var b [1]byte
	_, err := p.nc.Read(b[:])
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// logLines collects the log lines of a server or a client.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

func (l *logLines) String() string { return strings.Join(l.matching(""), "\n") }

func (l *logLines) matching(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.lines {
		if strings.Contains(s, substr) {
			out = append(out, s)
		}
	}
	return out
}

// servePipe starts s on an in-memory listener in the current bubble and
// stops it when the test ends.
func servePipe(t *testing.T, s *rcon.Server) *pipeServer {
	t.Helper()
	l := newPipeServer(t)
	serveOn(t, s, l)
	return l
}

func TestServerLoginDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const login = 10 * time.Second
		var log logLines
		l := servePipe(t, &rcon.Server{LoginTimeout: login, IdleTimeout: time.Hour, Logf: log.logf})

		// A login packet trickled one byte every 3 s never completes.
		slow := l.dial(t, "127.0.0.1:1000")
		var writers sync.WaitGroup
		defer writers.Wait()
		writers.Add(2)
		go func() {
			defer writers.Done()
			for _, b := range mustEncode(pkt(1, rcon.TypeAuth, testPassword)) {
				if _, err := slow.nc.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(3 * time.Second)
			}
		}()
		// Complete requests that are not a login do not extend it
		// either.
		chatty := l.dial(t, "127.0.0.2:1000")
		go func() {
			defer writers.Done()
			for range 10 {
				if _, err := chatty.nc.Write(mustEncode(pkt(2, rcon.TypeExecCommand, "status"))); err != nil {
					return
				}
				time.Sleep(3 * time.Second)
			}
		}()
		type result struct {
			d   time.Duration
			err error
		}
		chattyClosed := make(chan result, 1)
		go func() {
			d, err := chatty.waitClosed()
			chattyClosed <- result{d, err}
		}()
		time.Sleep(login - time.Millisecond)
		if !slow.isOpen() {
			t.Fatal("trickling client closed before its login deadline")
		}
		time.Sleep(time.Millisecond)
		if slow.isOpen() {
			t.Error("trickling client still open at its login deadline")
		}
		if r := <-chattyClosed; r.err != nil || r.d != login {
			t.Errorf("anonymous client sending commands closed after %v (%v), want %v", r.d, r.err, login)
		}

		// A client that logs in just in time stays, until its idle
		// timeout.
		late := l.dial(t, "127.0.0.3:1000")
		time.Sleep(login - time.Second)
		if !late.login(t, testPassword) {
			t.Fatal("login refused")
		}
		time.Sleep(time.Minute)
		if !late.isOpen() {
			t.Error("connection closed after a login within the deadline")
		}
		if got := log.matching("not logged in within"); len(got) != 2 {
			t.Errorf("login timeouts logged: %q, want 2 lines", got)
		}
	})
}

func mustEncode(p rcon.Packet) []byte {
	b, err := p.AppendBinary(nil)
	if err != nil {
		panic(err)
	}
	return b
}

func TestServerIdleTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const idle = 30 * time.Second
		l := servePipe(t, &rcon.Server{IdleTimeout: idle})
		c := l.dial(t, "127.0.0.1:1000")
		if !c.login(t, testPassword) {
			t.Fatal("login refused")
		}
		if d := c.closedAfter(t); d != idle {
			t.Errorf("idle connection closed after %v, want %v", d, idle)
		}

		// A request trickling in slower than the idle timeout is cut
		// off too: the timeout bounds a whole request, not each byte.
		c2 := l.dial(t, "127.0.0.1:1001")
		if !c2.login(t, testPassword) {
			t.Fatal("login refused")
		}
		trickled := make(chan struct{})
		go func() {
			defer close(trickled)
			for _, b := range mustEncode(pkt(2, rcon.TypeExecCommand, "status")) {
				if _, err := c2.nc.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(idle / 10)
			}
		}()
		if d := c2.closedAfter(t); d != idle {
			t.Errorf("trickling connection closed after %v, want %v", d, idle)
		}
		<-trickled
	})
}

// TestServerWriteTimeout: a client that stops reading is closed once a
// write has blocked for WriteTimeout, and the server holds no more than a
// fragment of its output meanwhile.
func TestServerWriteTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const timeout = 5 * time.Second
		var log logLines
		l := servePipe(t, &rcon.Server{WriteTimeout: timeout, Logf: log.logf})
		c := l.dial(t, "127.0.0.1:1")
		if !c.login(t, testPassword) {
			t.Fatal("login refused")
		}
		c.send(t, pkt(2, rcon.TypeExecCommand, "big 1048576"))
		time.Sleep(timeout - time.Nanosecond)
		synctest.Wait()
		if got := log.matching("closing"); len(got) != 0 {
			t.Fatalf("closed before the write timeout: %q", got)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if got := log.matching("i/o timeout; closing"); len(got) != 1 {
			t.Errorf("write timeout logged as %q", log.matching(""))
		}
		// What the server had written is read, then the end.
		if _, err := io.Copy(io.Discard, c.nc); err != nil {
			t.Errorf("read after the write timeout: %v, want the end of the stream", err)
		}
	})
}

func TestServerLockout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lockout = 5 * time.Minute
		var log logLines
		l := servePipe(t, &rcon.Server{MaxFailedLogins: 3, LockoutDuration: lockout, LoginTimeout: -1, Logf: log.logf})
		c := l.dial(t, "192.0.2.7:1000")
		for i := range 2 {
			if c.login(t, "wrong-"+testPassword) {
				t.Fatalf("attempt %d: wrong password accepted", i)
			}
		}
		// The third failure answers -1, then closes.
		if c.login(t, "wrong-"+testPassword) {
			t.Fatal("third attempt accepted")
		}
		c.closedAfter(t)

		// New connections from the address are refused while it is
		// locked out, even with the right password; other addresses are
		// not affected.
		if l.dial(t, "192.0.2.7:1001").isOpen() {
			t.Error("connection admitted while locked out")
		}
		if !l.dial(t, "192.0.2.8:1000").login(t, testPassword) {
			t.Error("another address was locked out too")
		}
		time.Sleep(lockout)
		if !l.dial(t, "192.0.2.7:1002").login(t, testPassword) {
			t.Error("login refused after the lockout expired")
		}

		joined := strings.Join(log.matching(""), "\n")
		if !strings.Contains(joined, "locked out") {
			t.Errorf("no lockout logged: %q", joined)
		}
		if strings.Contains(joined, testPassword) {
			t.Errorf("password logged: %q", joined)
		}
	})
}

// TestServerLockoutIPv6Prefix: an IPv6 host usually holds a whole /64,
// so the lockout and the connection cap count the prefix, not the address.
func TestServerLockoutIPv6Prefix(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := servePipe(t, &rcon.Server{MaxFailedLogins: 2, LoginTimeout: -1, MaxConnsPerAddr: 3})
		for i := range 2 {
			c := l.dial(t, fmt.Sprintf("[2001:db8:1:2::%x]:1000", i+1))
			if c.login(t, "nope") {
				t.Fatal("wrong password accepted")
			}
		}
		if l.dial(t, "[2001:db8:1:2:ffff::1]:1000").isOpen() {
			t.Error("another address of the locked-out /64 admitted")
		}
		if !l.dial(t, "[2001:db8:1:3::1]:1000").login(t, testPassword) {
			t.Error("the next /64 was locked out too")
		}
		var open []*peer
		for i := range 4 {
			open = append(open, l.dial(t, fmt.Sprintf("[2001:db8:1:4::%x]:1000", i+1)))
		}
		if !open[2].isOpen() || open[3].isOpen() {
			t.Error("MaxConnsPerAddr 3 does not hold across the addresses of one /64")
		}
	})
}

func TestServerConnCap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := servePipe(t, &rcon.Server{MaxConnsPerAddr: 2})
		c1, c2 := l.dial(t, "127.0.0.1:1"), l.dial(t, "127.0.0.1:2")
		for _, c := range []*peer{c1, c2} {
			if !c.login(t, testPassword) {
				t.Fatal("login refused")
			}
		}
		if l.dial(t, "127.0.0.1:3").isOpen() {
			t.Error("third connection from one address admitted")
		}
		// Once one closes, a new connection is admitted.
		c1.nc.Close()
		synctest.Wait()
		if !l.dial(t, "127.0.0.1:4").login(t, testPassword) {
			t.Error("no connection admitted after one closed")
		}
	})
}

// TestServerGlobalConnCap: beyond MaxConns, a new connection replaces the
// oldest one that has not logged in; logged-in ones are never replaced,
// and once every connection is logged in, new ones are refused.
func TestServerGlobalConnCap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var log logLines
		l := servePipe(t, &rcon.Server{MaxConns: 3, Logf: log.logf})
		admin := l.dial(t, "10.0.0.1:1")
		if !admin.login(t, testPassword) {
			t.Fatal("login refused")
		}
		// A flood from many addresses, none logging in.
		var flood []*peer
		for i := range 10 {
			flood = append(flood, l.dial(t, fmt.Sprintf("10.0.1.%d:1", i)))
		}
		for i, c := range flood {
			if open, want := c.isOpen(), i >= len(flood)-2; open != want {
				t.Errorf("flood connection %d open %v, want %v", i, open, want)
			}
		}
		if !admin.isOpen() {
			t.Fatal("the logged-in connection was replaced")
		}
		// A second administrator still gets in, and logs in.
		admin2 := l.dial(t, "10.0.0.2:1")
		if !admin2.login(t, testPassword) {
			t.Fatal("second administrator refused")
		}
		admin3 := l.dial(t, "10.0.0.3:1")
		if !admin3.login(t, testPassword) {
			t.Fatal("third administrator refused")
		}
		// Now all three places are logged in: a fourth is refused.
		if l.dial(t, "10.0.0.4:1").isOpen() {
			t.Error("a fourth connection was admitted beyond MaxConns 3")
		}
		for _, c := range []*peer{admin, admin2, admin3} {
			if !c.isOpen() {
				t.Error("a logged-in connection was closed")
			}
		}
		if len(log.matching("to make room")) == 0 || len(log.matching("all logged in")) == 0 {
			t.Errorf("replacements or refusals not logged: %q", log.matching(""))
		}
	})
}

// TestServerRefusalsRateLimited: a flood of refused connections writes a
// few log lines, then one line that counts the rest.
func TestServerRefusalsRateLimited(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var log logLines
		l := servePipe(t, &rcon.Server{MaxConnsPerAddr: 1, LoginTimeout: -1, Logf: log.logf})
		keep := l.dial(t, "127.0.0.9:1")
		const flood = 100
		for i := range flood {
			l.dial(t, fmt.Sprintf("127.0.0.9:%d", i+2))
		}
		synctest.Wait()
		if got := len(log.matching("refused")); got < 1 || got > 10 {
			t.Errorf("%d refusals logged for %d refused connections, want a few", got, flood)
		}
		time.Sleep(time.Minute)
		l.dial(t, "127.0.0.9:9999")
		synctest.Wait()
		if got := log.matching("suppressed"); len(got) != 1 {
			t.Errorf("after the flood: %q, want one line counting the suppressed ones", got)
		}
		keep.nc.Close()
	})
}

// TestServerAcceptBackoff: accept errors that pass (here EMFILE) are
// waited out with a doubling back-off, and the server serves again.
func TestServerAcceptBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var log logLines
		l := newPipeServer(t)
		for range 5 {
			l.FailAccept(&net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE})
		}
		s := &rcon.Server{Password: testPassword, Handler: sim, Logf: log.logf}
		served := make(chan error, 1)
		start := time.Now()
		go func() { served <- s.Serve(l) }()
		c := l.dial(t, "127.0.0.1:1")
		// 5 + 10 + 20 + 40 + 80 ms of waiting before the connection.
		if d := time.Since(start); d != 155*time.Millisecond {
			t.Errorf("accepted after %v, want 155ms of back-off", d)
		}
		if !c.login(t, testPassword) {
			t.Error("login refused after the accept errors")
		}
		if got := log.matching("too many open files"); len(got) == 0 {
			t.Error("accept errors not logged")
		}
		// An error that does not pass ends Serve.
		l.FailAccept(errors.New("listener broken"))
		synctest.Wait()
		select {
		case err := <-served:
			if err == nil || !strings.Contains(err.Error(), "listener broken") {
				t.Errorf("Serve returned %v, want the accept error", err)
			}
		default:
			t.Error("Serve goes on after an accept error that does not pass")
		}
		s.Close()
	})
}

// TestServerCloseDuringBackoff: Close ends a Serve that is waiting out an
// accept error at once.
func TestServerCloseDuringBackoff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newPipeServer(t)
		for range 16 {
			l.FailAccept(&net.OpError{Op: "accept", Net: "tcp", Err: syscall.ENFILE})
		}
		s := &rcon.Server{Password: testPassword}
		served := make(chan error, 1)
		go func() { served <- s.Serve(l) }()
		time.Sleep(time.Second)
		start := time.Now()
		s.Close()
		if err := <-served; !errors.Is(err, rcon.ErrServerClosed) {
			t.Errorf("Serve returned %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Serve returned %v after Close", d)
		}
	})
}

func TestServerLocalAddr(t *testing.T) {
	t.Parallel()
	s := &rcon.Server{Password: testPassword, Addr: "127.0.0.1:0"}
	if a := s.LocalAddr(); a != nil {
		t.Errorf("LocalAddr before serving = %v", a)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	// Serve tracks its listener before it accepts: once a connection is
	// served, LocalAddr is set.
	c := dialRaw(t, l.Addr().String())
	if err := c.Login(1, testPassword); err != nil {
		t.Fatal(err)
	}
	if a := s.LocalAddr(); a == nil || a.String() != l.Addr().String() {
		t.Errorf("LocalAddr = %v, want %v", a, l.Addr())
	}
	s.Close()
	<-served
	if a := s.LocalAddr(); a != nil {
		t.Errorf("LocalAddr after Close = %v", a)
	}
}

// TestServerShutdownDeadline: when Shutdown's context ends before a
// command does, every connection is closed and the handler's context is
// cancelled.
func TestServerShutdownDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		running, cancelled := make(chan struct{}), make(chan struct{})
		s := &rcon.Server{Handler: rcon.HandlerFunc(func(ctx context.Context, _ rcon.ResponseWriter, _ string) {
			close(running)
			<-ctx.Done()
			close(cancelled)
		})}
		l := servePipe(t, s)
		c := l.dial(t, "127.0.0.1:1")
		if !c.login(t, testPassword) {
			t.Fatal("login refused")
		}
		c.send(t, pkt(2, rcon.TypeExecCommand, "hang"))
		<-running
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want DeadlineExceeded", err)
		}
		<-cancelled
		c.closedAfter(t)
	})
}

// TestServerEvictsFromTheBusiestAddress: when the server is full, the
// connection that makes room is one of those, not logged in, of the
// address holding the most of them; an administrator's connection from
// elsewhere outlives a flood until it logs in.
func TestServerEvictsFromTheBusiestAddress(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := servePipe(t, &rcon.Server{MaxConns: 4})
		var flood []*peer
		for i := range 3 {
			flood = append(flood, l.dial(t, fmt.Sprintf("198.51.100.1:%d", 1000+i)))
		}
		admin := l.dial(t, "203.0.113.5:1000")
		// The flood goes on from a second address: each new connection
		// takes the place of one of the busiest address's.
		for i := range 6 {
			flood = append(flood, l.dial(t, fmt.Sprintf("198.51.100.2:%d", 1000+i)))
		}
		if !admin.isOpen() {
			t.Fatal("the administrator's connection made room for the flood")
		}
		open := 0
		for _, c := range flood {
			if c.isOpen() {
				open++
			}
		}
		if open != 3 {
			t.Errorf("%d connections of the flood open, want 3 beside the administrator's", open)
		}
		if !admin.login(t, testPassword) {
			t.Fatal("login refused")
		}
	})
}

// TestServerFreesADescriptorForALogin: out of file descriptors, the
// server closes a connection that has not logged in for a second, and
// accepts the one waiting at once; it never closes a younger one, whose
// login may be on its way, and then waits instead.
func TestServerFreesADescriptorForALogin(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var log logLines
		l := servePipe(t, &rcon.Server{Logf: log.logf})
		emfile := &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
		young := l.dial(t, "198.51.100.1:1000")
		l.FailAccept(emfile)
		start := time.Now()
		admin := l.dial(t, "203.0.113.5:1000")
		if time.Since(start) != 5*time.Millisecond || !young.isOpen() {
			t.Fatalf("accepted after %v, the young connection open %v: want a wait of 5ms, no connection closed", time.Since(start), young.isOpen())
		}
		time.Sleep(time.Second)
		l.FailAccept(emfile)
		start = time.Now()
		admin2 := l.dial(t, "203.0.113.6:1000")
		if time.Since(start) != 0 || young.isOpen() {
			t.Fatalf("accepted after %v, the old connection open %v: want it closed for the new one at once", time.Since(start), young.isOpen())
		}
		for _, c := range []*peer{admin, admin2} {
			if !c.login(t, testPassword) {
				t.Fatal("login refused")
			}
		}
		if len(log.matching("to free a file descriptor")) != 1 {
			t.Errorf("log %q", log.matching(""))
		}
	})
}

func TestServerConnCapFollowsTheFileLimit(t *testing.T) {
	t.Parallel()
	for limit, want := range map[uint64]int{0: rcon.DefaultMaxConns, 100: 50, 1023: 511, 1024: rcon.DefaultMaxConns, 1 << 62: rcon.DefaultMaxConns, 1: 1} {
		if got := rcon.ConnCapFor(limit); got != want {
			t.Errorf("cap under a limit of %d open files: %d, want %d", limit, got, want)
		}
	}
}
