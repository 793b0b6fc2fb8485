package rcon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultDialTimeout     = 5 * time.Second
	DefaultTimeout         = 5 * time.Second
	DefaultMaxResponseSize = 64 << 20
	DefaultEventBuffer     = 256
)

// Reconnect backoff: a lost connection is dialled again at most once per
// backoff interval, which starts at minReconnectBackoff and doubles after
// every failed attempt up to maxReconnectBackoff. Servers ban addresses
// that retry fast (SRCDS bans an address for repeated failed logins).
const (
	minReconnectBackoff = time.Second
	maxReconnectBackoff = 30 * time.Second
)

// Options configures a Client. The zero value (and a nil *Options) is a
// serial Source RCON client that finds out how the server it meets
// behaves (see the package documentation) with the defaults above.
type Options struct {
	Dialect Dialect
	// Profile names a game profile (see [ProfileNames]): what the client
	// would otherwise find out by itself, known in advance. Empty means
	// none.
	Profile string

	DialTimeout time.Duration // for Dial and reconnects
	// Timeout bounds the connection and login, counted from the start of
	// Dial (or of a reconnection) whatever deadline the context has, and
	// each command whose context has no deadline, whatever it waits for
	// (the server, a reconnection).
	Timeout time.Duration

	MaxPacketSize int // limit on inbound size fields; 0 means DefaultMaxPacketSize
	// MaxResponseSize limits one command's output, and so the memory the
	// output takes; 0 means DefaultMaxResponseSize.
	MaxResponseSize int

	// Pipeline lets several commands be in flight at once, answers being
	// matched by id, each command written with its end-of-answer probe.
	// It is for servers known to handle requests in order as SRCDS does,
	// applies to DialectSource and DialectCS2 only, and is ignored when
	// the server's replies do not carry the request's id or the end of an
	// answer is found by a quiet period.
	Pipeline bool
	// MaxInFlight bounds the commands in flight at once when pipelining;
	// the others wait their turn. 0 means no bound.
	MaxInFlight int
	// CommandDelay is the minimum pause between the end of one command
	// and the start of the next when commands are serial.
	CommandDelay time.Duration

	// LooseIDs accepts replies carrying id 0, -1 or 42, whatever id the
	// request had, for servers that do not echo ids even though their
	// login reply did. Such replies can only be matched to the one
	// command in flight, so commands become serial. A server whose login
	// reply carries a foreign id is recognised without it.
	LooseIDs bool

	// KeepAlive, if positive, sends an end-of-answer probe whenever the
	// connection has been idle that long, for servers and middleboxes
	// that drop idle connections. On a server known to answer probes, a
	// probe unanswered within max(KeepAlive, the probe wait) marks the
	// connection lost, so the next command reconnects first.
	KeepAlive time.Duration

	// NoReconnect stops a Client created by Dial from dialling again and
	// logging in, with backoff, when a command finds the connection lost.
	// Commands in flight when it dropped fail with ErrConnClosed either
	// way: they are never resent, as they may have run.
	NoReconnect bool
	// OnReconnect, if set, is called after each attempt to replace a lost
	// connection, with the attempt's number (from 1) and its error (nil
	// once logged in again).
	OnReconnect func(attempt int, err error)
	// DialContext, if set, opens the connections of Dial and of
	// reconnects instead of a net.Dialer, for RCON over TLS or through a
	// proxy.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Terminator overrides how the end of an answer is found (nil: the
	// client finds out, see the package documentation).
	Terminator Terminator

	// EventBuffer is the capacity of the Events channel; 0 means
	// DefaultEventBuffer. When it is full the oldest event is dropped.
	EventBuffer int

	// Logf, if set, receives notes: what the client found out about the
	// server, and packets it dropped (rate-limited).
	Logf func(format string, args ...any)
	// Debug, if set, is called with the wire bytes of every packet the
	// client sends ("send") and receives ("recv"). The login packet is
	// shown with each byte of the password replaced by '*'. It must not
	// retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
}

// Response is the answer to one command.
type Response struct {
	Body    []byte        // the output, raw bytes (see DecodeText)
	Packets int           // the packets it came in
	RTT     time.Duration // from the write of the command to the first packet of its answer
	// SingleByte reports that the server sent this answer's text as single
	// bytes, each character cut to its low byte: legacy Rust does so until
	// asked for UTF-8, which a client without the rust-legacy profile does
	// once the first answer has shown what the server is. Characters above
	// U+00FF are lost from such an answer.
	SingleByte bool
}

// Text returns the output decoded with [DecodeText].
func (r *Response) Text() string { return DecodeText(r.Body) }

// Client is an RCON client connection. It is safe for concurrent use.
type Client struct {
	opts     Options
	addr     string // as given to Dial, for errors
	password string
	dial     func(context.Context) (net.Conn, error) // nil: no reconnect
	events   chan Packet
	log      ratelog.Limiter

	pipeline bool
	slot     chan struct{} // serial mode: held for a whole command, or by the idle reader
	turn     readTurn      // serial mode: who waits for the slot (see client_serial.go)
	inflight chan struct{} // pipelined mode: one token per command in flight, if bounded
	redial   chan struct{} // held while (re)connecting
	coalesce bool          // pipelined requests share Writes (see conn.wq)
	wmu      sync.Mutex    // one request per Write, when not coalescing
	wbuf     []byte        // encoding scratch, guarded by wmu
	scratch  []byte        // serial mode: output of the command holding the slot
	evmu     sync.Mutex    // guards sends on events against Close
	evClosed bool
	readers  sync.WaitGroup
	lastUsed atomic.Int64  // with KeepAlive, when a command last started or ended, in Unix ns
	ids      atomic.Uint32 // request ids issued (see newID)

	lmu    sync.Mutex             // serialises learning
	srv    atomic.Pointer[traits] // what the server was found to do (see client_adapt.go); never changed once stored
	rtt    atomic.Int64           // the login's round-trip time, ns
	cur    atomic.Pointer[conn]   // c.cn, for the fast path
	gaveUp atomic.Int32           // the last probe taken for unanswered
	shut   atomic.Bool            // c.closed, for the fast path

	mu          sync.Mutex
	cn          *conn
	calls       map[int32]*call // pipelined mode
	closed      bool
	lastDone    time.Time
	abandoned   atomic.Pointer[abandonedReq]
	lastAttempt time.Time
	backoff     time.Duration
}

// conn is one live connection and the reason it died.
type conn struct {
	nc   net.Conn
	rd   *Reader
	peer netip.AddrPort
	err  error         // set once, under Client.mu, when the connection fails
	dead chan struct{} // closed when err is set

	// Serial mode: the deadlines last set, owned by the slot's holder.
	rdl, wdl time.Time
	utf8Sent bool // legacy Rust was asked for UTF-8 (slot holder's)

	// Pipelined mode.
	wq    writeQueue
	woken []*call // got packets, to be woken (readLoop's own)
}

// Dial connects to addr ("host:port") over TCP, logs in with password and
// returns the client. opts may be nil.
func Dial(ctx context.Context, addr string, password string, opts *Options) (*Client, error) {
	since := time.Now()
	c, err := newClient(addr, password, opts)
	if err != nil {
		return nil, err
	}
	dialer := c.opts.DialContext
	if dialer == nil {
		d := &net.Dialer{}
		dialer = d.DialContext
	}
	c.dial = func(ctx context.Context) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, c.opts.DialTimeout)
		defer cancel()
		nc, err := dialer(ctx, "tcp", addr)
		if err != nil {
			return nil, opError("dial", addr, err)
		}
		return nc, nil
	}
	if c.opts.NoReconnect {
		defer func() { c.dial = nil }()
	}
	c.lastAttempt = since
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, nc, since); err != nil {
		return nil, err
	}
	return c, nil
}

// NewClient logs in over an established connection and returns the
// client, which owns conn from then on. Such a client cannot reconnect.
// opts may be nil.
func NewClient(ctx context.Context, conn net.Conn, password string, opts *Options) (*Client, error) {
	addr := ""
	if a := conn.RemoteAddr(); a != nil {
		addr = a.String()
	}
	c, err := newClient(addr, password, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := c.start(ctx, conn, time.Now()); err != nil {
		return nil, err
	}
	return c, nil
}

func newClient(addr, password string, opts *Options) (*Client, error) {
	c := &Client{addr: addr, password: password, calls: make(map[int32]*call), backoff: minReconnectBackoff}
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
	if o.DialTimeout <= 0 {
		o.DialTimeout = DefaultDialTimeout
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxPacketSize <= 0 {
		o.MaxPacketSize = DefaultMaxPacketSize
	}
	if o.MaxResponseSize <= 0 {
		o.MaxResponseSize = DefaultMaxResponseSize
	}
	if o.EventBuffer <= 0 {
		o.EventBuffer = DefaultEventBuffer
	}
	if strings.ContainsRune(password, 0) {
		return nil, errors.New("rcon: password contains a NUL byte")
	}
	prof, err := LookupProfile(o.Profile)
	if err != nil {
		return nil, err
	}
	t := prof.traits
	t.dialect = o.Dialect
	if o.Dialect == DialectCS2 {
		t.single = true
	}
	if o.LooseIDs {
		t.addFixedIDs(0, -1, 42)
	}
	c.srv.Store(&t)
	c.log.Logf = o.Logf
	c.slot = make(chan struct{}, 1)
	c.redial = make(chan struct{}, 1)
	c.events = make(chan Packet, o.EventBuffer)
	return c, nil
}

// start logs in on nc and starts its readers. It closes nc on failure.
// since is when the caller began to connect, for the login's errors.
func (c *Client) start(ctx context.Context, nc net.Conn, since time.Time) error {
	cn := &conn{nc: nc, rd: newReaderSize(nc, c.opts.MaxPacketSize, clientBufferSize), dead: make(chan struct{})}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok && a != nil {
		cn.peer = a.AddrPort()
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if c.opts.Debug != nil {
		cn.rd.debug = func(b []byte) { c.opts.Debug("recv", cn.peer, b) }
	}
	if err := c.login(ctx, cn, since); err != nil {
		nc.Close()
		return opError("login", c.addr, err)
	}
	nc.SetDeadline(time.Time{})
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		nc.Close()
		return ErrClientClosed
	}
	first := c.cn == nil
	c.cn = cn
	c.cur.Store(cn)
	// A connection that worked may be replaced at once if it drops.
	c.backoff, c.lastAttempt = minReconnectBackoff, time.Time{}
	c.readers.Add(1)
	c.mu.Unlock()
	if first {
		c.pipeline = c.opts.Pipeline && c.canPipeline()
		c.coalesce = c.pipeline && c.opts.Dialect == DialectSource
		if c.pipeline && c.opts.MaxInFlight > 0 {
			c.inflight = make(chan struct{}, c.opts.MaxInFlight)
		}
	}
	if c.pipeline {
		go c.readLoop(cn)
	} else {
		c.turn.lastEnd.Store(time.Now().UnixNano())
		go c.idleReader(cn)
	}
	if c.opts.KeepAlive > 0 {
		c.readers.Add(1)
		go c.keepAlive(cn)
	}
	return nil
}

// login sends SERVERDATA_AUTH on cn and reads until AUTH_RESPONSE,
// skipping the empty RESPONSE_VALUE classic SRCDS sends first, passing
// unsolicited packets to Events and learning what the answer shows of the
// server: a reply id other than the request's (Palworld answers 0, old
// Conan Exiles 42) is the id its replies carry from then on.
func (c *Client) login(ctx context.Context, cn *conn, since time.Time) error {
	// The login ends at Options.Timeout from when the caller began to
	// connect, or at the context's deadline, whichever comes first; the
	// bound a timeout reports counts from the same start.
	dl := since.Add(c.opts.Timeout)
	ctxDeadline, byCtx := ctx.Deadline()
	if byCtx = byCtx && ctxDeadline.Before(dl); byCtx {
		dl = ctxDeadline
	}
	start := since
	cn.nc.SetDeadline(dl)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { cn.nc.SetDeadline(pastDeadline) })
		defer stop()
	}
	id := c.newID()
	b, _ := Packet{ID: id, Type: TypeAuth, Body: []byte(c.password)}.AppendBinary(nil)
	if c.opts.Debug != nil {
		masked := append([]byte(nil), b...)
		for i := 12; i < len(masked)-2; i++ {
			masked[i] = '*'
		}
		c.opts.Debug("send", cn.peer, masked)
	}
	if _, err := cn.nc.Write(b); err != nil {
		return c.loginErr(ctx, byCtx, dl.Sub(start), err)
	}
	sent := time.Now()
	for {
		p, err := cn.rd.next()
		if err != nil {
			return c.loginErr(ctx, byCtx, dl.Sub(start), err)
		}
		switch {
		case p.Type == TypeAuthResponse && p.ID == -1:
			return &causeError{msg: "authentication failed: the server answered the login with id -1 (wrong password)", errs: []error{ErrAuthFailed}}
		case p.Type == TypeAuthResponse:
			c.rtt.Store(int64(time.Since(sent)))
			if p.ID != id {
				c.learn(cn, func(t *traits) bool { ok := !t.acceptsID(p.ID); t.addFixedIDs(p.ID); return ok },
					"the login reply carries id %d, not the request's %d: replies with id %d go to the command in flight, and commands are serial", p.ID, id, p.ID)
			}
			return nil
		case p.Type == TypeResponseValue && len(p.Body) == 0:
			// SRCDS's empty packet before AUTH_RESPONSE.
		default:
			c.unsolicited(cn, p)
		}
	}
}

// loginErr turns the error that ended a login into the client's errors;
// byCtx tells that the login's deadline was the context's.
func (c *Client) loginErr(ctx context.Context, byCtx bool, limit time.Duration, err error) error {
	switch {
	case isTimeoutErr(err):
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		errs := []error{ErrNoAuthResponse, ErrTimeout}
		// The socket's deadline may pass a moment before the context's
		// timer fires: a deadline that was the context's is its error.
		if byCtx || ctx.Err() != nil {
			errs = append(errs, context.DeadlineExceeded)
		}
		return &causeError{msg: fmt.Sprintf("no answer to the login within %v", limit.Round(time.Millisecond)), errs: errs}
	case isClosed(err):
		return &causeError{
			msg:  fmt.Sprintf("the server closed the connection during the login (%v): it may refuse the password", err),
			errs: []error{ErrAuthFailed, ErrConnClosed, err},
		}
	}
	return err
}

// causeError is a message with the errors it matches under errors.Is.
type causeError struct {
	msg  string
	errs []error
}

func (e *causeError) Error() string   { return e.msg }
func (e *causeError) Unwrap() []error { return e.errs }

// Timeout reports whether one of the errors is a timeout.
func (e *causeError) Timeout() bool {
	for _, err := range e.errs {
		if neterr.IsTimeout(err) {
			return true
		}
	}
	return false
}

// isClosed reports whether err means the peer went away.
func isClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, ErrTruncated) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrClosedPipe) ||
		isConnReset(err)
}

func isConnReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && !oe.Timeout()
}

// isTimeoutErr reports whether err is a deadline expiring.
func isTimeoutErr(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// pastDeadline interrupts a blocked read at once.
var pastDeadline = time.Unix(1, 0)

// newID returns the next request id: positive, monotonic, wrapping to 1,
// never 0, -1 or 42 (ids some servers put on every reply whatever was
// asked), and never with its low 24 bits all zero, so the first bytes of
// a real packet cannot look like the stray tail Squad sends (see
// squadTail).
func (c *Client) newID() int32 {
	for {
		id := int32(c.ids.Add(1) & math.MaxInt32)
		if id != 0 && id != 42 && id&0xFFFFFF != 0 {
			return id
		}
	}
}

// issued reports whether id is one this client may have used.
func (c *Client) issued(id int32) bool {
	n := c.ids.Load()
	return id > 0 && (n > math.MaxInt32 || uint32(id) <= n)
}

// Events returns the channel of unsolicited packets: Squad chat (type
// 1), legacy Rust console lines (type 4) and any packet whose id matches
// no request this client sent. It is buffered; when it is full the
// oldest packet is dropped, so the reader never blocks. It is closed
// by Close.
func (c *Client) Events() <-chan Packet { return c.events }

// event delivers p, whose body the caller gave up, on Events.
func (c *Client) event(p Packet) {
	c.evmu.Lock()
	defer c.evmu.Unlock()
	if c.evClosed {
		return
	}
	for {
		select {
		case c.events <- p:
			return
		default:
		}
		select {
		case old := <-c.events:
			c.log.Printf("events full", "rcon: %s: events full, dropped packet id %d type %v", c.addr, old.ID, old.Type)
		default:
		}
	}
}

// unsolicited handles a packet that belongs to no request: Rust console
// lines teach the client that the server is legacy Rust; empty packets
// with id -1 are dropped; everything else goes to Events. p's body may be
// shared.
func (c *Client) unsolicited(cn *conn, p Packet) {
	if p.Type == TypeRustConsole {
		c.learn(cn, func(t *traits) bool { ok := !t.rust; t.rust = true; return ok },
			"type-4 console lines: legacy Rust RCON; answers end with an empty packet of id -1, and the connection is switched to UTF-8")
	}
	if p.ID == -1 && p.Type == TypeResponseValue && len(p.Body) == 0 {
		return
	}
	p.Body = append([]byte{}, p.Body...)
	c.event(p)
}

// late drops a packet of a request that is over. The extra packet SRCDS
// sends after a probe's mirror (or an empty one, Squad's malformed form)
// is expected and dropped silently; when it is empty, the 7 stray bytes
// Squad sends after it are skipped too.
func (c *Client) late(cn *conn, p Packet) {
	if len(p.Body) == 0 {
		cn.rd.skipNext(squadTail)
		return
	}
	if isProbeTail(p.Body) {
		return
	}
	c.log.Printf("late", "rcon: %s: dropped late packet id %d type %v (%d bytes)", c.addr, p.ID, p.Type, len(p.Body))
}

// note logs what the client found out about the server.
func (c *Client) note(cn *conn, format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf("rcon: %s: detected: "+format, append([]any{c.addr}, args...)...)
	}
}

// Close closes the connection. Commands in flight fail with
// ErrClientClosed and Events is closed once the readers have stopped.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.shut.Store(true)
	cn := c.cn
	c.mu.Unlock()
	var err error
	if cn != nil {
		err = cn.nc.Close()
		c.fail(cn, ErrClientClosed)
	}
	c.readers.Wait()
	c.evmu.Lock()
	c.evClosed = true
	close(c.events)
	c.evmu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// fail marks cn dead with err and fails the requests in flight on it.
func (c *Client) fail(cn *conn, err error) {
	c.mu.Lock()
	if cn.err != nil {
		c.mu.Unlock()
		return
	}
	switch {
	case c.closed:
		err = ErrClientClosed
	case errors.Is(err, ErrPacketTooLarge), errors.Is(err, ErrPacketTooSmall):
		err = fmt.Errorf("%w: %w", ErrProtocol, err)
	case !errors.Is(err, ErrConnClosed) && !errors.Is(err, ErrProtocol) && !errors.Is(err, ErrResponseTooLarge):
		err = fmt.Errorf("%w: %w", ErrConnClosed, err)
	}
	cn.err = err
	close(cn.dead)
	var calls []*call
	for id, cl := range c.calls {
		if cl.cn == cn {
			calls = append(calls, cl)
			delete(c.calls, id)
		}
	}
	c.mu.Unlock()
	cn.nc.Close()
	for _, cl := range calls {
		cl.finish(err)
	}
}

// connection returns the live connection, dialling again with backoff if
// it was lost and reconnecting is allowed, within ctx and dl.
func (c *Client) connection(ctx context.Context, dl time.Time) (*conn, error) {
	if cn := c.cur.Load(); cn != nil && !c.shut.Load() {
		select {
		case <-cn.dead:
		default:
			return cn, nil
		}
	}
	attempt := 0
	var last error // the last attempt's
	for {
		c.mu.Lock()
		cn, closed := c.cn, c.closed
		var err error
		if cn != nil {
			err = cn.err
		}
		c.mu.Unlock()
		switch {
		case closed:
			return nil, ErrClientClosed
		case err == nil:
			return cn, nil
		case c.dial == nil:
			return nil, err
		}
		if err := c.wait(ctx, dl, c.redial); err != nil {
			return nil, cmp.Or(last, err)
		}
		replaced, err := c.reconnect(ctx, dl, cn)
		<-c.redial
		if !replaced {
			if err != nil {
				return nil, cmp.Or(last, err) // no time left for another attempt
			}
			continue // another goroutine replaced it
		}
		attempt++
		if c.opts.OnReconnect != nil {
			c.opts.OnReconnect(attempt, err)
		}
		if err != nil && (errors.Is(err, ErrAuthFailed) || ctx.Err() != nil || !time.Now().Before(dl)) {
			return nil, err
		}
		last = err
	}
}

// reconnect replaces the dead connection old, unless another goroutine
// already did (replaced is then false). It waits out the backoff first.
func (c *Client) reconnect(ctx context.Context, dl time.Time, old *conn) (replaced bool, err error) {
	c.mu.Lock()
	if c.cn != old {
		c.mu.Unlock()
		return false, nil
	}
	wait := time.Until(c.lastAttempt.Add(c.backoff))
	c.mu.Unlock()
	if wait > 0 {
		if time.Now().Add(wait).After(dl) {
			return false, c.deadlineErr(ctx, dl, "no reconnection within the time left", nil)
		}
		if err := sleep(ctx, wait); err != nil {
			return false, err
		}
	}
	since := time.Now()
	c.mu.Lock()
	c.lastAttempt = since
	c.backoff = min(2*c.backoff, maxReconnectBackoff)
	c.mu.Unlock()
	ctx, cancel := context.WithDeadline(ctx, dl)
	defer cancel()
	nc, err := c.dial(ctx)
	if err != nil {
		return true, err
	}
	return true, c.start(ctx, nc, since)
}

// wait takes the token of ch (a channel of capacity 1) within ctx and dl.
func (c *Client) wait(ctx context.Context, dl time.Time, ch chan struct{}) error {
	select {
	case ch <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(time.Until(dl))
	defer t.Stop()
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return c.ctxErr(ctx, dl)
	case <-t.C:
		return c.deadlineErr(ctx, dl, "still waiting for the previous command", nil)
	}
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ctxErr is the error of a wait that ctx ended.
func (c *Client) ctxErr(ctx context.Context, dl time.Time) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return c.deadlineErr(ctx, dl, "", nil)
	}
	return ctx.Err()
}

// deadlineErr is the timeout of a command whose deadline dl passed,
// saying what it was waiting for and what had arrived.
func (c *Client) deadlineErr(ctx context.Context, dl time.Time, what string, x *exchange) error {
	msg := "timeout"
	if x != nil {
		msg += fmt.Sprintf(": no complete answer within %v", dl.Sub(x.start).Round(time.Millisecond))
		if x.packets > 0 {
			msg += fmt.Sprintf(" (%d packets, %d bytes arrived)", x.packets, len(x.out))
		}
	}
	if what != "" {
		msg += ": " + what
	}
	errs := []error{ErrTimeout}
	if _, ok := ctx.Deadline(); ok { // dl is the context's
		errs = append(errs, context.DeadlineExceeded)
	}
	return &causeError{msg: msg, errs: errs}
}

// Exec runs cmd and returns its whole output as text (see DecodeText).
// ctx bounds the command; without a deadline Options.Timeout applies. On
// error the output that did arrive is returned with it.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	var s string
	_, err := c.run(ctx, cmd, false, func(out []byte, _ bool) { s = DecodeText(out) })
	return s, err
}

// Do runs cmd and returns its answer: the raw output, the packets it
// came in and the round-trip time. ctx bounds the command; without a
// deadline Options.Timeout applies. On error the response holds what did
// arrive.
func (c *Client) Do(ctx context.Context, cmd string) (*Response, error) {
	r := &Response{}
	x, err := c.run(ctx, cmd, true, func(out []byte, owned bool) {
		if owned {
			r.Body = out
		} else {
			r.Body = append([]byte{}, out...)
		}
	})
	r.Packets, r.RTT, r.SingleByte = x.packets, x.rtt, x.singleByte
	return r, err
}

// run runs cmd; keep is given the output before the buffer that holds it
// is reused, or, if owned is set, the buffer itself to keep.
func (c *Client) run(ctx context.Context, cmd string, rtt bool, keep func(out []byte, owned bool)) (exchange, error) {
	x := exchange{start: time.Now(), wantRTT: rtt}
	if cmd == "" || strings.ContainsRune(cmd, 0) {
		keep(nil, true)
		return x, opError("exec", c.addr, ErrInvalidCommand)
	}
	if n := c.opts.Dialect.MaxCommandLen(); len(cmd) > n {
		keep(nil, true)
		return x, opError("exec", c.addr, fmt.Errorf("%w: %d bytes, %v allows %d", ErrCommandTooLong, len(cmd), c.opts.Dialect, n))
	}
	if c.opts.KeepAlive > 0 {
		c.lastUsed.Store(x.start.UnixNano())
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = x.start.Add(c.opts.Timeout)
	}
	var err error
	if c.pipeline {
		err = c.execPipelined(ctx, dl, cmd, &x)
		keep(x.out, true)
	} else {
		err = c.execSerial(ctx, dl, cmd, &x, keep)
	}
	if c.opts.KeepAlive > 0 {
		c.lastUsed.Store(time.Now().UnixNano())
	}
	return x, opError("exec", c.addr, err)
}
