package rcon

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultDialTimeout     = 10 * time.Second
	DefaultTimeout         = 10 * time.Second
	DefaultMaxResponseSize = 64 << 20
	DefaultEventBuffer     = 256
)

// Reconnect backoff bounds: a dropped connection is re-dialled at most
// once per backoff interval, which starts at MinReconnectBackoff and
// doubles after every failed attempt up to MaxReconnectBackoff. Servers
// ban addresses that retry fast (field notes §1.1, §4 Conan).
const (
	MinReconnectBackoff = time.Second
	MaxReconnectBackoff = 30 * time.Second
)

// Options configures a Client. The zero value (and a nil *Options) is a
// serial Source RCON client with the defaults above.
type Options struct {
	Dialect Dialect
	// Profile names a game profile (see Profiles): "factorio",
	// "palworld", "conan", "squad", "ark", "rust-legacy". Empty means
	// none.
	Profile string

	DialTimeout time.Duration // for Dial and reconnects
	// Timeout bounds the login and each command whose context has no
	// deadline.
	Timeout time.Duration

	MaxPacketSize   int // limit on inbound size fields; 0 means DefaultMaxPacketSize
	MaxResponseSize int // limit on one command's output; 0 means DefaultMaxResponseSize

	// Pipeline lets several commands be in flight at once, answers being
	// matched by id. It applies to DialectSource only and is ignored for
	// profiles that need serial requests.
	Pipeline bool
	// MaxInFlight bounds the commands in flight at once when pipelining;
	// the others wait their turn. 0 means no bound.
	MaxInFlight int
	// CommandDelay is the minimum pause between the end of one command
	// and the start of the next when commands are serial (useful for
	// Minecraft and ARK).
	CommandDelay time.Duration

	// LooseIDs accepts replies carrying id 0, -1 or 42, whatever id the
	// request had, for servers that do not echo ids (field notes §8,
	// "ID-tolerance mode"). Such replies can only be matched to the one
	// command in flight, so commands become serial, and a probe's reply
	// could not be told from the answer, so the end of an answer is found
	// by a QuietPeriod unless Terminator or the profile says otherwise.
	LooseIDs bool

	// KeepAlive, if positive, sends an empty RESPONSE_VALUE probe (type 0)
	// whenever the connection has been idle that long, for servers and
	// middleboxes that drop idle connections. Its reply is dropped.
	KeepAlive time.Duration

	// Reconnect makes a Client created by Dial re-dial and log in again,
	// with backoff, on the next command after the connection dropped.
	// Commands in flight when it dropped still fail with ErrConnClosed:
	// they are never resent, as they may have run.
	Reconnect bool

	// Terminator overrides the end-of-response strategy (nil: the
	// profile's, else the dialect's: SourceProbe, SinglePacket for CS2,
	// MinecraftFragments).
	Terminator Terminator

	// EventBuffer is the capacity of the Events channel; 0 means
	// DefaultEventBuffer. When it is full the oldest event is dropped.
	EventBuffer int

	// Logf, if set, receives notes about packets the client dropped.
	Logf func(format string, args ...any)
	// Debug, if set, is called with the wire bytes of every packet the
	// client sends ("send") and receives ("recv"), login included: the
	// login packet holds the password. It must not retain b.
	Debug func(dir string, b []byte)
}

// Client is an RCON client connection. It is safe for concurrent use.
type Client struct {
	opts     Options
	prof     Profile
	term     Terminator
	pipeline bool
	password string
	dial     func(context.Context) (net.Conn, error) // nil: no reconnect
	events   chan Packet

	slot     chan struct{} // serial mode: held for a whole command
	inflight chan struct{} // pipelined mode: one token per command in flight, if bounded
	redial   chan struct{} // held while (re)connecting
	coalesce bool          // requests share Writes (see conn.queue)
	wmu      sync.Mutex    // one request per Write, when not coalescing
	wbuf     []byte        // encoding scratch, guarded by wmu
	evmu     sync.Mutex    // guards sends on events against Close
	evClosed bool
	readers  sync.WaitGroup
	lastUsed atomic.Int64 // when a command last started or ended, in Unix ns

	mu          sync.Mutex
	cn          *conn
	calls       map[int32]*call
	nextID      int32
	wrapped     bool
	closed      bool
	lastDone    time.Time
	abandoned   *call // see settle
	lastAttempt time.Time
	backoff     time.Duration
}

// conn is one live connection and the reason it died.
type conn struct {
	nc   net.Conn
	rd   *Reader
	err  error         // set once, under Client.mu, when the connection fails
	dead chan struct{} // closed when err is set
	wq   writeQueue

	woken []*call // got packets, to be woken (readLoop's own)

	turn readTurn // serial mode: who reads rd (see client_read.go)
}

// Dial connects to addr ("host:port") over TCP, logs in with password and
// returns the client. opts may be nil.
func Dial(ctx context.Context, addr string, password string, opts *Options) (*Client, error) {
	c, err := newClient(password, opts)
	if err != nil {
		return nil, err
	}
	d := net.Dialer{Timeout: c.opts.DialTimeout}
	c.dial = func(ctx context.Context) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", addr)
	}
	c.lastAttempt = time.Now()
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("rcon: dial %s: %w", addr, err)
	}
	if err := c.start(ctx, nc); err != nil {
		return nil, err
	}
	return c, nil
}

// NewClient logs in over an established connection and returns the
// client, which owns conn from then on. Such a client cannot reconnect.
// opts may be nil.
func NewClient(ctx context.Context, conn net.Conn, password string, opts *Options) (*Client, error) {
	c, err := newClient(password, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := c.start(ctx, conn); err != nil {
		return nil, err
	}
	return c, nil
}

func newClient(password string, opts *Options) (*Client, error) {
	c := &Client{password: password, calls: make(map[int32]*call), backoff: MinReconnectBackoff}
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
	if o.LooseIDs {
		prof.anyIDs = slices.Concat(prof.anyIDs, []int32{0, -1, 42})
		prof.serial = true
	}
	c.prof = prof
	c.term = o.Terminator
	if c.term == nil {
		c.term = prof.term
	}
	if c.term == nil && o.LooseIDs {
		c.term = QuietPeriod{}
	}
	if c.term == nil {
		c.term = o.Dialect.defaultTerminator()
	}
	c.pipeline = o.Pipeline && o.Dialect.pipelines() && !prof.serial
	c.coalesce = c.pipeline && o.Dialect == DialectSource
	c.slot = make(chan struct{}, 1)
	if c.pipeline && o.MaxInFlight > 0 {
		c.inflight = make(chan struct{}, o.MaxInFlight)
	}
	c.redial = make(chan struct{}, 1)
	c.events = make(chan Packet, o.EventBuffer)
	return c, nil
}

// start logs in on nc and starts its read loop. It closes nc on failure.
func (c *Client) start(ctx context.Context, nc net.Conn) error {
	rd := NewReader(nc, c.opts.MaxPacketSize)
	if c.opts.Debug != nil {
		rd.debug = func(b []byte) { c.opts.Debug("recv", b) }
	}
	if err := c.auth(ctx, nc, rd); err != nil {
		nc.Close()
		return err
	}
	cn := &conn{nc: nc, rd: rd, dead: make(chan struct{})}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		nc.Close()
		return ErrClientClosed
	}
	c.cn = cn
	c.backoff = MinReconnectBackoff
	c.readers.Add(1)
	c.mu.Unlock()
	if c.pipeline {
		go c.readLoop(cn)
	} else {
		cn.turn.init()
		go c.idleReader(cn)
	}
	if c.opts.KeepAlive > 0 {
		c.readers.Add(1)
		go c.keepAlive(cn)
	}
	return nil
}

// auth sends SERVERDATA_AUTH and reads until AUTH_RESPONSE, skipping the
// empty RESPONSE_VALUE classic SRCDS sends first (field notes §1.1) and
// passing unsolicited packets to Events.
func (c *Client) auth(ctx context.Context, nc net.Conn, rd *Reader) error {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	id := c.newID()
	b, _ := Packet{ID: id, Type: TypeAuth, Body: []byte(c.password)}.AppendBinary(nil)
	if c.opts.Debug != nil {
		c.opts.Debug("send", b)
	}
	if _, err := nc.Write(b); err != nil {
		return c.authErr(ctx, err)
	}
	for {
		p, err := rd.ReadPacket()
		if err != nil {
			return c.authErr(ctx, err)
		}
		switch {
		case p.Type == TypeAuthResponse && p.ID == -1:
			return fmt.Errorf("%w (wrong password? servers ban addresses that keep failing)", ErrAuthFailed)
		case p.Type == TypeAuthResponse && (p.ID == id || c.prof.acceptsID(p.ID)):
			nc.SetDeadline(time.Time{})
			return nil
		case p.Type == TypeAuthResponse:
			return fmt.Errorf("%w: auth response id %d for request %d", ErrProtocol, p.ID, id)
		case p.Type == TypeResponseValue && len(p.Body) == 0 && (p.ID == id || c.prof.acceptsID(p.ID)):
			// SRCDS's leading empty packet.
		default:
			c.event(p)
		}
	}
}

func (c *Client) authErr(ctx context.Context, err error) error {
	switch {
	case isTimeoutErr(err):
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		return fmt.Errorf("%w: %w", ErrNoAuthResponse, ErrTimeout)
	case isClosed(err):
		return fmt.Errorf("%w during login: %w", ErrConnClosed, err)
	}
	return fmt.Errorf("rcon: login: %w", err)
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

func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, c.opts.Timeout)
}

// newID returns the next request id: positive, monotonic, wrapping to 1,
// never 0, -1 or 42 (ids some servers send whatever was asked, field
// notes §8), and never with its low 24 bits all zero, so the first
// bytes of a real packet cannot look like Squad's stray tail.
func (c *Client) newID() int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if c.nextID == math.MaxInt32 {
			c.wrapped = true
			c.nextID = 0
		}
		c.nextID++
		if c.nextID != 42 && c.nextID&0xFFFFFF != 0 {
			return c.nextID
		}
	}
}

// issued reports whether id is one this client may have used (c.mu held).
func (c *Client) issued(id int32) bool {
	return id > 0 && (c.wrapped || id <= c.nextID)
}

// Events returns the channel of unsolicited packets: Squad chat (type
// 1), legacy Rust console lines (type 4, id -1) and any packet whose id
// matches no request this client sent. It is buffered; when it is full
// the oldest packet is dropped, so the reader never blocks. It is closed
// by Close.
func (c *Client) Events() <-chan Packet { return c.events }

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
			c.logf("rcon: events full, dropped packet id %d type %v", old.ID, old.Type)
		default:
		}
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// Close closes the connection. Commands in flight fail with
// ErrClientClosed and Events is closed once the reader has stopped.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
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

// readLoop routes the packets of a pipelined connection until it fails.
// The requests that got packets are woken once no whole packet is left
// in the buffer, so that each wakes once for all its packets of one
// read.
func (c *Client) readLoop(cn *conn) {
	defer c.readers.Done()
	for {
		p, err := cn.rd.ReadPacket()
		if err != nil {
			c.fail(cn, err)
			return
		}
		if cl := c.route(cn, p); cl != nil && !slices.Contains(cn.woken, cl) {
			cn.woken = append(cn.woken, cl)
		}
		if !packetBuffered(cn.rd.br) || len(cn.woken) >= maxDeferredWakes {
			cn.wakeAll()
		}
	}
}

// wakeAll wakes the requests that readLoop got packets for.
func (cn *conn) wakeAll() {
	for i, cl := range cn.woken {
		cl.wake()
		cn.woken[i] = nil
	}
	cn.woken = cn.woken[:0]
}

// maxDeferredWakes bounds the requests readLoop holds back from waking.
const maxDeferredWakes = 16

// packetBuffered reports whether br holds a whole packet, so reading it
// will not block. It never reads.
func packetBuffered(br *bufio.Reader) bool {
	n := br.Buffered()
	if n < 4 {
		return false
	}
	hdr, _ := br.Peek(4)
	return int64(int32(binary.LittleEndian.Uint32(hdr))) <= int64(n-4)
}

// route hands p to the request it answers, drops it if it answers a
// finished request, and otherwise makes it an event. It returns the
// request that got p, for the caller to wake.
func (c *Client) route(cn *conn, p Packet) *call {
	if p.Type == TypeChatValue || p.Type == TypeRustConsole {
		c.event(p)
		return nil
	}
	c.mu.Lock()
	cl := c.calls[p.ID]
	if cl != nil && p.ID == cl.probeID {
		// Only the first reply to the probe ends the answer; SRCDS's
		// extra packet that follows is a late packet.
		delete(c.calls, p.ID)
	}
	if cl == nil && c.prof.acceptsID(p.ID) {
		// Profiles with foreign ids are serial: every entry belongs to
		// the one request in flight.
		for _, only := range c.calls {
			cl = only
			break
		}
	}
	late := cl == nil && c.issued(p.ID)
	c.mu.Unlock()
	switch {
	case cl != nil:
		cl.push(p, c.opts.MaxResponseSize)
	case late:
		if c.opts.Logf != nil { // spares boxing the arguments
			c.logf("rcon: dropped late packet id %d type %v (%d bytes)", p.ID, p.Type, len(p.Body))
		}
		if c.prof.squadTail && len(p.Body) == 0 {
			cn.rd.skipNext(squadTail)
		}
	default:
		c.event(p)
	}
	return cl
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
	case !errors.Is(err, ErrConnClosed) && !errors.Is(err, ErrProtocol):
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
		cl.setErr(err)
	}
}

// connection returns the live connection, re-dialling with backoff if
// it dropped and Reconnect is set.
func (c *Client) connection(ctx context.Context) (*conn, error) {
	for {
		c.mu.Lock()
		cn, closed, err := c.cn, c.closed, c.cn.err
		c.mu.Unlock()
		switch {
		case closed:
			return nil, ErrClientClosed
		case err == nil:
			return cn, nil
		case !c.opts.Reconnect || c.dial == nil:
			return nil, err
		}
		select {
		case c.redial <- struct{}{}:
		case <-ctx.Done():
			return nil, ctxErr(ctx)
		}
		err = c.reconnect(ctx, cn)
		<-c.redial
		if err != nil {
			return nil, err
		}
	}
}

// reconnect replaces the dead connection old, unless another goroutine
// already did. It waits out the backoff first.
func (c *Client) reconnect(ctx context.Context, old *conn) error {
	c.mu.Lock()
	if c.cn != old {
		c.mu.Unlock()
		return nil
	}
	wait := time.Until(c.lastAttempt.Add(c.backoff))
	c.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return fmt.Errorf("rcon: reconnect backoff: %w", ctxErr(ctx))
		}
	}
	c.mu.Lock()
	c.lastAttempt = time.Now()
	c.backoff = min(2*c.backoff, MaxReconnectBackoff)
	c.mu.Unlock()
	nc, err := c.dial(ctx)
	if err != nil {
		return fmt.Errorf("rcon: reconnect: %w", err)
	}
	return c.start(ctx, nc)
}

// ctxErr turns a finished context's error into the package's errors.
func ctxErr(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return deadlineErr()
	}
	return err
}

// deadlineErr is the error of a command whose deadline passed.
func deadlineErr() error {
	return fmt.Errorf("%w: %w", ErrTimeout, context.DeadlineExceeded)
}

// Exec runs cmd and returns its whole output as text (see DecodeText).
// ctx bounds the command; without a deadline Options.Timeout applies. On
// error the output that did arrive is returned with it.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	b, err := c.ExecBytes(ctx, cmd)
	return DecodeText(b), err
}

// ExecBytes is Exec returning the raw bytes of the output.
func (c *Client) ExecBytes(ctx context.Context, cmd string) ([]byte, error) {
	if cmd == "" || strings.ContainsRune(cmd, 0) {
		return nil, ErrInvalidCommand
	}
	if n := c.opts.Dialect.MaxCommandLen(); len(cmd) > n {
		return nil, fmt.Errorf("%w: %d bytes, %v allows %d", ErrCommandTooLong, len(cmd), c.opts.Dialect, n)
	}
	c.lastUsed.Store(time.Now().UnixNano())
	defer func() { c.lastUsed.Store(time.Now().UnixNano()) }()
	canceled := ctx.Done()
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	if c.pipeline {
		if c.inflight != nil {
			select {
			case c.inflight <- struct{}{}:
				defer func() { <-c.inflight }()
			case <-ctx.Done():
				return nil, ctxErr(ctx)
			}
		}
		return c.exec(ctx, cmd)
	}
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer c.release()
	if canceled != nil {
		// Reads carry the deadline; a cancellation must interrupt them.
		stop := context.AfterFunc(ctx, c.interruptRead)
		defer stop()
	}
	c.settle(ctx)
	return c.exec(ctx, cmd)
}

// exec runs cmd on the live connection.
func (c *Client) exec(ctx context.Context, cmd string) ([]byte, error) {
	cn, err := c.connection(ctx)
	if err != nil {
		return nil, err
	}
	cl, err := c.register(cn)
	if err != nil {
		return nil, err
	}
	if !c.pipeline {
		if err := c.takeTurn(ctx, cn); err != nil {
			c.retire(cl, err)
			return nil, err
		}
		defer c.endTurn(cn)
	}
	out, err := c.run(ctx, cl, cmd)
	c.retire(cl, err)
	return out, err
}

// interruptRead wakes whoever reads the live connection.
func (c *Client) interruptRead() {
	c.mu.Lock()
	cn := c.cn
	c.mu.Unlock()
	if cn != nil {
		cn.nc.SetReadDeadline(pastDeadline)
	}
}

// acquire takes the serial slot and waits out CommandDelay.
func (c *Client) acquire(ctx context.Context) error {
	select {
	case c.slot <- struct{}{}:
	case <-ctx.Done():
		return ctxErr(ctx)
	}
	c.mu.Lock()
	wait := time.Until(c.lastDone.Add(c.opts.CommandDelay))
	c.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		<-c.slot
		return ctxErr(ctx)
	}
}

func (c *Client) release() {
	c.mu.Lock()
	c.lastDone = time.Now()
	c.mu.Unlock()
	<-c.slot
}

// register allocates the ids of a new request on cn. It fails if cn
// died since it was picked, as fail would not see the request.
func (c *Client) register(cn *conn) (*call, error) {
	cl := &call{cn: cn, id: c.newID(), probeID: c.newID(), notify: make(chan struct{}, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cn.err != nil {
		return nil, cn.err
	}
	c.calls[cl.id] = cl
	c.calls[cl.probeID] = cl
	return cl, nil
}

// retire forgets cl; its ids count as finished from now on. With a
// profile that accepts foreign ids, an abandoned request leaves a reply
// that cannot be told from the next one, so the connection is dropped.
// On a dialect that forbids back-to-back packets, a request abandoned
// before any reply is kept as c.abandoned for settle instead.
func (c *Client) retire(cl *call, err error) {
	abandoned := err != nil && (errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled))
	c.mu.Lock()
	if abandoned && !c.opts.Dialect.backToBack() && !cl.answered() && !c.closed {
		c.abandoned = cl
		c.mu.Unlock()
		return
	}
	delete(c.calls, cl.id)
	delete(c.calls, cl.probeID)
	c.mu.Unlock()
	if abandoned && len(c.prof.anyIDs) > 0 {
		c.fail(cl.cn, fmt.Errorf("%w: abandoned request on a %s connection", ErrConnClosed, c.prof.Name))
	}
}

// AbandonedGrace bounds how long a command waits for the first reply to
// an abandoned Minecraft command before it is written. The server reads
// one packet per read and drops the connection when two arrive together
// (field notes §1.2), so a command must not follow one it has not read
// yet.
const AbandonedGrace = 2 * time.Second

// settle waits, within ctx and AbandonedGrace, until the request
// abandoned by the previous command has been answered, then retires it.
// The caller holds the serial slot.
func (c *Client) settle(ctx context.Context) {
	c.mu.Lock()
	cl := c.abandoned
	c.abandoned = nil
	c.mu.Unlock()
	if cl == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, AbandonedGrace)
	defer cancel()
	if !cl.answered() && c.takeTurn(ctx, cl.cn) == nil {
		_, _ = c.readFor(ctx, cl, 0) // whatever ended the wait, go on
		c.endTurn(cl.cn)
	}
	c.retire(cl, nil)
}

// run writes the command and collects its answer.
func (c *Client) run(ctx context.Context, cl *call, cmd string) ([]byte, error) {
	d := c.opts.Dialect
	start := c.term.Start()
	probed := start == StepProbe && d.backToBack()
	if err := c.send(ctx, cl, cmd, probed); err != nil {
		return nil, err
	}
	var (
		out   []byte
		n     int
		timer *time.Timer
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		silent, err := false, error(nil)
		if c.pipeline {
			silent, err = cl.await(ctx, c.term.Silence(n), &timer)
		} else {
			silent, err = c.readFor(ctx, cl, c.term.Silence(n))
		}
		if err != nil {
			return out, err
		}
		pkts, err := cl.take()
		if silent && len(pkts) == 0 && err == nil {
			return out, nil
		}
		sendProbe := false
		for _, p := range pkts {
			if p.ID == cl.probeID {
				return out, nil
			}
			out = append(out, p.Body...)
			step := c.term.Packet(n, p.Body)
			n++
			switch step {
			case StepDone:
				// Once a probe is out, only its reply ends the answer:
				// returning earlier would let the next command follow the
				// probe before the server read it.
				if !probed {
					return out, nil
				}
			case StepProbe:
				sendProbe = !probed
			}
		}
		if err != nil {
			return out, err
		}
		if start == StepProbe && !probed && n > 0 {
			sendProbe = true
		}
		if sendProbe {
			probed = true
			if err := c.send(ctx, cl, "", true); err != nil {
				return out, err
			}
		}
	}
}

// await waits until cl is woken, or until silence (when > 0) passes
// without a wake-up, which it reports. timer is reused across calls.
func (cl *call) await(ctx context.Context, silence time.Duration, timer **time.Timer) (silent bool, err error) {
	var quiet <-chan time.Time
	if silence > 0 {
		if *timer == nil {
			*timer = time.NewTimer(silence)
		} else {
			(*timer).Reset(silence)
		}
		quiet = (*timer).C
	}
	select {
	case <-cl.notify:
		return false, nil
	case <-quiet:
		return true, nil
	case <-ctx.Done():
		return false, ctxErr(ctx)
	}
}

// call is one request in flight.
type call struct {
	cn      *conn
	id      int32
	probeID int32
	notify  chan struct{}

	mu      sync.Mutex
	queue   []Packet
	replies int
	size    int
	err     error
}

func (cl *call) probe() Packet {
	return Packet{ID: cl.probeID, Type: TypeResponseValue}
}

// push queues p for the waiting Exec, which the caller then wakes. It
// never blocks.
func (cl *call) push(p Packet, max int) {
	cl.mu.Lock()
	cl.replies++
	if cl.err == nil {
		cl.size += len(p.Body)
		if cl.size > max {
			cl.err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, max)
		} else {
			cl.queue = append(cl.queue, p)
		}
	}
	cl.mu.Unlock()
}

func (cl *call) setErr(err error) {
	cl.mu.Lock()
	if cl.err == nil {
		cl.err = err
	}
	cl.mu.Unlock()
	cl.wake()
}

func (cl *call) wake() {
	select {
	case cl.notify <- struct{}{}:
	default:
	}
}

// answered reports whether any reply (or an error) reached cl.
func (cl *call) answered() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.replies > 0 || cl.err != nil
}

// ready reports whether cl has packets or an error waiting.
func (cl *call) ready() bool {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return len(cl.queue) > 0 || cl.err != nil
}

// take returns the queued packets and the call's error, if any.
func (cl *call) take() ([]Packet, error) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	q := cl.queue
	cl.queue = nil
	return q, cl.err
}
