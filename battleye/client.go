package battleye

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/textenc"
)

// Default ports.
const (
	// DefaultPort is where DayZ and Arma servers usually put BattlEye
	// RCon: the game port (2302) plus 3 (help.cftools.com, "BattlEye
	// RCon"). It is set by RConPort in BEServer_x64.cfg.
	DefaultPort = 2305
	// DefaultReforgerPort is the port of the "rcon" block of an Arma
	// Reforger server's config.json.
	DefaultReforgerPort = 19999
)

// Client defaults, used when the matching [Options] field is zero.
const (
	DefaultTimeout = 5 * time.Second
	// DefaultKeepAlive is how long the client lets pass without sending
	// a command before it sends an empty one: the server forgets a client
	// after 45 s without one.
	DefaultKeepAlive = 30 * time.Second
	// DefaultAsyncWait is how long, in Reforger mode, the client waits
	// after the empty acknowledgement for the first server message of a
	// command's output.
	DefaultAsyncWait = 2 * time.Second
	// DefaultAsyncQuiet is how long without a server message ends a
	// command's output in Reforger mode, and how long after an empty
	// answer an unknown server has to show it is Arma Reforger.
	DefaultAsyncQuiet = 500 * time.Millisecond
	// DefaultMaxResponseSize bounds one answer.
	DefaultMaxResponseSize = 4 << 20
	// DefaultEventBuffer is the capacity of Events.
	DefaultEventBuffer = console.DefaultEventBuffer
)

const (
	// readBufferSize holds any datagram: BattlEye does not say how large
	// a part may be, and a datagram cut short would fail its CRC.
	readBufferSize = 64 << 10
	// loginResend is how often an unanswered login is sent again, since a
	// datagram may be lost; a wrong password is answered, never resent.
	loginResend = time.Second
	// partWait is how long a multi-part answer may go without a new part
	// before the command is sent again.
	partWait      = time.Second
	maxReadErrors = 16
	// seenMessages is how many server message sequence numbers the client
	// remembers to drop the server's re-sends: the server counts to 255
	// before a number comes back, so 64 is far from a false duplicate.
	seenMessages = 64
)

// Mode says how a server answers commands.
type Mode int32

// The modes.
const (
	// ModeAuto finds out: a text answer means classic BattlEye, and an
	// empty acknowledgement followed by a "Processing Command:" server
	// message means Arma Reforger.
	ModeAuto Mode = iota
	// ModeClassic: answers come as command replies (DayZ, Arma 2 and 3).
	ModeClassic
	// ModeReforger: the server acknowledges each command with an empty
	// reply and sends the output later as server messages (Arma
	// Reforger's own RCON; WoozyMasta/bercon-cli#2, thegamecracks/berconpy#11).
	ModeReforger
)

func (m Mode) String() string {
	switch m {
	case ModeClassic:
		return "classic"
	case ModeReforger:
		return "reforger"
	}
	return "auto"
}

// Options configures a [Client]. The zero value (and a nil *Options) is a
// client that finds out the server's mode, with the defaults above.
type Options struct {
	Mode Mode
	// Timeout bounds the login and each command whose context has no
	// deadline.
	Timeout time.Duration
	// KeepAlive is how long the client may go without sending a command
	// before it sends an empty one, from a timer of its own that no caller
	// can hold up. Zero means DefaultKeepAlive; negative sends none (the
	// server then drops the client after 45 s idle; a command that gets no
	// answer makes the client check and log in again).
	KeepAlive time.Duration
	// Retries is how many times a command whose multi-part answer stopped
	// short is sent again, with the same sequence number. Zero means 1,
	// negative none.
	Retries int
	// AsyncWait and AsyncQuiet time Reforger answers (see the defaults).
	AsyncWait, AsyncQuiet time.Duration
	// MaxResponseSize bounds one answer; 0 means DefaultMaxResponseSize.
	MaxResponseSize int
	// EventBuffer is the capacity of Events; 0 means DefaultEventBuffer.
	EventBuffer int
	// NoReconnect stops a client from logging in again when the
	// connection is found dead.
	NoReconnect bool
	// OnReconnect, if set, is called after each attempt to log in again,
	// with its number from 1 and its error (nil once logged in).
	OnReconnect func(attempt int, err error)
	// DialContext, if set, opens the connected datagram socket of each
	// login instead of a net.Dialer ("udp").
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logf, if set, receives notes: what the client found out about the
	// server, datagrams it dropped, reconnections (rate-limited).
	Logf func(format string, args ...any)
	// Debug, if set, sees every datagram sent ("send") and received
	// ("recv"), the login's password masked with '*'. It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
}

// Response is the answer to one command.
type Response struct {
	Body  []byte        // the output, raw bytes
	Parts int           // the parts it came in (1 for a whole answer, the messages for Reforger)
	RTT   time.Duration // from the send of the command to the first datagram of its answer
	// Async reports that the output came as server messages after an
	// empty acknowledgement (Arma Reforger).
	Async bool
}

// Text returns the output decoded for display (UTF-8, stray bytes as
// Latin-1).
func (r *Response) Text() string { return textenc.Decode(r.Body) }

// Client is a BattlEye RCon session: logged in, kept alive, and logged in
// again when the server forgets it. It implements [console.Session] and is
// safe for concurrent use.
type Client struct {
	opts     Options
	addr     string
	password string
	dial     func(context.Context) (net.Conn, error)
	events   *console.Feed
	log      ratelog.Limiter
	mode     atomic.Int32  // Mode: what the server was found to be
	async    chan struct{} // one Reforger command at a time
	probe    chan struct{} // asks the watchdog to check the connection now
	quit     chan struct{}
	wg       sync.WaitGroup
	lastSend atomic.Int64 // Unix ns of the last command sent
	logins   atomic.Int64
	dropped  atomic.Int64

	link console.Link[*conn]

	mu         sync.Mutex
	calls      [256]*call
	next       byte
	freed      chan struct{} // closed and replaced when a slot frees
	collecting *call         // the Reforger command taking server messages
}

// conn is one logged-in socket.
type conn struct {
	nc    net.Conn
	peer  netip.AddrPort
	dead  chan struct{}
	err   error // set once under Client.mu
	seen  [seenMessages]int16
	nseen int
}

// call is one command in flight.
type call struct {
	cn       *conn
	seq      byte
	cmd      string
	pkt      []byte
	forget   bool // Send: nobody waits
	sent     time.Time
	done     chan struct{} // closed when finished
	progress chan struct{} // a part or a Reforger message arrived
	finished bool
	parts    *Reassembler
	first    time.Time // first datagram of the answer
	body     []byte
	nparts   int
	empty    bool // acknowledged with an empty reply: maybe Reforger
	confirm  bool // Reforger's "Processing Command:" came
	last     time.Time
	err      error
}

// Dial logs in to the BattlEye RCon server at addr ("host:port", port
// 2305 by convention) with password and returns the session. opts may be
// nil.
func Dial(ctx context.Context, addr, password string, opts *Options) (*Client, error) {
	c := &Client{addr: addr, password: password}
	if opts != nil {
		c.opts = *opts
	}
	o := &c.opts
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.KeepAlive == 0 {
		o.KeepAlive = DefaultKeepAlive
	}
	if o.Retries == 0 {
		o.Retries = 1
	}
	if o.AsyncWait <= 0 {
		o.AsyncWait = DefaultAsyncWait
	}
	if o.AsyncQuiet <= 0 {
		o.AsyncQuiet = DefaultAsyncQuiet
	}
	if o.MaxResponseSize <= 0 {
		o.MaxResponseSize = DefaultMaxResponseSize
	}
	if o.EventBuffer <= 0 {
		o.EventBuffer = DefaultEventBuffer
	}
	if strings.ContainsRune(password, 0) {
		return nil, opError("dial", addr, errors.New("battleye: password holds a NUL byte"))
	}
	c.mode.Store(int32(o.Mode))
	c.log.Logf = o.Logf
	c.events = console.NewFeed(o.EventBuffer)
	c.async = make(chan struct{}, 1)
	c.probe = make(chan struct{}, 1)
	c.quit = make(chan struct{})
	c.link = console.Link[*conn]{Connect: c.connect, Install: c.install, Final: isAuthFailed,
		OnAttempt: o.OnReconnect, NoReconnect: o.NoReconnect}
	c.freed = make(chan struct{})
	dialer := o.DialContext
	if dialer == nil {
		dialer = (&net.Dialer{}).DialContext
	}
	c.dial = func(ctx context.Context) (net.Conn, error) { return dialer(ctx, "udp", addr) }
	cn, err := c.connect(ctx)
	if err != nil {
		c.events.Close()
		return nil, err
	}
	c.install(cn)
	return c, nil
}

// connect opens a socket and logs in on it.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	nc, err := c.dial(ctx)
	if err != nil {
		return nil, opError("dial", c.addr, err)
	}
	cn := &conn{nc: nc, dead: make(chan struct{})}
	for i := range cn.seen {
		cn.seen[i] = -1
	}
	if a, ok := nc.RemoteAddr().(*net.UDPAddr); ok {
		cn.peer = a.AddrPort()
	}
	if err := c.login(ctx, cn); err != nil {
		nc.Close()
		return nil, opError("login", c.addr, err)
	}
	nc.SetReadDeadline(time.Time{})
	c.logins.Add(1)
	return cn, nil
}

// login sends the password, again every second while no answer comes,
// until the server says yes or no or ctx ends.
func (c *Client) login(ctx context.Context, cn *conn) error {
	pkt, _ := Packet{Type: TypeLogin, Data: []byte(c.password)}.AppendBinary(nil)
	stop := context.AfterFunc(ctx, func() { cn.nc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	start := time.Now()
	dl, _ := ctx.Deadline()
	buf := make([]byte, readBufferSize)
	var resend time.Time
	for {
		if now := time.Now(); !now.Before(resend) {
			c.debugLogin(cn, pkt)
			if _, err := cn.nc.Write(pkt); err != nil {
				return c.netErr(err)
			}
			resend = now.Add(loginResend)
		}
		cn.nc.SetReadDeadline(earliest(resend, dl))
		n, err := cn.nc.Read(buf)
		if err != nil {
			if neterr.IsTimeout(err) && ctx.Err() == nil {
				continue
			}
			if ctx.Err() != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return &neterr.Cause{
						Msg:  fmt.Sprintf("no answer to the login within %v: BattlEye RCon is disabled, the server is still loading, or the port is wrong", time.Since(start).Round(time.Millisecond)),
						Errs: []error{ErrNoResponse, ErrTimeout, context.DeadlineExceeded},
					}
				}
				return ctx.Err()
			}
			return c.netErr(err)
		}
		c.debug("recv", cn, buf[:n])
		p, err := ParsePacket(buf[:n])
		if err != nil {
			c.dropped.Add(1)
			c.log.Printf("bad datagram", "battleye: %s: dropped a datagram during the login: %v", c.addr, err)
			continue
		}
		if p.Type != TypeLogin || len(p.Data) != 1 {
			continue // a stray from an earlier session
		}
		if p.Data[0] == 1 {
			return nil
		}
		return &neterr.Cause{Msg: "authentication failed: the server answered the login with 0 (wrong password)", Errs: []error{ErrAuthFailed}}
	}
}

// netErr turns a socket error into the client's: ICMP port unreachable is
// ErrUnreachable.
func (c *Client) netErr(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return &neterr.Unreachable{Sentinel: ErrUnreachable, Err: err}
	}
	return err
}

func (c *Client) debugLogin(cn *conn, pkt []byte) {
	if c.opts.Debug == nil {
		return
	}
	masked := append([]byte(nil), pkt...)
	for i := HeaderSize + 1; i < len(masked); i++ {
		masked[i] = '*'
	}
	c.opts.Debug("send", cn.peer, masked)
}

func (c *Client) debug(dir string, cn *conn, b []byte) {
	if c.opts.Debug != nil {
		c.opts.Debug(dir, cn.peer, b)
	}
}

func earliest(a, b time.Time) time.Time {
	if b.IsZero() || (!a.IsZero() && a.Before(b)) {
		return a
	}
	return b
}

// install makes cn the client's connection and starts its reader and
// watchdog.
func (c *Client) install(cn *conn) {
	c.wg.Add(2)
	if !c.link.Set(cn) {
		c.wg.Add(-2)
		cn.nc.Close()
		return
	}
	c.lastSend.Store(time.Now().UnixNano())
	go c.read(cn)
	go c.watch(cn)
}

// read is cn's reader: it matches answers to commands, acknowledges and
// de-duplicates server messages, and drops what it cannot parse.
func (c *Client) read(cn *conn) {
	defer c.wg.Done()
	buf := make([]byte, readBufferSize)
	ack := make([]byte, 0, HeaderSize+2)
	for failures := 0; ; {
		n, err := cn.nc.Read(buf)
		if err != nil {
			select {
			case <-cn.dead:
				return
			default:
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				c.lose(cn, c.netErr(err))
				return
			}
			if failures++; failures >= maxReadErrors || errors.Is(err, net.ErrClosed) {
				c.lose(cn, err)
				return
			}
			continue
		}
		failures = 0
		c.debug("recv", cn, buf[:n])
		p, err := ParsePacket(buf[:n])
		if err != nil {
			c.dropped.Add(1)
			c.log.Printf("bad datagram", "battleye: %s: dropped a datagram: %v", c.addr, err)
			continue
		}
		switch p.Type {
		case TypeCommand:
			c.reply(cn, p)
		case TypeMessage:
			ack, _ = Packet{Type: TypeMessage, Seq: p.Seq}.AppendBinary(ack[:0])
			c.debug("send", cn, ack)
			if _, err := cn.nc.Write(ack); err != nil {
				c.lose(cn, c.netErr(err))
				return
			}
			if cn.saw(p.Seq) {
				continue // a re-send: the first copy was handled
			}
			c.message(cn, p.Data)
		}
	}
}

// saw reports whether a server message of this sequence number was
// handled lately, and remembers it. The reader's own.
func (cn *conn) saw(seq byte) bool {
	for _, s := range cn.seen {
		if s == int16(seq) {
			return true
		}
	}
	cn.seen[cn.nseen%seenMessages] = int16(seq)
	cn.nseen++
	return false
}

// reply hands a command reply to its call.
func (c *Client) reply(cn *conn, p Packet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl := c.calls[p.Seq]
	if cl == nil || cl.cn != cn || cl.finished {
		return // late, or a re-sent answer already complete
	}
	if cl.first.IsZero() {
		cl.first = time.Now()
	}
	if cl.forget {
		c.free(cl)
		return
	}
	if p.Total == 0 {
		if len(p.Data) == 0 && cl.cmd != "" && Mode(c.mode.Load()) != ModeClassic {
			// Reforger acknowledges with nothing and answers later.
			if alwaysAnswered(cl.cmd) {
				c.learn(ModeReforger, fmt.Sprintf("%q was acknowledged empty, which classic BattlEye answers with text: Arma Reforger", cl.cmd))
			}
			cl.empty, cl.last = true, time.Now()
			c.collecting = cl
			signal(cl.progress)
			return
		}
		if len(p.Data) > 0 && cl.cmd != "" {
			c.learn(ModeClassic, "a command got a text answer: classic BattlEye")
		}
		cl.body, cl.nparts = append([]byte(nil), p.Data...), 1
		c.finish(cl, nil)
		return
	}
	if cl.parts == nil {
		cl.parts = NewReassembler(c.opts.MaxResponseSize)
	}
	done, err := cl.parts.Add(p)
	switch {
	case err != nil:
		c.finish(cl, err)
	case done:
		c.learn(ModeClassic, "a command got a multi-part answer: classic BattlEye")
		_, cl.nparts = cl.parts.Missing()
		cl.body = cl.parts.Bytes()
		c.finish(cl, nil)
	default:
		cl.last = time.Now()
		signal(cl.progress)
	}
}

// message handles a server message: part of a Reforger command's output,
// or an event.
func (c *Client) message(cn *conn, data []byte) {
	c.mu.Lock()
	if cl := c.collecting; cl != nil && cl.cn == cn && !cl.finished {
		switch {
		case strings.HasPrefix(string(data), reforgerEcho):
			cl.confirm, cl.last = true, time.Now()
			c.learn(ModeReforger, "a command was acknowledged empty and its output came as server messages: Arma Reforger")
			signal(cl.progress)
			c.mu.Unlock()
			return
		case (cl.confirm || Mode(c.mode.Load()) == ModeReforger) && !isEvent(data):
			cl.confirm = true
			if len(cl.body)+len(data)+1 > c.opts.MaxResponseSize {
				c.finish(cl, &SizeError{Size: len(cl.body) + len(data) + 1, Max: c.opts.MaxResponseSize})
			} else {
				if len(cl.body) > 0 {
					cl.body = append(cl.body, '\n')
				}
				cl.body = append(cl.body, data...)
				cl.nparts++
				cl.last = time.Now()
				signal(cl.progress)
			}
			c.mu.Unlock()
			return
		}
	}
	c.mu.Unlock()
	if strings.HasPrefix(string(data), reforgerEcho) {
		// Output that came after the client stopped waiting for it.
		c.learn(ModeReforger, "output came as server messages after an empty acknowledgement: Arma Reforger")
	}
	c.events.Publish(classify(data))
}

// alwaysAnswered reports whether classic BattlEye answers cmd with text
// whatever the server's state: a table with its header.
func alwaysAnswered(cmd string) bool {
	name, _, _ := strings.Cut(cmd, " ")
	switch strings.ToLower(name) {
	case "players", "bans", "admins", "missions":
		return true
	}
	return false
}

// reforgerEcho starts the server message Arma Reforger sends before a
// command's output.
const reforgerEcho = "Processing Command:"

// learn records what the server was found to be, once.
func (c *Client) learn(m Mode, note string) {
	if c.mode.CompareAndSwap(int32(ModeAuto), int32(m)) && c.opts.Logf != nil {
		c.opts.Logf("battleye: %s: %s", c.addr, note)
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// finish ends cl with err (nil: its body is the answer). Under c.mu.
func (c *Client) finish(cl *call, err error) {
	if cl.finished {
		return
	}
	cl.finished, cl.err = true, err
	if c.collecting == cl {
		c.collecting = nil
	}
	close(cl.done)
}

// free releases cl's sequence number. Under c.mu.
func (c *Client) free(cl *call) {
	if c.calls[cl.seq] == cl {
		c.calls[cl.seq] = nil
		close(c.freed)
		c.freed = make(chan struct{})
	}
	c.finish(cl, nil)
}

// lose marks cn dead with err, fails its commands, and starts logging in
// again unless the client is closed or must not.
func (c *Client) lose(cn *conn, err error) {
	c.mu.Lock()
	if cn.err != nil {
		c.mu.Unlock()
		return
	}
	cn.err = err
	close(cn.dead)
	cn.nc.Close()
	lost := &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}
	for _, cl := range c.calls {
		if cl != nil && cl.cn == cn {
			c.finish(cl, lost)
		}
	}
	c.mu.Unlock()
	if c.link.Drop(cn, lost) {
		c.log.Printf("lost", "battleye: %s: connection lost: %v", c.addr, err)
	}
}

// watch sends a keep-alive whenever no command was sent for KeepAlive,
// and checks the connection when asked (a command went unanswered); a
// keep-alive unanswered within Timeout marks the connection lost.
func (c *Client) watch(cn *conn) {
	defer c.wg.Done()
	if err := console.Watch(cn.dead, c.quit, c.probe, c.opts.KeepAlive, c.lastSend.Load, func() error { return c.ping(cn) }); err != nil {
		c.lose(cn, err)
	}
}

// errKeepAlive is why a connection whose keep-alive went unanswered is
// given up.
var errKeepAlive = errors.New("keep-alive unanswered: the server forgot this client")

// ping sends an empty command on cn and waits for its answer.
func (c *Client) ping(cn *conn) error {
	dl := time.Now().Add(c.opts.Timeout)
	cl, err := c.register(context.Background(), cn, "", dl, false)
	if err != nil {
		if errors.Is(err, ErrTimeout) {
			return nil // every sequence number is taken: commands are flowing
		}
		return err
	}
	defer c.release(cl)
	if err := c.write(cn, cl.pkt); err != nil {
		return err
	}
	t := time.NewTimer(c.opts.Timeout)
	defer t.Stop()
	select {
	case <-cl.done:
		return nil
	case <-t.C:
		return errKeepAlive
	case <-c.quit:
		return nil
	}
}

// register takes the next sequence number for cmd on cn, waiting until
// dl while the command that had it 256 commands ago is still in flight.
func (c *Client) register(ctx context.Context, cn *conn, cmd string, dl time.Time, forget bool) (*call, error) {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		c.mu.Lock()
		switch {
		case c.link.Closed():
			c.mu.Unlock()
			return nil, ErrClosed
		case cn.err != nil:
			err := cn.err
			c.mu.Unlock()
			return nil, &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}
		}
		seq := c.next
		if old := c.calls[seq]; old != nil && old.forget && time.Since(old.sent) > c.opts.Timeout {
			c.free(old) // a fire-and-forget command whose answer never came
		}
		if c.calls[seq] == nil {
			cl := &call{cn: cn, seq: seq, cmd: cmd, forget: forget, sent: time.Now(),
				done: make(chan struct{}), progress: make(chan struct{}, 1)}
			cl.pkt, _ = Packet{Type: TypeCommand, Seq: seq, Data: []byte(cmd)}.AppendBinary(nil)
			c.calls[seq] = cl
			c.next++
			c.mu.Unlock()
			return cl, nil
		}
		freed := c.freed
		c.mu.Unlock()
		if t == nil {
			t = time.NewTimer(time.Until(dl))
		}
		select {
		case <-freed:
		case <-t.C:
			return nil, &neterr.Cause{Msg: "all 256 sequence numbers in flight", Errs: []error{ErrTimeout}}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// release gives cl's sequence number back, unless a fire-and-forget call
// keeps it until its answer comes.
func (c *Client) release(cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.free(cl)
}

// write sends a command datagram.
func (c *Client) write(cn *conn, pkt []byte) error {
	c.debug("send", cn, pkt)
	if _, err := cn.nc.Write(pkt); err != nil {
		err = c.netErr(err)
		c.lose(cn, err)
		return err
	}
	c.lastSend.Store(time.Now().UnixNano())
	return nil
}

// current waits until dl for the client to be logged in, and returns its
// connection.
func (c *Client) current(ctx context.Context, dl time.Time) (*conn, error) {
	ctx, cancel := context.WithDeadline(ctx, dl)
	defer cancel()
	cn, err := c.link.Current(ctx, ErrClosed)
	if errors.Is(err, context.DeadlineExceeded) {
		return nil, &neterr.Cause{Msg: "not logged in again in time", Errs: []error{ErrTimeout, ErrConnLost, context.DeadlineExceeded}}
	}
	return cn, err
}

// deadline is when a command must end: the context's deadline, or
// Timeout from now.
func (c *Client) deadline(ctx context.Context) (time.Time, bool) {
	if dl, ok := ctx.Deadline(); ok {
		return dl, true
	}
	return time.Now().Add(c.opts.Timeout), false
}

// Exec runs cmd and returns its output as text.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	r, err := c.Do(ctx, cmd)
	if err != nil {
		return "", err
	}
	return r.Text(), nil
}

// Do runs cmd and returns its whole answer: the parts of a multi-part
// answer put back in order (lost ones asked for again), or, on Arma
// Reforger, the server messages that follow the empty acknowledgement
// until AsyncQuiet passes without one.
func (c *Client) Do(ctx context.Context, cmd string) (*Response, error) {
	r, err := c.do(ctx, cmd)
	return r, opError("exec", c.addr, err)
}

func (c *Client) do(ctx context.Context, cmd string) (*Response, error) {
	if cmd == "" || strings.ContainsRune(cmd, 0) {
		return nil, ErrInvalidCommand
	}
	dl, byCtx := c.deadline(ctx)
	timeout := func(msg string) error {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return ctx.Err()
		}
		errs := []error{ErrTimeout}
		if byCtx || ctx.Err() != nil {
			errs = append(errs, context.DeadlineExceeded)
		}
		return &neterr.Cause{Msg: msg, Errs: errs}
	}
	if Mode(c.mode.Load()) != ModeClassic {
		// Reforger's output is told apart from events by order only: one
		// such command at a time.
		t := time.NewTimer(time.Until(dl))
		select {
		case c.async <- struct{}{}:
			t.Stop()
			defer func() { <-c.async }()
		case <-t.C:
			return nil, timeout("waited for another command's answer until the deadline")
		case <-ctx.Done():
			t.Stop()
			return nil, timeout("canceled")
		}
	}
	cn, err := c.current(ctx, dl)
	if err != nil {
		return nil, err
	}
	cl, err := c.register(ctx, cn, cmd, dl, false)
	if err != nil {
		return nil, err
	}
	defer c.release(cl)
	if err := c.write(cn, cl.pkt); err != nil {
		return nil, err
	}
	end := time.NewTimer(time.Until(dl))
	defer end.Stop()
	step := time.NewTimer(partWait)
	defer step.Stop()
	retries := max(c.opts.Retries, 0)
	for {
		select {
		case <-cl.done:
			c.mu.Lock()
			r := &Response{Body: cl.body, Parts: cl.nparts, RTT: cl.first.Sub(cl.sent), Async: cl.confirm}
			err := cl.err
			c.mu.Unlock()
			if err != nil {
				return nil, err
			}
			return r, nil
		case <-cl.progress:
		case <-step.C:
		case <-end.C:
			c.mu.Lock()
			got := !cl.first.IsZero()
			missing, total := 0, 0
			if cl.parts != nil {
				missing, total = cl.parts.Missing()
			}
			c.mu.Unlock()
			if !got {
				signal(c.probe) // silence: is the server still there?
				return nil, timeout(fmt.Sprintf("no answer within %v", time.Since(cl.sent).Round(time.Millisecond)))
			}
			if missing > 0 {
				err := timeout(fmt.Sprintf("%d of %d parts never came", missing, total))
				return nil, &neterr.Cause{Msg: err.Error(), Errs: []error{ErrIncomplete, err}}
			}
			return nil, timeout("the answer did not end before the deadline")
		case <-ctx.Done():
			return nil, timeout("canceled")
		}
		// Progress or a step: see where the answer stands.
		c.mu.Lock()
		now := time.Now()
		var resend bool
		switch {
		case cl.finished:
		case cl.empty && cl.confirm:
			if quiet := now.Sub(cl.last); quiet >= c.opts.AsyncQuiet {
				c.finish(cl, nil)
			} else {
				step.Reset(c.opts.AsyncQuiet - quiet)
			}
		case cl.empty:
			wait := c.opts.AsyncQuiet
			if Mode(c.mode.Load()) == ModeReforger {
				wait = c.opts.AsyncWait
			}
			if since := now.Sub(cl.last); since >= wait {
				c.finish(cl, nil) // an empty answer
			} else {
				step.Reset(wait - since)
			}
		case cl.parts != nil:
			if idle := now.Sub(cl.last); idle < partWait {
				step.Reset(partWait - idle)
			} else if retries > 0 {
				retries--
				resend = true
				cl.last = now
			}
		}
		c.mu.Unlock()
		if resend {
			c.log.Printf("resend", "battleye: %s: parts of the answer to %q missing: sending it again", c.addr, cmd)
			if err := c.write(cn, cl.pkt); err != nil {
				return nil, err
			}
			step.Reset(partWait)
		}
	}
}

// Send sends cmd without waiting for its answer (the answer, when it
// comes, is dropped). It returns once cmd is sent.
func (c *Client) Send(ctx context.Context, cmd string) error {
	if cmd == "" || strings.ContainsRune(cmd, 0) {
		return opError("exec", c.addr, ErrInvalidCommand)
	}
	dl, _ := c.deadline(ctx)
	cn, err := c.current(ctx, dl)
	if err != nil {
		return opError("exec", c.addr, err)
	}
	cl, err := c.register(ctx, cn, cmd, dl, true)
	if err != nil {
		return opError("exec", c.addr, err)
	}
	return opError("exec", c.addr, c.write(cn, cl.pkt))
}

// Events delivers server messages that are not a command's output:
// chat, players joining and leaving, admins logging in, console lines.
func (c *Client) Events() <-chan console.Event { return c.events.Events() }

// Mode returns what the server was found to be (ModeAuto: not yet known).
func (c *Client) Mode() Mode { return Mode(c.mode.Load()) }

// Logins counts the successful logins, the first one included: more than
// one means the client logged in again.
func (c *Client) Logins() int64 { return c.logins.Load() }

// Dropped counts the datagrams dropped because they were not BattlEye
// RCon or failed their CRC.
func (c *Client) Dropped() int64 { return c.dropped.Load() }

// Close ends the session, fails the commands in flight with ErrClosed,
// and closes Events.
func (c *Client) Close() error {
	cn, ok := c.link.Close()
	if !ok {
		return nil
	}
	close(c.quit)
	c.mu.Lock()
	for _, cl := range c.calls {
		if cl != nil {
			c.finish(cl, ErrClosed)
		}
	}
	c.mu.Unlock()
	if cn != nil {
		c.lose(cn, ErrClosed)
	}
	c.wg.Wait()
	c.events.Close()
	return nil
}

var _ console.Session = (*Client)(nil)
