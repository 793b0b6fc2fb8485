package sdtd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
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
)

// DefaultPort is serverconfig.xml's TelnetPort default (8081; from
// memory in the notes, console-field-notes.md §8).
const DefaultPort = 8081

// Client defaults, used when the matching [Options] field is zero.
const (
	DefaultTimeout = 5 * time.Second
	// DefaultKeepAlive: a connection silent this long is checked with a
	// sentinel command.
	DefaultKeepAlive       = 60 * time.Second
	DefaultMaxLineLength   = 16 << 10
	DefaultMaxResponseSize = 16 << 20
	DefaultEventBuffer     = console.DefaultEventBuffer
)

// Options configures a [Client]; the zero value (and nil) is usable.
type Options struct {
	// Timeout bounds the login and each command whose context has no
	// deadline.
	Timeout time.Duration
	// KeepAlive: when nothing came for this long, the client sends a
	// sentinel and, without its answer within Timeout, connects again.
	// Zero means DefaultKeepAlive; negative never.
	KeepAlive time.Duration
	// MaxLineLength cuts longer lines; MaxResponseSize bounds one answer.
	MaxLineLength   int
	MaxResponseSize int
	EventBuffer     int
	// NoReconnect stops the client from connecting again after a loss.
	NoReconnect bool
	// OnReconnect, if set, is called after each attempt to connect again.
	OnReconnect func(attempt int, err error)
	// DialContext, if set, opens the TCP connections.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	Logf        func(format string, args ...any)
	// Debug sees every line sent and received, the password masked. It
	// must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
}

// Response is the answer to one command.
type Response struct {
	Lines []string      // the answer's lines, log lines left out
	RTT   time.Duration // from the send of the command to its echo line
}

// Text is the answer's lines joined with "\n".
func (r *Response) Text() string { return strings.Join(r.Lines, "\n") }

// Banner is what the server says after a login: its version and the
// "Key: value" lines (Server IP, Server port, Max players, Game mode,
// World, Game name, Difficulty).
type Banner struct {
	Version string
	Values  map[string]string
	Lines   []string
}

// Client is a 7 Days to Die telnet console session: logged in (once: a
// wrong password is never sent again), answers framed by the server's
// echo line and a sentinel, log lines turned into events, logged in again
// when the connection drops. It implements [console.Session] and is safe
// for concurrent use; commands run one at a time.
type Client struct {
	opts     Options
	addr     string
	password string
	events   *console.Feed
	log      ratelog.Limiter
	quit     chan struct{}
	wg       sync.WaitGroup
	turn     chan struct{} // held by the command running
	nonce    atomic.Int64
	logins   atomic.Int64
	link     console.Link[*conn]

	mu     sync.Mutex
	banner Banner
}

type conn struct {
	nc       net.Conn
	lr       *LineReader
	peer     netip.AddrPort
	local    string // our address, as the server's echo lines give it
	dead     chan struct{}
	once     sync.Once
	err      error
	lastRecv atomic.Int64

	mu  sync.Mutex
	cur *call // the command whose answer is being read
}

type call struct {
	cmd, sentinel string
	sent          time.Time
	started       bool // our echo line came
	echoAt        time.Time
	lines, pre    []string
	size          int
	done          chan struct{}
	err           error
}

// Dial logs in to the telnet console at addr ("host:port", TelnetPort,
// 8081 by default) and returns the session. A server with an empty
// TelnetPassword asks for none (and listens on loopback only); password
// is then ignored. A wrong password is [ErrAuthFailed] and is sent once
// only: 7DTD locks an address out after TelnetFailedLoginLimit failures,
// and a success does not reset the count. opts may be nil.
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
	if o.MaxLineLength <= 0 {
		o.MaxLineLength = DefaultMaxLineLength
	}
	if o.MaxResponseSize <= 0 {
		o.MaxResponseSize = DefaultMaxResponseSize
	}
	if o.EventBuffer <= 0 {
		o.EventBuffer = DefaultEventBuffer
	}
	if strings.ContainsAny(password, "\r\n") {
		return nil, opError("dial", addr, errors.New("sdtd: password holds a line end"))
	}
	c.log.Logf = o.Logf
	c.events = console.NewFeed(o.EventBuffer)
	c.quit = make(chan struct{})
	c.turn = make(chan struct{}, 1)
	// Sentinels are unique across clients: another admin's echo of its
	// own sentinel reaches us too.
	c.nonce.Store(int64(rand.Uint32()) << 20)
	c.link = console.Link[*conn]{Connect: c.connect, Install: c.install, Final: isAuthFailed,
		OnAttempt: o.OnReconnect, NoReconnect: o.NoReconnect}
	cn, err := c.connect(ctx)
	if err != nil {
		c.events.Close()
		return nil, err
	}
	c.install(cn)
	return c, nil
}

// connect dials and logs in.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	nc, done, err := console.DialLogin(ctx, c.opts.Timeout, c.opts.DialContext, "tcp", c.addr)
	if err != nil {
		return nil, opError("dial", c.addr, err)
	}
	defer done()
	cn := &conn{nc: nc, lr: NewLineReader(nc, c.opts.MaxLineLength), dead: make(chan struct{}), local: nc.LocalAddr().String()}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		cn.peer = a.AddrPort()
	}
	banner, err := c.login(cn)
	if err != nil {
		nc.Close()
		if neterr.IsTimeout(err) {
			err = &neterr.Cause{Msg: fmt.Sprintf("no login within %v", c.opts.Timeout), Errs: []error{ErrTimeout, context.DeadlineExceeded}}
		}
		return nil, opError("login", c.addr, err)
	}
	cn.lastRecv.Store(time.Now().UnixNano())
	c.mu.Lock()
	c.banner = banner
	c.mu.Unlock()
	c.logins.Add(1)
	return cn, nil
}

// login answers the password prompt once and reads the banner.
func (c *Client) login(cn *conn) (Banner, error) {
	var b Banner
	read := func() (string, error) {
		line, err := cn.lr.ReadLine()
		if err == nil {
			c.debug("recv", cn, line)
		}
		return line, err
	}
	sentPassword, loggedIn, seen := false, false, false
	for {
		line, err := read()
		if err != nil {
			switch {
			case !isEOF(err):
				return b, err
			case !seen:
				return b, &neterr.Cause{Msg: "the server closed the connection without a word: this address is locked out after failed logins (it stays so for TelnetFailedLoginsBlocktime after the last one), or the port is not a 7DTD telnet console",
					Errs: []error{ErrLockedOut, io.ErrUnexpectedEOF}}
			case sentPassword && !loggedIn:
				return b, &neterr.Cause{Msg: "the server closed the connection after the password", Errs: []error{ErrAuthFailed, io.ErrUnexpectedEOF}}
			}
			return b, &neterr.Cause{Msg: "the server closed the connection during the login", Errs: []error{ErrConnLost, io.ErrUnexpectedEOF}}
		}
		seen = true
		switch {
		case line == "":
		case line == PasswordPrompt && !sentPassword:
			c.debug("send", cn, strings.Repeat("*", len(c.password)))
			if _, err := io.WriteString(cn.nc, c.password+"\r\n"); err != nil {
				return b, err
			}
			sentPassword = true
		case line == PasswordPrompt, strings.HasPrefix(line, PasswordWrong):
			return b, &neterr.Cause{Msg: "authentication failed: " + line + " (the password is not sent again: 7DTD locks the address out after a few failures)", Errs: []error{ErrAuthFailed}}
		case line == TooManyFailures:
			return b, &neterr.Cause{Msg: "authentication failed: " + line, Errs: []error{ErrAuthFailed, ErrLockedOut}}
		case line == LogonSuccessful:
			loggedIn = true
		case strings.HasPrefix(line, bannerStart):
			loggedIn = true // no password asked (TelnetPassword empty)
			b.Lines = append(b.Lines, line)
		case IsLogLine(line):
			if loggedIn {
				c.events.Publish(Event(line))
			}
		case loggedIn && strings.HasPrefix(line, "Press 'help'"):
			b.Lines = append(b.Lines, line)
			b.Values = make(map[string]string)
			for _, l := range b.Lines {
				if v, ok := strings.CutPrefix(l, "*** Server version: "); ok {
					b.Version = v
				} else if k, v, ok := strings.Cut(l, ":"); ok && !strings.HasPrefix(l, "***") {
					b.Values[strings.TrimSpace(k)] = strings.TrimSpace(v)
				}
			}
			return b, nil
		case loggedIn:
			if len(b.Lines) < 64 {
				b.Lines = append(b.Lines, line)
			}
		}
	}
}

// isEOF reports a connection the server closed: at the end of the
// stream, or with a reset when it closed before reading what we sent.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET)
}

func (c *Client) debug(dir string, cn *conn, line string) {
	if c.opts.Debug != nil {
		c.opts.Debug(dir, cn.peer, []byte(line))
	}
}

func (c *Client) install(cn *conn) {
	c.wg.Add(2)
	if !c.link.Set(cn) {
		c.wg.Add(-2)
		cn.nc.Close()
		return
	}
	go c.read(cn)
	go c.watch(cn)
}

// read sorts cn's lines: the answer of the command running, framed by its
// echo line and its sentinel, and events.
func (c *Client) read(cn *conn) {
	defer c.wg.Done()
	for {
		line, err := cn.lr.ReadLine()
		if err != nil {
			c.lose(cn, err)
			return
		}
		cn.lastRecv.Store(time.Now().UnixNano())
		c.debug("recv", cn, line)
		if ev, ok := c.route(cn, line); ok {
			c.events.Publish(ev)
		}
	}
}

// route gives line to the command running, or returns it as an event.
func (c *Client) route(cn *conn, line string) (console.Event, bool) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cl := cn.cur
	isLog := IsLogLine(line)
	ours := !isLog || strings.HasSuffix(line, " from "+cn.local) // lines only we get, or our echoes
	switch {
	case cl != nil && ours && strings.Contains(line, cl.sentinel):
	case ours && strings.Contains(line, sentinelPrefix):
		return console.Event{}, false // our sentinel, whose answer ended already
	case isLog && otherSentinel(line):
		return console.Event{}, false // another gsq client's framing, not an admin's command
	case cl == nil && line == "":
		return console.Event{}, false
	case cl == nil:
		return Event(line), true
	}
	if ours && strings.Contains(line, cl.sentinel) {
		// The sentinel's echo or its "unknown command": the answer ended.
		if !cl.started {
			cl.lines = cl.pre // our echo never came (an address rewritten on the way)
		}
		cn.cur = nil
		close(cl.done)
		return console.Event{}, false
	}
	if isLog {
		m := logLine.FindStringSubmatch(line)
		if cmd, from, ok := echoOf(m[4]); ok && cmd == cl.cmd && from == cn.local && !cl.started {
			cl.started, cl.echoAt = true, time.Now()
			return console.Event{}, false
		}
		return Event(line), true
	}
	if cl.size+len(line)+1 > c.opts.MaxResponseSize {
		cl.err = &neterr.Cause{Msg: fmt.Sprintf("answer beyond %d bytes", c.opts.MaxResponseSize), Errs: []error{ErrResponseTooLarge}}
		cn.cur = nil
		close(cl.done)
		return console.Event{}, false
	}
	cl.size += len(line) + 1
	if cl.started {
		cl.lines = append(cl.lines, line)
	} else {
		cl.pre = append(cl.pre, line)
	}
	return console.Event{}, false
}

// otherSentinel reports whether the log line is the echo of a sentinel,
// which another gsq client (another admin's) sends after each command.
func otherSentinel(line string) bool {
	m := logLine.FindStringSubmatch(line)
	if m == nil {
		return false
	}
	cmd, _, ok := echoOf(m[4])
	return ok && strings.HasPrefix(cmd, sentinelPrefix)
}

// sentinelPrefix starts the unknown command that ends each answer.
const sentinelPrefix = "gsq-sentinel-"

// lose marks cn dead and connects again unless the client is closed.
func (c *Client) lose(cn *conn, err error) {
	first := false
	cn.once.Do(func() {
		first = true
		cn.mu.Lock()
		cn.err = err
		close(cn.dead)
		if cl := cn.cur; cl != nil {
			cl.err = &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}
			cn.cur = nil
			close(cl.done)
		}
		cn.mu.Unlock()
		cn.nc.Close()
	})
	if first && c.link.Drop(cn, &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}) {
		c.log.Printf("lost", "sdtd: %s: connection lost: %v", c.addr, err)
	}
}

// watch checks a connection silent for KeepAlive with a sentinel.
func (c *Client) watch(cn *conn) {
	defer c.wg.Done()
	if c.opts.KeepAlive < 0 {
		return
	}
	err := console.Watch(cn.dead, c.quit, nil, c.opts.KeepAlive, cn.lastRecv.Load, func() error {
		select {
		case c.turn <- struct{}{}:
		default:
			return nil // a command is running: the connection is in use
		}
		defer func() { <-c.turn }()
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
		defer cancel()
		if _, err := c.run(ctx, cn, ""); err != nil && !errors.Is(err, ErrClosed) {
			return fmt.Errorf("no answer to the keep-alive: %w", err)
		}
		return nil
	})
	if err != nil {
		c.lose(cn, err)
	}
}

// Exec runs cmd and returns its answer, log lines left out.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	r, err := c.Do(ctx, cmd)
	if err != nil {
		return "", err
	}
	return r.Text(), nil
}

// Do runs cmd and returns its answer: the lines between the server's echo
// of cmd for this connection ("Executing command '<cmd>' by Telnet from
// <our address>") and its echo of the sentinel that follows it (an
// unknown command, "gsq-sentinel-N"), log lines sent to Events. Commands
// run one at a time.
func (c *Client) Do(ctx context.Context, cmd string) (*Response, error) {
	if strings.TrimSpace(cmd) == "" || strings.ContainsAny(cmd, "\r\n\x00") {
		return nil, opError("exec", c.addr, ErrInvalidCommand)
	}
	if strings.EqualFold(strings.TrimSpace(cmd), "exit") {
		return nil, opError("exec", c.addr, fmt.Errorf("%w: exit ends the session; use Close", ErrInvalidCommand))
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	select {
	case c.turn <- struct{}{}:
		defer func() { <-c.turn }()
	case <-ctx.Done():
		return nil, opError("exec", c.addr, c.ctxErr(ctx, "waited for another command until the deadline"))
	}
	cn, err := c.current(ctx)
	if err != nil {
		return nil, opError("exec", c.addr, err)
	}
	r, err := c.run(ctx, cn, strings.TrimSpace(cmd))
	return r, opError("exec", c.addr, err)
}

// run sends cmd (none for a keep-alive) and its sentinel and waits for
// the answer. The caller holds the turn.
func (c *Client) run(ctx context.Context, cn *conn, cmd string) (*Response, error) {
	sentinel := fmt.Sprintf("%s%d", sentinelPrefix, c.nonce.Add(1))
	cl := &call{cmd: cmd, sentinel: sentinel, sent: time.Now(), done: make(chan struct{}), started: cmd == ""}
	cn.mu.Lock()
	if cn.err != nil {
		cn.mu.Unlock()
		return nil, &neterr.Cause{Msg: "connection lost", Errs: []error{ErrConnLost}}
	}
	cn.cur = cl
	cn.mu.Unlock()
	out := sentinel + "\r\n"
	if cmd != "" {
		out = cmd + "\r\n" + out
		c.debug("send", cn, cmd)
	}
	cn.nc.SetWriteDeadline(time.Now().Add(c.opts.Timeout))
	if _, err := io.WriteString(cn.nc, out); err != nil {
		c.lose(cn, err)
		return nil, &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}
	}
	select {
	case <-cl.done:
	case <-ctx.Done():
		cn.mu.Lock()
		if cn.cur == cl {
			cn.cur = nil
		}
		cn.mu.Unlock()
		return nil, c.ctxErr(ctx, fmt.Sprintf("no end of the answer within %v", time.Since(cl.sent).Round(time.Millisecond)))
	}
	if cl.err != nil {
		return nil, cl.err
	}
	r := &Response{Lines: cl.lines}
	if !cl.echoAt.IsZero() {
		r.RTT = cl.echoAt.Sub(cl.sent)
	}
	return r, nil
}

func (c *Client) ctxErr(ctx context.Context, msg string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &neterr.Cause{Msg: msg, Errs: []error{ErrTimeout, context.DeadlineExceeded}}
	}
	return ctx.Err()
}

func (c *Client) current(ctx context.Context) (*conn, error) {
	cn, err := c.link.Current(ctx, ErrClosed)
	if err != nil && ctx.Err() != nil {
		return nil, c.ctxErr(ctx, "not logged in again in time")
	}
	return cn, err
}

// Send writes cmd without waiting for its answer; the answer's lines go
// to Events.
func (c *Client) Send(ctx context.Context, cmd string) error {
	if strings.TrimSpace(cmd) == "" || strings.ContainsAny(cmd, "\r\n\x00") {
		return opError("exec", c.addr, ErrInvalidCommand)
	}
	cn, err := c.current(ctx)
	if err != nil {
		return opError("exec", c.addr, err)
	}
	cn.nc.SetWriteDeadline(time.Now().Add(c.opts.Timeout))
	if _, err := io.WriteString(cn.nc, strings.TrimSpace(cmd)+"\r\n"); err != nil {
		c.lose(cn, err)
		return opError("exec", c.addr, &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}})
	}
	return nil
}

// Players runs "listplayers" and reads its rows.
func (c *Client) Players(ctx context.Context) ([]Player, error) {
	out, err := c.Exec(ctx, "listplayers")
	if err != nil {
		return nil, err
	}
	return ParsePlayers(out)
}

// Banner returns what the server said after the last login.
func (c *Client) Banner() Banner {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.banner
}

// Events delivers the server's log lines (all telnet clients get them):
// chat, players joining, leaving and dying, commands run by others, and
// the rest as log lines.
func (c *Client) Events() <-chan console.Event { return c.events.Events() }

// Logins counts the successful logins, the first one included.
func (c *Client) Logins() int64 { return c.logins.Load() }

// Close sends "exit", ends the session and closes Events.
func (c *Client) Close() error {
	cn, ok := c.link.Close()
	if !ok {
		return nil
	}
	close(c.quit)
	if cn != nil {
		cn.nc.SetWriteDeadline(time.Now().Add(time.Second))
		io.WriteString(cn.nc, "exit\r\n")
		c.lose(cn, ErrClosed)
	}
	c.wg.Wait()
	c.events.Close()
	return nil
}

// Probe reports whether addr serves the 7 Days to Die telnet console
// without sending it anything (so without a password, which could count
// toward a lockout): the console speaks first, with its password prompt
// or, with no password set, its banner. It is how `gsq rcon` can tell a
// user whose Source RCON login failed to use the telnet console. opts may
// be nil; only Timeout and DialContext count.
func Probe(ctx context.Context, addr string, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	nc, done, err := console.DialLogin(ctx, o.Timeout, o.DialContext, "tcp", addr)
	if err != nil {
		return opError("probe", addr, err)
	}
	defer nc.Close()
	defer done()
	b := make([]byte, 64)
	n := 0
	for n < len(b) && !Is(b[:n]) {
		k, err := nc.Read(b[n:])
		n += k
		if err != nil {
			break
		}
		if trimmed := bytes.TrimLeft(b[:n], "\x00"); len(trimmed) >= len(bannerStart) && !Is(trimmed) {
			break // enough read to know
		}
	}
	if Is(b[:n]) {
		return nil
	}
	return opError("probe", addr, &neterr.Cause{Msg: fmt.Sprintf("no password prompt or banner (got %q)", b[:n]), Errs: []error{ErrNotTelnet}})
}

var _ console.Session = (*Client)(nil)
