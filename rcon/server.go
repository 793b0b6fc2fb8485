package rcon

import (
	"bufio"
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

	"github.com/gsq-project/gsq/internal/wire"
)

// Server defaults, used when the matching [Server] field is zero.
const (
	// DefaultMaxRequestSize limits the size field of requests: Valve's
	// 4096 (source-rcon.txt, "Packet Size"). Minecraft clients never send
	// more than 1460 bytes.
	DefaultMaxRequestSize = 4096
	// DefaultMaxFailedLogins is how many wrong passwords an address may
	// send before it is locked out.
	DefaultMaxFailedLogins = 5
	// DefaultLockoutDuration is how long a lockout lasts, and how long a
	// failed login is remembered.
	DefaultLockoutDuration = 5 * time.Minute
	// DefaultMaxConnsPerAddr caps simultaneous connections per address.
	DefaultMaxConnsPerAddr = 16
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
// mirroring an empty RESPONSE_VALUE (Valve's "0x0000 0001 0000 0000";
// the byte layout follows SquadJS, rcon-field-notes.md §3).
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
// Behaviour per [Dialect] (rcon-field-notes.md §1):
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
// Passwords are compared in constant time and never logged. An address
// is locked out after MaxFailedLogins wrong passwords: its connection is
// closed and new ones are refused until LockoutDuration has passed.
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
	// MaxConnsPerAddr caps simultaneous connections from one IP address;
	// more are closed on accept. Zero means [DefaultMaxConnsPerAddr];
	// negative is unlimited.
	MaxConnsPerAddr int
	// IdleTimeout closes a connection that has not sent a complete packet
	// for this long. Zero means [DefaultIdleTimeout]; negative never.
	IdleTimeout time.Duration
	// WriteTimeout closes a connection when one write to it blocks this
	// long (a client that stopped reading). Zero means
	// [DefaultWriteTimeout]; negative never.
	WriteTimeout time.Duration
	// Logf, if set, receives one line per notable event: refused or
	// dropped connections, failed logins, lockouts, handler panics.
	Logf func(format string, args ...any)

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*serverConn]struct{}
	addrs     map[netip.Addr]*addrState
	closing   bool
	wg        sync.WaitGroup
	ctx       context.Context
	cancel    context.CancelFunc
}

// addrState is what the server remembers about one client IP address.
type addrState struct {
	conns       int
	failures    int
	forgetAt    time.Time // when failures expire
	lockedUntil time.Time
}

// idle reports whether the state can be forgotten.
func (a *addrState) idle(now time.Time) bool {
	return a.conns == 0 && now.After(a.lockedUntil) && (a.failures == 0 || now.After(a.forgetAt))
}

// pruneAddrsAbove is the address-table size above which forgettable
// entries are swept on each new failure.
const pruneAddrsAbove = 1024

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
// non-nil error; after Shutdown or Close it is [ErrServerClosed].
func (s *Server) Serve(l net.Listener) error {
	if !s.track(l) {
		l.Close()
		return ErrServerClosed
	}
	defer s.untrack(l)
	var backoff time.Duration
	for {
		nc, err := l.Accept()
		if err != nil {
			if s.isClosing() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.logf("rcon: accept: %v; retrying in %v", err, backoff)
				time.Sleep(backoff)
				continue
			}
			return fmt.Errorf("rcon: accept: %w", err)
		}
		backoff = 0
		s.start(nc)
	}
}

func (s *Server) track(l net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.initLocked()
	s.listeners[l] = struct{}{}
	return true
}

func (s *Server) untrack(l net.Listener) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.listeners[l]; ok {
		delete(s.listeners, l)
		l.Close()
	}
}

func (s *Server) initLocked() {
	if s.conns == nil {
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[*serverConn]struct{})
		s.addrs = make(map[netip.Addr]*addrState)
		s.ctx, s.cancel = context.WithCancel(context.Background())
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
	s.mu.Lock()
	if why := s.admitLocked(remote.Addr()); why != "" {
		s.mu.Unlock()
		s.logf("rcon: refused %v: %s", remote, why)
		nc.Close()
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	c := &serverConn{srv: s, nc: nc, remote: remote, ctx: ctx, cancel: cancel}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	go c.serve()
}

// admitLocked counts a new connection from addr, or says why not.
func (s *Server) admitLocked(addr netip.Addr) string {
	if s.closing {
		return "server closing"
	}
	st := s.addrs[addr]
	if st == nil {
		st = &addrState{}
		s.addrs[addr] = st
	}
	if time.Now().Before(st.lockedUntil) {
		return "locked out after failed logins"
	}
	if limit := s.maxConnsPerAddr(); limit > 0 && st.conns >= limit {
		return fmt.Sprintf("more than %d connections from one address", limit)
	}
	st.conns++
	return ""
}

func (s *Server) finish(c *serverConn) {
	s.mu.Lock()
	delete(s.conns, c)
	addr := c.remote.Addr()
	if st := s.addrs[addr]; st != nil {
		st.conns--
		if st.idle(time.Now()) {
			delete(s.addrs, addr)
		}
	}
	s.mu.Unlock()
	s.wg.Done()
}

// lockedOut reports whether addr is locked out now.
func (s *Server) lockedOut(addr netip.Addr) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.addrs[addr]
	return st != nil && time.Now().Before(st.lockedUntil)
}

// loginFailed records a wrong password from addr and reports whether it
// locked the address out.
func (s *Server) loginFailed(addr netip.Addr) bool {
	limit := s.maxFailedLogins()
	if limit < 0 {
		return false
	}
	window := s.lockoutDuration()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.addrs) > pruneAddrsAbove {
		for a, st := range s.addrs {
			if st.idle(now) {
				delete(s.addrs, a)
			}
		}
	}
	st := s.addrs[addr]
	if st == nil {
		st = &addrState{}
		s.addrs[addr] = st
	}
	if now.After(st.forgetAt) {
		st.failures = 0
	}
	st.failures++
	st.forgetAt = now.Add(window)
	if st.failures < limit {
		return false
	}
	st.failures = 0
	st.lockedUntil = now.Add(window)
	return true
}

// loginSucceeded forgets addr's failed logins.
func (s *Server) loginSucceeded(addr netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.addrs[addr]; st != nil {
		st.failures = 0
	}
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
	s.closing = true
	s.initLocked()
	for l := range s.listeners {
		l.Close()
		delete(s.listeners, l)
	}
	for c := range s.conns {
		c.stop()
		if force {
			c.nc.Close()
		}
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

func (s *Server) maxPacketSize() int {
	return orDefault(s.MaxPacketSize, DefaultMaxRequestSize)
}

func (s *Server) maxFailedLogins() int {
	return orDefault(s.MaxFailedLogins, DefaultMaxFailedLogins)
}

func (s *Server) maxConnsPerAddr() int {
	return orDefault(s.MaxConnsPerAddr, DefaultMaxConnsPerAddr)
}

func (s *Server) lockoutDuration() time.Duration {
	return orDefault(s.LockoutDuration, DefaultLockoutDuration)
}

func (s *Server) idleTimeout() time.Duration {
	return orDefault(s.IdleTimeout, DefaultIdleTimeout)
}

func (s *Server) writeTimeout() time.Duration {
	return orDefault(s.WriteTimeout, DefaultWriteTimeout)
}

func orDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
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
	srv    *Server
	nc     net.Conn
	remote netip.AddrPort
	ctx    context.Context
	cancel context.CancelFunc

	br     *bufio.Reader
	rd     *Reader
	bw     *bufio.Writer
	authed bool
	out    []byte // encoding scratch

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
			if !errors.Is(err, io.EOF) && !c.isStopping() {
				s.logf("rcon: %v: %v", c.remote, err)
			}
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

// armRead sets the idle deadline for the next request, unless the
// connection is being shut down.
func (c *serverConn) armRead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopping {
		return false
	}
	if d := c.srv.idleTimeout(); d > 0 {
		_ = c.nc.SetReadDeadline(time.Now().Add(d))
	}
	return true
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
			c.send(p.ID, TypeResponseValue, nil) // SRCDS since ~2012 (field notes §1.1)
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
	addr := c.remote.Addr()
	if s.lockedOut(addr) {
		s.logf("rcon: %v: login while locked out; closing", c.remote)
		return false
	}
	if s.Dialect == DialectSource {
		c.send(p.ID, TypeResponseValue, nil)
	}
	c.authed = s.checkPassword(cstring(p.Body))
	if c.authed {
		s.loginSucceeded(addr)
		c.send(p.ID, TypeAuthResponse, nil)
		return c.werr == nil
	}
	c.send(-1, TypeAuthResponse, nil)
	if s.loginFailed(addr) {
		s.logf("rcon: %v: wrong password; address locked out for %v", c.remote, s.lockoutDuration())
		return false
	}
	s.logf("rcon: %v: wrong password", c.remote)
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

// run calls the handler, turning a panic into a closed connection.
func (c *serverConn) run(w ResponseWriter, cmd string) {
	defer func() {
		if r := recover(); r != nil {
			c.srv.logf("rcon: %v: handler panic: %v", c.remote, r)
			if c.werr == nil {
				c.werr = fmt.Errorf("rcon: handler panic: %v", r)
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
			c.bw.Reset(deadlineWriter{c.nc, c.srv.writeTimeout()})
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

// deadlineWriter bounds every write to the connection.
type deadlineWriter struct {
	nc      net.Conn
	timeout time.Duration
}

func (w deadlineWriter) Write(p []byte) (int, error) {
	if w.timeout > 0 {
		_ = w.nc.SetWriteDeadline(time.Now().Add(w.timeout))
	}
	return w.nc.Write(p)
}
