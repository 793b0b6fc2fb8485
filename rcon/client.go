package rcon

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// Defaults used when the corresponding Options field is zero.
const (
	DefaultDialTimeout     = 5 * time.Second
	DefaultTimeout         = 5 * time.Second
	DefaultMaxResponseSize = 64 << 20
	DefaultEventBuffer     = console.DefaultEventBuffer
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

	// Pipeline lets several commands be in flight at once on one
	// connection, answers being matched by id. It is for servers known
	// to handle requests in order as SRCDS does, applies to DialectSource
	// and DialectCS2 only, and is ignored when the server's replies do
	// not carry the request's id or must never arrive two in one read
	// (Minecraft's rules, legacy Rust).
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
	// connection lost, and it is replaced.
	KeepAlive time.Duration

	// NoReconnect stops a Client created by Dial from dialling again and
	// logging in, in the background and with backoff, when its connection
	// is lost. Commands in flight when it dropped fail with ErrConnClosed
	// either way: they are never resent, as they may have run.
	NoReconnect bool
	// OnReconnect, if set, is called after each attempt to replace a lost
	// connection, with the attempt's number (from 1) and its error (nil
	// once logged in again). It runs on the client's own goroutine.
	OnReconnect func(attempt int, err error)
	// DialContext, if set, opens the connections of Dial and of
	// reconnects instead of a net.Dialer, for RCON over TLS or through a
	// proxy.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Terminator overrides how the end of an answer is found: nil is the
	// client's own, which finds out how the server behaves (see the
	// package documentation), seeded by Profile and Dialect. The end
	// marker it may send is the probe: an empty RESPONSE_VALUE, or an
	// empty command where the server takes no RESPONSE_VALUE
	// (Minecraft); on a server that must never get two packets in one
	// read, a marker asked for by Start waits for the answer's first
	// packet.
	Terminator console.Terminator

	// EventBuffer is the capacity of the Events channel; 0 means
	// DefaultEventBuffer. When it is full, new events are lost and the
	// next one delivered counts them (console.Event.Missed).
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

// Client is an RCON client session: a [console.Session] on one server. It
// is safe for concurrent use.
type Client struct {
	opts     Options
	addr     string // as given to Dial, for errors
	password string
	know     *adaptive          // what is known of the server
	term     console.Terminator // Options.Terminator, else know
	mode     mode               // serial or pipelined, chosen at the first login
	events   *console.Feed
	log      ratelog.Limiter
	idle     console.Idle  // when a command last started or ended
	ids      atomic.Uint32 // request ids issued (see newID)
	dial     func(context.Context) (net.Conn, error)
	redial   *console.Redialer // nil: no reconnect
	readers  sync.WaitGroup    // the goroutines that read connections, and Send's
	late     atomic.Pointer[lateMarker]

	mu     sync.Mutex
	cn     *conn
	closed bool
	cur    atomic.Pointer[conn] // c.cn, for the fast path
	shut   atomic.Bool          // c.closed, for the fast path
}

var _ console.Session = (*Client)(nil)

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
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	if !c.opts.NoReconnect {
		c.redial = &console.Redialer{
			Dial: func(ctx context.Context) error {
				since := time.Now()
				nc, err := c.dial(ctx)
				if err != nil {
					return err
				}
				return c.start(ctx, nc, since)
			},
			Final:      func(err error) bool { return errors.Is(err, ErrAuthFailed) },
			OnAttempt:  c.opts.OnReconnect,
			MinBackoff: minReconnectBackoff,
			MaxBackoff: maxReconnectBackoff,
		}
		c.redial.Started(since)
	}
	if err := c.start(ctx, nc, since); err != nil {
		if c.redial != nil {
			c.redial.Close()
		}
		return nil, err
	}
	return c, nil
}

// Reconnect backoff: a lost connection is dialled again at most once per
// backoff interval, which starts at minReconnectBackoff and doubles after
// every attempt up to maxReconnectBackoff, unless the connection lost
// had served (see console.Redialer.Lost). Servers ban addresses that
// retry fast (SRCDS bans an address for repeated failed logins).
const (
	minReconnectBackoff = console.DefaultMinBackoff
	maxReconnectBackoff = console.DefaultMaxBackoff
)

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
	c := &Client{addr: addr, password: password}
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
	if strings.ContainsRune(password, 0) {
		return nil, errors.New("rcon: password contains a NUL byte")
	}
	prof, err := LookupProfile(o.Profile)
	if err != nil {
		return nil, err
	}
	c.log.Logf = o.Logf
	c.know = newAdaptive(prof, o, c.note)
	c.term = o.Terminator
	if c.term == nil {
		c.term = c.know
	}
	c.events = console.NewFeed(o.EventBuffer)
	return c, nil
}

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

// Events returns the channel of what the server says unasked: Squad's
// chat (type-1 packets), legacy Rust's console lines (type 4), rcon++'s
// heartbeats, and any packet whose id matches no request this client
// sent, as [console.Event]s (see the package documentation). It holds
// Options.EventBuffer events for a reader that falls behind; beyond that
// events are lost, and the next one delivered counts them in Missed: the
// session never waits for the reader. It is closed by Close.
func (c *Client) Events() <-chan console.Event { return c.events.Events() }

// note logs what the client found out about the server.
func (c *Client) note(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf("rcon: %s: detected: "+format, append([]any{c.addr}, args...)...)
	}
}

// Close closes the session: its connection, its reconnection attempts
// and its keep-alive. Commands in flight fail with ErrClientClosed, and
// Events is closed once the readers have stopped.
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
	if c.redial != nil {
		c.redial.Close()
	}
	c.readers.Wait()
	c.events.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// Exec runs cmd and returns its whole output as text (see DecodeText).
// ctx bounds the command; without a deadline Options.Timeout applies. On
// error the output that did arrive is returned with it.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	var s string
	_, err := c.run(ctx, request{cmd: cmd}, func(out []byte, _ bool) { s = DecodeText(out) })
	return s, err
}

// Do runs cmd and returns its answer: the raw output, the packets it
// came in and the round-trip time. ctx bounds the command; without a
// deadline Options.Timeout applies. On error the response holds what did
// arrive.
func (c *Client) Do(ctx context.Context, cmd string) (*Response, error) {
	r := &Response{}
	a, err := c.run(ctx, request{cmd: cmd, wantRTT: true}, func(out []byte, owned bool) {
		if owned {
			r.Body = out
		} else {
			r.Body = append([]byte{}, out...)
		}
	})
	r.Packets, r.RTT, r.SingleByte = a.packets, a.rtt, a.singleByte
	return r, err
}

// Send runs cmd without waiting for its answer, for commands that never
// answer, and returns once cmd is written (ctx bounds the wait for its
// turn and the write). Its answer, should one come, is read and dropped
// in the background, within Options.Timeout, before the next command
// goes out where the server needs that (servers whose replies carry a
// fixed id, and those that must not get two packets in one read).
func (c *Client) Send(ctx context.Context, cmd string) error {
	if err := c.validate(cmd); err != nil {
		return opError("send", c.addr, err)
	}
	d := &detach{written: make(chan error, 1)}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return opError("send", c.addr, ErrClientClosed)
	}
	c.readers.Add(1) // Close waits for the answer's end
	c.mu.Unlock()
	go func() {
		defer c.readers.Done()
		bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.Timeout)
		defer cancel()
		_, err := c.run(bg, request{cmd: cmd, detach: d}, func([]byte, bool) {})
		if !d.report(err) && err != nil {
			c.log.Printf("send", "rcon: %s: the answer to a command sent without waiting: %v", c.addr, err)
		}
	}()
	select {
	case err := <-d.written:
		return opError("send", c.addr, err)
	case <-ctx.Done():
		if d.giveUp() {
			return opError("send", c.addr, c.ctxErr(ctx, time.Time{}))
		}
		return opError("send", c.addr, <-d.written)
	}
}

// validate checks a command before it is sent.
func (c *Client) validate(cmd string) error {
	if cmd == "" || strings.ContainsRune(cmd, 0) {
		return ErrInvalidCommand
	}
	if n := c.opts.Dialect.MaxCommandLen(); len(cmd) > n {
		return fmt.Errorf("%w: %d bytes, %v allows %d", ErrCommandTooLong, len(cmd), c.opts.Dialect, n)
	}
	return nil
}

// request is a command as a caller asks for it.
type request struct {
	cmd     string
	wantRTT bool    // the caller wants the round-trip time
	detach  *detach // Send's: the write is reported, the output dropped
}

// answer is what run tells of an answer besides its output.
type answer struct {
	packets    int
	rtt        time.Duration
	singleByte bool
}

// run is the one way a command goes out, whatever the mode: it runs r,
// giving keep the output before the buffer that holds it is reused, or,
// if owned is set, the buffer itself to keep.
func (c *Client) run(ctx context.Context, r request, keep func(out []byte, owned bool)) (answer, error) {
	start := time.Now()
	op := "exec"
	if r.detach != nil {
		op = "send"
	}
	if err := c.validate(r.cmd); err != nil {
		keep(nil, true)
		return answer{}, opError(op, c.addr, err)
	}
	if c.opts.KeepAlive > 0 {
		c.idle.Touch()
	}
	dl, ok := ctx.Deadline()
	if !ok {
		dl = start.Add(c.opts.Timeout)
	}
	var a answer
	var err error
	// A type switch, not a call through the interface: what the modes
	// are handed then stays on the caller's stack.
	switch m := c.mode.(type) {
	case *serial:
		a, err = m.exec(ctx, dl, start, r, keep)
	case *pipeline:
		a, err = m.exec(ctx, dl, start, r, keep)
	}
	if c.opts.KeepAlive > 0 {
		c.idle.Touch()
	}
	return a, opError(op, c.addr, err)
}

// detach is what Send and the exchange it leaves running share: the
// outcome of the write, and whether Send's caller gave up before it.
type detach struct {
	written chan error // the write's outcome, or the error that came first

	mu       sync.Mutex
	reported bool // written has its value
	writing  bool // the command is being written
	gaveUp   bool // Send's caller went away before the write
}

// begin reports whether the command may be written: not once Send's
// caller gave up. After it, Send waits for the write's outcome.
func (d *detach) begin() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.writing = !d.gaveUp
	return d.writing
}

// report delivers the outcome of the write (or of the exchange, if it
// ended before writing) to Send, once; it reports whether this did.
func (d *detach) report(err error) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reported {
		return false
	}
	d.reported = true
	d.written <- err
	return true
}

// giveUp records that Send's caller went away; it reports false when the
// command is being written or the outcome is there, for Send to wait for
// it.
func (d *detach) giveUp() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reported || d.writing {
		return false
	}
	d.gaveUp = true
	return true
}
