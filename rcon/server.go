package rcon

import (
	"bufio"
	"cmp"
	"container/list"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/fdlimit"
	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/sourcekey"
	"github.com/gsq-project/gsq/internal/wire"
)

// Server defaults, used when the matching [Server] field is zero.
const (
	// DefaultMaxRequestSize limits the size field of requests: the 4096
	// bytes Valve's Source RCON Protocol page gives as the largest packet
	// SRCDS accepts. Minecraft clients never send more than 1460 bytes.
	DefaultMaxRequestSize = 4096
	// DefaultMaxFailedLogins is how many wrong passwords an address may
	// send before it is locked out.
	DefaultMaxFailedLogins = 5
	// DefaultLockoutDuration is how long a lockout lasts, and how long a
	// failed login is remembered.
	DefaultLockoutDuration = 5 * time.Minute
	// DefaultMaxConnsPerAddr caps simultaneous connections per address.
	DefaultMaxConnsPerAddr = 16
	// DefaultMaxConns caps simultaneous connections in all: a remote
	// console has a few users, and 512 connections stay well within the
	// 1024 file descriptors many systems give a process by default. Under
	// a lower limit on open files the cap is half of it (see
	// Server.MaxConns).
	DefaultMaxConns = 512
	// DefaultLoginTimeout is how long a connection may stay without
	// logging in. Clients log in as soon as they connect.
	DefaultLoginTimeout = 10 * time.Second
	// DefaultIdleTimeout is how long a connection may go without sending
	// a complete packet.
	DefaultIdleTimeout = 5 * time.Minute
	// DefaultWriteTimeout is how long one write to a client may block.
	DefaultWriteTimeout = 30 * time.Second
)

// Default listen ports per dialect.
const (
	DefaultSourcePort    = 27015
	DefaultMinecraftPort = 25575
)

// ErrServerClosed is returned by [Server.Serve] and
// [Server.ListenAndServe] after [Server.Shutdown] or [Server.Close].
var ErrServerClosed = errors.New("rcon: server closed")

// srcdsProbeTail is the body of the extra packet SRCDS sends after
// mirroring an empty RESPONSE_VALUE: Valve's Source RCON Protocol page
// shows it as "0x0000 0001 0000 0000"; these are the bytes real servers
// send, as the SquadJS client reads them.
var srcdsProbeTail = []byte{0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00}

// A Handler runs one command. It writes the command's output to w; the
// server cuts it into packets as it goes, so output of any size is
// streamed without being held in memory. The response ends when
// ServeRCON returns. cmd is the request body up to its first NUL; it may
// be empty and need not be valid UTF-8. ctx is cancelled when the
// connection is closed by [Server.Close] or a [Server.Shutdown] that
// runs out of time. Commands of one connection run one at a time, in
// order; different connections run concurrently.
type Handler interface {
	ServeRCON(ctx context.Context, w ResponseWriter, cmd string)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, w ResponseWriter, cmd string)

// ServeRCON calls f(ctx, w, cmd).
func (f HandlerFunc) ServeRCON(ctx context.Context, w ResponseWriter, cmd string) {
	f(ctx, w, cmd)
}

// ResponseWriter receives a command's output. Writes fail once the
// connection is gone; a handler may stop producing output then. A
// ResponseWriter must not be used after ServeRCON returns.
type ResponseWriter interface {
	io.Writer
	io.StringWriter
	// RemoteAddr is the client's address.
	RemoteAddr() netip.AddrPort
}

// Server serves RCON over TCP, so a Go program can offer a remote
// console in the Source or Minecraft dialect. The zero value, given a
// Password and a Handler, is usable; the fields must not change once
// serving starts.
//
// Behaviour per [Dialect], as the real servers behave:
//   - Source: an empty RESPONSE_VALUE precedes every AUTH_RESPONSE; output
//     is split every 4086 bytes; an empty RESPONSE_VALUE is mirrored and
//     followed by the extra packet SRCDS sends, so probing clients find
//     the end of long output; a command before login gets an empty
//     RESPONSE_VALUE.
//   - CS2: as Source, but no packet before AUTH_RESPONSE and output is
//     not split (see [DefaultCS2SplitSize]).
//   - Minecraft: no packet before AUTH_RESPONSE; output is split every
//     4096 UTF-16 units; any request type other than login and command
//     is answered "Unknown request <hex type>", and any request before
//     login gets the -1 login failure.
//
// For RCON over TLS, give Serve a listener from crypto/tls; clients wrap
// their connection the same way and log in with [NewClient].
//
// Requests on one connection may be pipelined; answers come in order.
// Passwords are compared in constant time and never logged.
//
// What a client can cost the server is bounded. Every limit below has a
// default; see the fields.
//   - An address is locked out after MaxFailedLogins wrong passwords: its
//     connection is closed and new ones are refused until
//     LockoutDuration has passed.
//   - An address may hold MaxConnsPerAddr connections, and the server
//     MaxConns in all, which is at most half the process's limit on open
//     files. When every place is taken, a new connection takes the place
//     of one that has not logged in: the one that has waited longest
//     among those of the address holding the most of them. So a flood of
//     connections that never log in cannot keep an administrator out, nor
//     push one out before the login; only when every connection is logged
//     in is the new one refused.
//   - A connection must log in within LoginTimeout of being accepted,
//     however slowly it trickles bytes, and after that send a complete
//     request at least every IdleTimeout. A write that blocks for
//     WriteTimeout (a client that stopped reading) closes it.
//   - A request larger than MaxPacketSize closes the connection before
//     its body is read; output is streamed in fragments, never held.
//   - When the process runs out of file descriptors all the same (other
//     servers share it), the server closes a connection that has not
//     logged in for a second, chosen as above, and accepts at once, so
//     that an administrator's connection waiting to be accepted gets in;
//     with none to close (or the kernel out of buffers) it waits, 5 ms
//     at first and doubling up to 1 s, and accepts again, as net/http
//     does, instead of stopping.
//
// "Address" means an IPv4 address, or the /64 prefix of an IPv6 address,
// since one host commonly holds a whole /64.
type Server struct {
	// Addr is the TCP address ListenAndServe listens on; empty means
	// ":27015" (":25575" for Minecraft).
	Addr string
	// Password is the RCON password. An empty Password refuses every
	// login, as Minecraft does.
	Password string
	// Handler runs commands; nil answers every command with empty
	// output.
	Handler Handler
	// Dialect selects Source (the zero value), CS2 or Minecraft
	// behaviour.
	Dialect Dialect
	// MaxPacketSize limits the size field of requests; larger requests
	// close the connection. Zero means [DefaultMaxRequestSize].
	MaxPacketSize int
	// ResponseSplitSize is the most output per response packet: bytes on
	// Source and CS2, UTF-16 units on Minecraft (see [Splitter]). Zero
	// means the dialect's default.
	ResponseSplitSize int
	// MaxFailedLogins is how many wrong passwords lock an address out.
	// Zero means [DefaultMaxFailedLogins]; negative never locks out.
	MaxFailedLogins int
	// LockoutDuration is how long a lockout lasts. Zero means
	// [DefaultLockoutDuration].
	LockoutDuration time.Duration
	// MaxConnsPerAddr caps simultaneous connections from one address;
	// more are closed on accept. Zero means [DefaultMaxConnsPerAddr];
	// negative is unlimited.
	MaxConnsPerAddr int
	// MaxConns caps simultaneous connections in all. A connection beyond
	// it replaces one that has not logged in, or is closed on accept if
	// every connection has logged in. Zero means [DefaultMaxConns], or
	// half the process's limit on open files (RLIMIT_NOFILE) when Serve
	// is first called, if that is less; negative is unlimited.
	MaxConns int
	// LoginTimeout closes a connection that has not logged in this long
	// after it was accepted (a TLS handshake counts in it). Zero means
	// [DefaultLoginTimeout]; negative never.
	LoginTimeout time.Duration
	// IdleTimeout closes a connection that has not sent a complete packet
	// for this long. Zero means [DefaultIdleTimeout]; negative never.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection when one write to it blocks this
	// long (a client that stopped reading). Zero means
	// [DefaultWriteTimeout]; negative never.
	WriteTimeout time.Duration
	// Logf, if set, receives one line per notable event: refused,
	// replaced or timed-out connections, failed logins, lockouts, accept
	// errors, handler panics. A client can trigger these again and
	// again, so each kind is limited to 5 lines per 10 seconds, the next
	// line saying how many were suppressed.
	Logf func(format string, args ...any)

	mu        sync.Mutex
	connCap   int // MaxConns's default, from the limit on open files
	listeners map[net.Listener]struct{}
	primary   net.Listener // the first listener still serving, for LocalAddr
	conns     map[*serverConn]struct{}
	anonymous list.List // connections not logged in, oldest first
	addrs     map[netip.Addr]*addrState
	fails     console.Lockout // failed logins per source
	closing   bool
	done      chan struct{} // closed when closing
	wg        sync.WaitGroup
	ctx       context.Context
	cancel    context.CancelFunc
	log       *ratelog.Limiter
}

// addrState is what the server remembers about one client IP address.
type addrState struct {
	conns     int
	anonymous int // connections not logged in
}

// ListenAndServe listens on s.Addr and serves until Shutdown or Close.
// It always returns a non-nil error; after Shutdown or Close it is
// [ErrServerClosed].
func (s *Server) ListenAndServe() error {
	addr := s.Addr
	if addr == "" {
		port := DefaultSourcePort
		if s.Dialect == DialectMinecraft {
			port = DefaultMinecraftPort
		}
		addr = ":" + strconv.Itoa(port)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("rcon: %w", err)
	}
	return s.Serve(l)
}

// Serve accepts connections on l and serves each in its own goroutine
// until Shutdown or Close. It closes l on return and always returns a
// non-nil error; after Shutdown or Close it is [ErrServerClosed]. Accept
// errors that pass (no file descriptors or buffers left, a connection
// reset before it was accepted) are waited out; others end Serve.
func (s *Server) Serve(l net.Listener) error {
	if !s.track(l) {
		l.Close()
		return ErrServerClosed
	}
	defer s.untrack(l)
	var backoff time.Duration
	freed := false // a connection was closed for the last accept's descriptor
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			if !acceptErrorPasses(err) {
				return fmt.Errorf("rcon: accept: %w", err)
			}
			if !freed && outOfDescriptors(err) && s.freeDescriptor() {
				freed = true
				continue
			}
			freed = false
			backoff = min(max(2*backoff, minAcceptBackoff), maxAcceptBackoff)
			s.log.Printf("accept", "rcon: accept: %v; retrying in %v", err, backoff)
			if !s.wait(backoff) {
				return ErrServerClosed
			}
			continue
		}
		backoff, freed = 0, false
		s.start(nc)
	}
}

// minAgeToFree is how long a connection has been open without logging in
// before it may be closed to free a descriptor: a younger one may have
// its login waiting to be read.
const minAgeToFree = time.Second

// freeDescriptor closes a connection that has not logged in for a while,
// for the connection waiting to be accepted, and reports whether there
// was one.
func (s *Server) freeDescriptor() bool {
	s.mu.Lock()
	victim := s.victimLocked(time.Now().Add(-minAgeToFree))
	if victim != nil {
		s.dropLocked(victim)
	}
	s.mu.Unlock()
	if victim == nil {
		return false
	}
	s.log.Printf("replaced", "rcon: %v: closed, not logged in, to free a file descriptor for a new connection", victim.remote)
	victim.stop()
	closeNow(victim.nc)
	return true
}

// The wait after an accept error that passes doubles from
// minAcceptBackoff up to maxAcceptBackoff, as in net/http.
const (
	minAcceptBackoff = 5 * time.Millisecond
	maxAcceptBackoff = time.Second
)

// wait waits d, or until the server closes; it reports whether the
// server is still open.
func (s *Server) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// LocalAddr returns the address of the listener the server serves on
// (the first one still open, if Serve was called several times), or nil
// before Serve and after Shutdown or Close. With ListenAndServe it is set
// once the server listens, so a caller that asked for port 0 learns the
// port.
func (s *Server) LocalAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.primary == nil {
		return nil
	}
	return s.primary.Addr()
}

func (s *Server) track(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.initLocked()
	if s.connCap == 0 {
		s.connCap = connCapFor(fdlimit.OpenFiles())
	}
	s.listeners[l] = struct{}{}
	if s.primary == nil {
		s.primary = l
	}
	return true
}

func (s *Server) untrack(l net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.listeners[l]; ok {
		delete(s.listeners, l)
		l.Close()
	}
	if s.primary == l {
		s.primary = nil
		for other := range s.listeners {
			s.primary = other
			break
		}
	}
}

func (s *Server) initLocked() {
	if s.conns == nil {
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[*serverConn]struct{})
		s.addrs = make(map[netip.Addr]*addrState)
		s.fails = console.Lockout{Limit: max(0, s.maxFailedLogins()), For: s.lockoutDuration()}
		s.done = make(chan struct{})
		s.ctx, s.cancel = context.WithCancel(context.Background())
		s.log = &ratelog.Limiter{Logf: s.Logf}
	}
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// start admits nc or closes it.
func (s *Server) start(nc net.Conn) {
	remote := addrPortOf(nc.RemoteAddr())
	now := time.Now()
	s.mu.Lock()
	why, evicted := s.admitLocked(sourcekey.Of(remote.Addr()), now)
	if why != "" {
		s.mu.Unlock()
		s.log.Printf("refused", "rcon: refused %v: %s", remote, why)
		closeNow(nc)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	c := &serverConn{srv: s, nc: nc, remote: remote, key: sourcekey.Of(remote.Addr()), accepted: now, ctx: ctx, cancel: cancel}
	if d := s.loginTimeout(); d > 0 {
		c.loginBy = now.Add(d)
	}
	c.anonymous = s.anonymous.PushBack(c)
	s.addrs[c.key].anonymous++
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	if evicted != nil {
		s.log.Printf("replaced", "rcon: %v: closed, not logged in, to make room for %v (%d connections)", evicted.remote, remote, s.maxConns())
		evicted.stop()
		closeNow(evicted.nc)
	}
	go c.serve()
}

// admitLocked counts a new connection from the address key, or says why
// not. When the server is full it may instead pick a connection that has
// not logged in to make room: it is out of the server's count and the
// caller closes it.
func (s *Server) admitLocked(key netip.Addr, now time.Time) (why string, evicted *serverConn) {
	if s.closing {
		return "server closing", nil
	}
	if s.fails.Blocked(key, now) {
		return "locked out after failed logins", nil
	}
	st := s.addrs[key]
	if st == nil {
		st = &addrState{}
		s.addrs[key] = st
	}
	if limit := s.maxConnsPerAddr(); limit > 0 && st.conns >= limit {
		return fmt.Sprintf("more than %d connections from one address", limit), nil
	}
	if limit := s.maxConns(); limit > 0 && len(s.conns) >= limit {
		evicted = s.victimLocked(now)
		if evicted == nil {
			s.forgetLocked(key, st)
			return fmt.Sprintf("%d connections, all logged in", limit), nil
		}
		s.dropLocked(evicted)
	}
	st.conns++
	return "", evicted
}

// victimLocked picks the connection that makes room for a new one: of the
// connections not logged in, accepted before the time before, the one
// that has waited longest among those of the address holding the most. A
// flood from some addresses then costs them their own connections, not a
// newcomer's from elsewhere before it can log in. Nil when there is none.
func (s *Server) victimLocked(before time.Time) *serverConn {
	var victim *serverConn
	most := 0
	for e := s.anonymous.Front(); e != nil; e = e.Next() {
		c := e.Value.(*serverConn)
		if c.accepted.After(before) {
			break // the list is in the order of acceptance
		}
		if n := s.addrs[c.key].anonymous; n > most {
			victim, most = c, n
		}
	}
	return victim
}

// dropLocked takes c out of the server's connection count; its own
// goroutine still releases its address when it ends.
func (s *Server) dropLocked(c *serverConn) {
	delete(s.conns, c)
	s.loggedInLocked(c)
}

// loggedInLocked takes c off the list of connections that may be
// replaced.
func (s *Server) loggedInLocked(c *serverConn) {
	if c.anonymous != nil {
		s.anonymous.Remove(c.anonymous)
		c.anonymous = nil
		if st := s.addrs[c.key]; st != nil {
			st.anonymous--
		}
	}
}

// forgetLocked deletes the entry of key once it has no connections (its
// failed logins are s.fails's).
func (s *Server) forgetLocked(key netip.Addr, st *addrState) {
	if st.conns == 0 {
		delete(s.addrs, key)
	}
}

func (s *Server) finish(c *serverConn) {
	s.mu.Lock()
	s.dropLocked(c)
	if st := s.addrs[c.key]; st != nil {
		st.conns--
		s.forgetLocked(c.key, st)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// loggedIn takes c off the list of connections that may be replaced, and
// clears its address's failed logins.
func (s *Server) loggedIn(c *serverConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loggedInLocked(c)
	s.fails.Reset(c.key)
}

// closeNow closes a connection without waiting for anything: a TLS
// connection's underlying one is closed, since closing the TLS layer
// first writes an alert that a client that stopped reading would block.
func closeNow(nc net.Conn) {
	if tc, ok := nc.(interface{ NetConn() net.Conn }); ok {
		nc = tc.NetConn()
	}
	nc.Close()
}

// lockedOut reports whether the address key is locked out now.
func (s *Server) lockedOut(key netip.Addr) bool {
	return s.fails.Blocked(key, time.Now())
}

// loginFailed records a wrong password from the address key and reports
// whether it locked the address out.
func (s *Server) loginFailed(key netip.Addr) bool {
	return s.fails.Fail(key, time.Now())
}

// checkPassword compares in constant time, also with respect to the
// length of the password, by comparing digests.
func (s *Server) checkPassword(got []byte) bool {
	if s.Password == "" {
		return false
	}
	want := sha256.Sum256([]byte(s.Password))
	have := sha256.Sum256(got)
	return subtle.ConstantTimeCompare(want[:], have[:]) == 1
}

// Shutdown stops the server gracefully: it closes the listeners and the
// connections that are waiting for a request, lets commands that are
// running finish and send their output, then closes their connections
// too. If ctx ends first, every connection is closed at once, handlers'
// contexts are cancelled and ctx's error is returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.stopLocked(false)
	s.mu.Unlock()

	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.cancel()
		return nil
	case <-ctx.Done():
		s.Close()
		return ctx.Err()
	}
}

// Close closes the listeners and every connection at once and cancels
// the handlers' contexts. It does not wait for handlers to return.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopLocked(true)
	s.cancel()
	return nil
}

// stopLocked marks the server closing, closes its listeners and stops
// every connection: at once if force, else once its command is done.
func (s *Server) stopLocked(force bool) {
	s.initLocked()
	if !s.closing {
		s.closing = true
		close(s.done)
	}
	for l := range s.listeners {
		l.Close()
		delete(s.listeners, l)
	}
	s.primary = nil
	for c := range s.conns {
		c.stop()
		if force {
			closeNow(c.nc)
		}
	}
}

func (s *Server) maxPacketSize() int {
	return cmp.Or(s.MaxPacketSize, DefaultMaxRequestSize)
}

func (s *Server) maxFailedLogins() int {
	return cmp.Or(s.MaxFailedLogins, DefaultMaxFailedLogins)
}

func (s *Server) maxConnsPerAddr() int {
	return cmp.Or(s.MaxConnsPerAddr, DefaultMaxConnsPerAddr)
}

func (s *Server) maxConns() int {
	if s.MaxConns == 0 && s.connCap > 0 {
		return s.connCap
	}
	return cmp.Or(s.MaxConns, DefaultMaxConns)
}

// connCapFor is MaxConns's default under a limit of limit open files (0:
// unknown): DefaultMaxConns, or half the limit if that is less, so that
// the cap, not the limit, decides which connection goes, and half the
// descriptors stay for the rest of the process.
func connCapFor(limit uint64) int {
	if limit == 0 || limit/2 >= DefaultMaxConns {
		return DefaultMaxConns
	}
	return max(int(limit/2), 1)
}

func (s *Server) loginTimeout() time.Duration {
	return cmp.Or(s.LoginTimeout, DefaultLoginTimeout)
}

func (s *Server) lockoutDuration() time.Duration {
	return cmp.Or(s.LockoutDuration, DefaultLockoutDuration)
}

func (s *Server) idleTimeout() time.Duration {
	return cmp.Or(s.IdleTimeout, DefaultIdleTimeout)
}

func (s *Server) writeTimeout() time.Duration {
	return cmp.Or(s.WriteTimeout, DefaultWriteTimeout)
}

// addrPortOf converts a connection's address; unknown kinds give the
// zero AddrPort.
func addrPortOf(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// serverConn is one client connection.
type serverConn struct {
	srv      *Server
	nc       net.Conn
	remote   netip.AddrPort
	key      netip.Addr // the address its limits count against
	accepted time.Time
	ctx      context.Context
	cancel   context.CancelFunc

	br        *bufio.Reader
	rd        *Reader
	bw        *bufio.Writer
	authed    bool
	loginBy   time.Time     // when an anonymous connection is closed; zero for never
	anonymous *list.Element // in srv.anonymous until logged in; guarded by srv.mu
	out       []byte        // encoding scratch

	resp    responseWriter // reused for every command
	replyID int32          // id of the command being answered
	werr    error          // first write error; the connection is dead after it

	mu       sync.Mutex // guards stopping against the read deadline
	stopping bool
}

// maxKeptScratch is the largest encoding buffer kept between packets.
const maxKeptScratch = 64 << 10

func (c *serverConn) serve() {
	s := c.srv
	defer func() {
		c.flush()
		if c.werr != nil && !errors.Is(c.werr, errHandlerPanic) && !c.isStopping() {
			s.log.Printf("write", "rcon: %v: %v; closing", c.remote, c.werr)
		}
		c.cancel()
		c.nc.Close()
		s.finish(c)
	}()
	if tc, ok := c.nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true) // whole packets are buffered; send each batch at once
	}
	c.br = bufio.NewReader(c.nc)
	c.rd = NewReader(c.br, s.maxPacketSize())
	for {
		if !c.armRead() {
			return
		}
		p, err := c.rd.ReadPacket()
		if err != nil {
			c.readFailed(err)
			return
		}
		if !c.handle(p) {
			return
		}
		if !c.nextPacketBuffered() && !c.flush() {
			return
		}
	}
}

// readFailed logs why a connection ends, unless the client closed it or
// the server is shutting it down.
func (c *serverConn) readFailed(err error) {
	if errors.Is(err, io.EOF) || c.isStopping() {
		return
	}
	log := c.srv.log
	var ne net.Error
	switch {
	case !c.authed && !c.loginBy.IsZero() && errors.As(err, &ne) && ne.Timeout() && !time.Now().Before(c.loginBy):
		log.Printf("login-timeout", "rcon: %v: not logged in within %v; closing", c.remote, c.srv.loginTimeout())
	case errors.As(err, &ne) && ne.Timeout():
		log.Printf("idle", "rcon: %v: idle for %v; closing", c.remote, c.srv.idleTimeout())
	default:
		log.Printf("read", "rcon: %v: %v", c.remote, err)
	}
}

// armRead sets the deadline for the next request, unless the connection
// is being shut down: the idle timeout, or the login deadline if sooner.
func (c *serverConn) armRead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return false
	}
	deadline := c.deadline(c.srv.idleTimeout())
	_ = c.nc.SetReadDeadline(deadline)
	return true
}

// deadline is now plus d (none when d is negative), but no later than
// the login deadline while the connection is anonymous.
func (c *serverConn) deadline(d time.Duration) time.Time {
	var t time.Time
	if d > 0 {
		t = time.Now().Add(d)
	}
	if !c.authed && !c.loginBy.IsZero() && (t.IsZero() || c.loginBy.Before(t)) {
		t = c.loginBy
	}
	return t
}

// stop makes a connection that waits for a request return now, and one
// that runs a command return after it.
func (c *serverConn) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopping = true
	_ = c.nc.SetReadDeadline(time.Now())
}

func (c *serverConn) isStopping() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopping
}

// nextPacketBuffered reports whether a whole request is already
// buffered, so answers can wait and go out together (pipelining).
func (c *serverConn) nextPacketBuffered() bool {
	n := c.br.Buffered()
	if n < 4 {
		return false
	}
	hdr, _ := c.br.Peek(4)
	r := wire.NewReader(hdr)
	size, _ := r.Int32()
	return size >= 0 && int(size) <= n-4
}

// writerPool holds the output buffers of connections that are waiting
// for a request, so an idle connection costs no output buffer.
var writerPool = sync.Pool{New: func() any { return bufio.NewWriter(nil) }}

// flush sends the buffered answers and returns the output buffer.
func (c *serverConn) flush() bool {
	if c.bw == nil {
		return c.werr == nil
	}
	if c.werr == nil {
		c.werr = c.bw.Flush()
	}
	c.bw.Reset(nil)
	writerPool.Put(c.bw)
	c.bw = nil
	return c.werr == nil
}

// handle answers one request and reports whether to keep the connection.
func (c *serverConn) handle(p Packet) bool {
	d := c.srv.Dialect
	switch {
	case p.Type == TypeAuth:
		return c.login(p)
	case !c.authed && d == DialectMinecraft:
		c.send(-1, TypeAuthResponse, nil)
	case !c.authed:
		if p.Type == TypeExecCommand {
			c.send(p.ID, TypeResponseValue, nil) // as SRCDS has answered since about 2012
		}
	case p.Type == TypeExecCommand:
		c.exec(p)
	case d == DialectMinecraft:
		c.send(p.ID, TypeResponseValue, []byte("Unknown request "+strconv.FormatInt(int64(uint32(p.Type)), 16)))
	case p.Type == TypeResponseValue:
		c.send(p.ID, TypeResponseValue, nil)
		c.send(p.ID, TypeResponseValue, srcdsProbeTail)
	}
	return c.werr == nil
}

func (c *serverConn) login(p Packet) bool {
	s := c.srv
	key := sourcekey.Of(c.remote.Addr())
	if s.lockedOut(key) {
		s.log.Printf("lockout", "rcon: %v: login while locked out; closing", c.remote)
		return false
	}
	if s.Dialect == DialectSource {
		c.send(p.ID, TypeResponseValue, nil)
	}
	c.authed = s.checkPassword(cstring(p.Body))
	if c.authed {
		s.loggedIn(c)
		c.send(p.ID, TypeAuthResponse, nil)
		return c.werr == nil
	}
	c.send(-1, TypeAuthResponse, nil)
	if s.loginFailed(key) {
		s.log.Printf("lockout", "rcon: %v: wrong password; address locked out for %v", c.remote, s.lockoutDuration())
		return false
	}
	s.log.Printf("login", "rcon: %v: wrong password", c.remote)
	return c.werr == nil
}

func (c *serverConn) exec(p Packet) {
	s := c.srv
	if c.resp.Splitter == nil {
		c.resp.remote = c.remote
		c.resp.Splitter = NewSplitter(s.Dialect, s.ResponseSplitSize, func(body []byte) error {
			c.send(c.replyID, TypeResponseValue, body)
			return c.werr
		})
	}
	c.resp.reset()
	c.replyID = p.ID
	if s.Handler != nil {
		c.run(&c.resp, string(cstring(p.Body)))
	}
	_ = c.resp.Close()
}

// errHandlerPanic ends a connection whose handler panicked.
var errHandlerPanic = errors.New("rcon: handler panic")

// run calls the handler, turning a panic into a closed connection.
func (c *serverConn) run(w ResponseWriter, cmd string) {
	defer func() {
		if r := recover(); r != nil {
			c.srv.log.Printf("panic", "rcon: %v: handler panic: %v", c.remote, r)
			if c.werr == nil {
				c.werr = errHandlerPanic
			}
		}
	}()
	c.srv.Handler.ServeRCON(c.ctx, w, cmd)
}

// send buffers one packet; errors are kept in c.werr.
func (c *serverConn) send(id int32, typ PacketType, body []byte) {
	if c.werr != nil {
		return
	}
	c.out, c.werr = Packet{ID: id, Type: typ, Body: body}.AppendBinary(c.out[:0])
	if c.werr == nil {
		if c.bw == nil {
			c.bw = writerPool.Get().(*bufio.Writer)
			c.bw.Reset(deadlineWriter{c})
		}
		_, c.werr = c.bw.Write(c.out)
	}
	if cap(c.out) > maxKeptScratch {
		c.out = nil
	}
}

// cstring returns b up to its first NUL.
func cstring(b []byte) []byte {
	for i, x := range b {
		if x == 0 {
			return b[:i]
		}
	}
	return b
}

// responseWriter is the server's ResponseWriter.
type responseWriter struct {
	*Splitter
	remote netip.AddrPort
}

func (w *responseWriter) RemoteAddr() netip.AddrPort { return w.remote }

// deadlineWriter bounds every write to the connection by WriteTimeout,
// and by the login deadline while the connection is anonymous.
type deadlineWriter struct{ c *serverConn }

func (w deadlineWriter) Write(p []byte) (int, error) {
	_ = w.c.nc.SetWriteDeadline(w.c.deadline(w.c.srv.writeTimeout()))
	return w.c.nc.Write(p)
}
