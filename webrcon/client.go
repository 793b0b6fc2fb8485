package webrcon

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// DefaultPort is Rust's rcon.port: the WebRCON port of a server started
// with +rcon.web 1.
const DefaultPort = 28016

// Client defaults, used when the matching [Options] field is zero.
const (
	DefaultTimeout = 5 * time.Second
	// DefaultKeepAlive: a connection silent this long is asked for
	// LivenessCommand, since Rust never answers WebSocket pings.
	DefaultKeepAlive = 30 * time.Second
	// DefaultSilentWait: a command unanswered this long is followed by a
	// sentinel (see Options.SilentWait).
	DefaultSilentWait = time.Second
	// DefaultMaxMessageSize bounds one message (and one frame): a 1 MB
	// "console.tail" fits with room to spare.
	DefaultMaxMessageSize = 16 << 20
	DefaultEventBuffer    = console.DefaultEventBuffer
	// DefaultLivenessCommand is what the keep-alive asks: Facepunch's own
	// client polls it every second.
	DefaultLivenessCommand = "serverinfo"
	maxHandshake           = 64 << 10
)

// RiskyPasswordChars are the characters Rust admins are told to keep out
// of an rcon.password (Facepunch/webrcon#9): some are lost while the URL
// is built or read. The client percent-encodes them, which is right by
// RFC 3986, but a server may still read them otherwise.
const RiskyPasswordChars = "@#$-=()*^%"

// PasswordRisk returns the characters of password that Rust is known to
// mishandle, or "" if it has none.
func PasswordRisk(password string) string {
	var risky []rune
	for _, r := range password {
		if strings.ContainsRune(RiskyPasswordChars, r) && !strings.ContainsRune(string(risky), r) {
			risky = append(risky, r)
		}
	}
	return string(risky)
}

// Options configures a [Client]; the zero value (and nil) is usable.
type Options struct {
	// Timeout bounds the connection and handshake, and each command whose
	// context has no deadline.
	Timeout time.Duration
	// KeepAlive: when nothing came from the server for this long, the
	// client sends LivenessCommand and, if no reply comes within Timeout,
	// connects again. Zero means DefaultKeepAlive; negative never.
	KeepAlive time.Duration
	// LivenessCommand is the command of the keep-alive; empty means
	// DefaultLivenessCommand.
	LivenessCommand string
	// SilentWait: a command still unanswered after this long is followed
	// by "echo <nonce>"; Rust runs console commands in order, so when the
	// echo comes back first the command printed nothing ("say") and
	// Exec returns "" at once rather than at the deadline. A slow command
	// ("server.save") answers before the echo and is waited for. Zero
	// means DefaultSilentWait; negative sends no sentinel (a silent
	// command then ends at its deadline). The technique is the notes'
	// (console-field-notes.md §2.3), not yet checked on a live server.
	SilentWait time.Duration
	// MaxMessageSize bounds one message; 0 means DefaultMaxMessageSize.
	MaxMessageSize int
	// EventBuffer is the capacity of Events; 0 means DefaultEventBuffer.
	EventBuffer int
	// NoReconnect stops the client from connecting again after a loss.
	NoReconnect bool
	// OnReconnect, if set, is called after each attempt to connect again.
	OnReconnect func(attempt int, err error)
	// DialContext, if set, opens the TCP connections instead of a
	// net.Dialer.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// Logf receives notes (a risky password, reconnections), rate-limited.
	Logf func(format string, args ...any)
	// Debug sees the payload of every frame sent and received, and the
	// handshake with the password in the path masked. It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
}

// Response is the reply to one command.
type Response struct {
	Message
	RTT time.Duration // from the send of the command to its reply
	// Silent reports a command that printed nothing: the sentinel came
	// back before any reply.
	Silent bool
}

// Client is a WebRCON session with a Rust server: connected, kept alive
// with application traffic, and connected again when lost. It implements
// [console.Session] and is safe for concurrent use.
type Client struct {
	opts     Options
	addr     string
	password string
	events   *console.Feed
	log      ratelog.Limiter
	quit     chan struct{}
	wg       sync.WaitGroup
	ids      atomic.Int64 // the last Identifier issued
	logins   atomic.Int64

	link console.Link[*conn]

	mu    sync.Mutex
	calls map[int]*call
}

type conn struct {
	ws       *wsConn
	peer     netip.AddrPort
	dead     chan struct{}
	err      error
	lastRecv atomic.Int64
}

type call struct {
	cn    *conn
	id    int
	sent  time.Time
	done  chan struct{}
	reply *Message
	rtt   time.Duration
	err   error
}

// Dial connects to the WebRCON server at addr ("host:port"; Rust's
// rcon.port, 28016 by default) with password as the URL path, and returns
// the session. A wrong password is [ErrAuthFailed]. opts may be nil.
func Dial(ctx context.Context, addr, password string, opts *Options) (*Client, error) {
	c := &Client{addr: addr, password: password, calls: make(map[int]*call)}
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
	if o.LivenessCommand == "" {
		o.LivenessCommand = DefaultLivenessCommand
	}
	if o.SilentWait == 0 {
		o.SilentWait = DefaultSilentWait
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.EventBuffer <= 0 {
		o.EventBuffer = DefaultEventBuffer
	}
	c.log.Logf = o.Logf
	if risk := PasswordRisk(password); risk != "" {
		c.log.Printf("password", "webrcon: the password holds %q, which Rust servers are known to mishandle in the URL path; if the login fails, choose a password without them", risk)
	}
	// A random base per connection: Oxide servers send every reply to
	// every session, and another admin's client counting from 1 must not
	// hit ours. Facepunch's client keeps Identifiers up to 1000 for its
	// console; ours stay above.
	c.ids.Store(int64(1_000_000 + mrand.IntN(1<<30)))
	c.events = console.NewFeed(o.EventBuffer)
	c.quit = make(chan struct{})
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

// connect opens a connection and does the WebSocket handshake.
func (c *Client) connect(ctx context.Context) (*conn, error) {
	nc, done, err := console.DialLogin(ctx, c.opts.Timeout, c.opts.DialContext, "tcp", c.addr)
	if err != nil {
		return nil, opError("dial", c.addr, err)
	}
	defer done()
	cn := &conn{dead: make(chan struct{})}
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		cn.peer = a.AddrPort()
	}
	ws, err := c.handshake(nc, cn.peer)
	if err != nil {
		nc.Close()
		if neterr.IsTimeout(err) {
			err = &neterr.Cause{Msg: fmt.Sprintf("no WebSocket handshake within %v", c.opts.Timeout), Errs: []error{ErrTimeout, context.DeadlineExceeded}}
		}
		return nil, opError("login", c.addr, err)
	}
	cn.ws = ws
	cn.lastRecv.Store(time.Now().UnixNano())
	c.logins.Add(1)
	return cn, nil
}

// handshake asks for the upgrade at "/<password>" and reads the answer.
// Rust answers a wrong password with a close frame in place of an HTTP
// response; that, or a 401 or 403, is ErrAuthFailed.
func (c *Client) handshake(nc net.Conn, peer netip.AddrPort) (*wsConn, error) {
	var key [16]byte
	rand.Read(key[:])
	k := base64.StdEncoding.EncodeToString(key[:])
	host := c.addr
	path := "/" + url.PathEscape(c.password)
	req := "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if c.opts.Debug != nil {
		c.opts.Debug("send", peer, fmt.Appendf(nil, req, "/"+strings.Repeat("*", len(c.password)), host, k))
	}
	closed := func(err error) error {
		if neterr.IsTimeout(err) {
			return err
		}
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return &neterr.Cause{Msg: "the server closed the connection without answering the upgrade (" + err.Error() + ")", Errs: []error{ErrNotWebRcon, err}}
	}
	if _, err := fmt.Fprintf(nc, req, path, host, k); err != nil {
		return nil, closed(err)
	}
	lr := &io.LimitedReader{R: nc, N: maxHandshake}
	br := bufio.NewReader(lr)
	first, err := br.Peek(1)
	if err != nil {
		return nil, closed(err)
	}
	if first[0] == closeFrame[0] {
		got, _ := br.Peek(len(closeFrame))
		if c.opts.Debug != nil {
			c.opts.Debug("recv", peer, got)
		}
		return nil, &neterr.Cause{Msg: fmt.Sprintf("authentication failed: the server answered the upgrade with a close frame (% x): wrong password", got), Errs: []error{ErrAuthFailed}}
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, &neterr.Cause{Msg: "not a WebSocket server: " + err.Error(), Errs: []error{ErrNotWebRcon, err}}
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, &neterr.Cause{Msg: "authentication failed: " + resp.Status, Errs: []error{ErrAuthFailed}}
	case resp.StatusCode != http.StatusSwitchingProtocols:
		return nil, &neterr.Cause{Msg: "the server refused the upgrade: " + resp.Status, Errs: []error{ErrNotWebRcon}}
	case !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") || resp.Header.Get("Sec-WebSocket-Accept") != acceptKey(k):
		return nil, &neterr.Cause{Msg: "the server's upgrade answer is not a WebSocket one (Upgrade or Sec-WebSocket-Accept wrong)", Errs: []error{ErrNotWebRcon}}
	}
	lr.N = math.MaxInt64
	ws := &wsConn{nc: nc, br: br, client: true, maxMsg: c.opts.MaxMessageSize, pong: true, wdl: c.opts.Timeout}
	if c.opts.Debug != nil {
		ws.debug = func(dir string, b []byte) { c.opts.Debug(dir, peer, b) }
	}
	return ws, nil
}

// acceptKey is the Sec-WebSocket-Accept for key (RFC 6455 §4.2.2).
func acceptKey(key string) string {
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h[:])
}

func (c *Client) install(cn *conn) {
	c.wg.Add(2)
	if !c.link.Set(cn) {
		c.wg.Add(-2)
		cn.ws.nc.Close()
		return
	}
	go c.read(cn)
	go c.watch(cn)
}

// read takes cn's messages: replies to their calls, the rest to Events.
func (c *Client) read(cn *conn) {
	defer c.wg.Done()
	for {
		op, data, err := cn.ws.readMessage()
		if err != nil {
			c.lose(cn, err)
			return
		}
		cn.lastRecv.Store(time.Now().UnixNano())
		if op != OpText {
			continue
		}
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			c.log.Printf("bad message", "webrcon: %s: dropped a message that is not WebRCON JSON: %v", c.addr, err)
			continue
		}
		c.mu.Lock()
		cl := c.calls[m.Identifier]
		if cl != nil && cl.cn == cn && cl.reply == nil {
			cl.reply, cl.rtt = &m, time.Since(cl.sent)
			close(cl.done)
			delete(c.calls, m.Identifier)
			c.mu.Unlock()
			continue
		}
		c.mu.Unlock()
		if m.Identifier > 1_000_000 && c.isSentinelEcho(m) {
			continue // a sentinel whose command already answered
		}
		c.events.Publish(m.Event(data))
	}
}

// sentinelPrefix starts the text of the client's sentinel echoes.
const sentinelPrefix = "gsq-sentinel-"

func (c *Client) isSentinelEcho(m Message) bool {
	return strings.HasPrefix(m.Message, sentinelPrefix)
}

// lose marks cn dead and, unless the client is closed, connects again.
func (c *Client) lose(cn *conn, err error) {
	c.mu.Lock()
	if cn.err != nil {
		c.mu.Unlock()
		return
	}
	cn.err = err
	close(cn.dead)
	lost := &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}
	for id, cl := range c.calls {
		if cl.cn == cn {
			cl.err = lost
			close(cl.done)
			delete(c.calls, id)
		}
	}
	c.mu.Unlock()
	cn.ws.close(1000)
	if c.link.Drop(cn, lost) {
		c.log.Printf("lost", "webrcon: %s: connection lost: %v", c.addr, err)
	}
}

// watch asks the server for LivenessCommand when cn has been silent for
// KeepAlive, and gives cn up when no reply comes within Timeout.
func (c *Client) watch(cn *conn) {
	defer c.wg.Done()
	if c.opts.KeepAlive < 0 {
		return
	}
	err := console.Watch(cn.dead, c.quit, nil, c.opts.KeepAlive, cn.lastRecv.Load, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
		defer cancel()
		_, err := c.roundTrip(ctx, cn, c.opts.LivenessCommand, false)
		if err != nil && !errors.Is(err, ErrClosed) {
			return fmt.Errorf("no reply to the keep-alive %q: %w", c.opts.LivenessCommand, err)
		}
		return nil
	})
	if err != nil {
		c.lose(cn, err)
	}
}

// current waits until the client is connected.
func (c *Client) current(ctx context.Context) (*conn, error) {
	cn, err := c.link.Current(ctx, ErrClosed)
	if err != nil && ctx.Err() != nil {
		return nil, c.ctxErr(ctx, "not connected again in time")
	}
	return cn, err
}

func (c *Client) ctxErr(ctx context.Context, msg string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &neterr.Cause{Msg: msg, Errs: []error{ErrTimeout, context.DeadlineExceeded}}
	}
	return ctx.Err()
}

// send writes a request with a new Identifier and registers its call
// unless forget.
func (c *Client) send(cn *conn, cmd string, forget bool) (*call, error) {
	id := int(c.ids.Add(1) & math.MaxInt32)
	b, _ := json.Marshal(Request{Identifier: id, Message: cmd, Name: "WebRcon"})
	cl := &call{cn: cn, id: id, sent: time.Now(), done: make(chan struct{})}
	if !forget {
		c.mu.Lock()
		c.calls[id] = cl
		c.mu.Unlock()
	}
	if err := cn.ws.write(OpText, b); err != nil {
		c.forget(cl)
		c.lose(cn, err)
		return nil, &neterr.Cause{Msg: "connection lost: " + err.Error(), Errs: []error{ErrConnLost, err}}
	}
	return cl, nil
}

func (c *Client) forget(cl *call) {
	c.mu.Lock()
	if c.calls[cl.id] == cl {
		delete(c.calls, cl.id)
	}
	c.mu.Unlock()
}

// Exec runs cmd and returns its reply's text.
func (c *Client) Exec(ctx context.Context, cmd string) (string, error) {
	r, err := c.Do(ctx, cmd)
	if err != nil {
		return "", err
	}
	return r.Message.Message, nil
}

// Do runs cmd and returns its reply: the message carrying its
// Identifier. A command that prints nothing is found out by a sentinel
// (see Options.SilentWait).
func (c *Client) Do(ctx context.Context, cmd string) (*Response, error) {
	if cmd == "" {
		return nil, opError("exec", c.addr, ErrInvalidCommand)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	cn, err := c.current(ctx)
	if err != nil {
		return nil, opError("exec", c.addr, err)
	}
	r, err := c.roundTrip(ctx, cn, cmd, c.opts.SilentWait > 0)
	return r, opError("exec", c.addr, err)
}

// roundTrip sends cmd on cn and waits for its reply or, with sentinel,
// for the reply to an echo sent after SilentWait.
func (c *Client) roundTrip(ctx context.Context, cn *conn, cmd string, sentinel bool) (*Response, error) {
	cl, err := c.send(cn, cmd, false)
	if err != nil {
		return nil, err
	}
	defer c.forget(cl)
	var silent <-chan time.Time
	if sentinel {
		t := time.NewTimer(c.opts.SilentWait)
		defer t.Stop()
		silent = t.C
	}
	var echo *call
	var echoDone <-chan struct{}
	defer func() {
		if echo != nil {
			c.forget(echo)
		}
	}()
	for {
		select {
		case <-cl.done:
			if cl.err != nil {
				return nil, cl.err
			}
			return &Response{Message: *cl.reply, RTT: cl.rtt}, nil
		case <-silent:
			silent = nil
			echo, err = c.send(cn, "echo "+sentinelPrefix+fmt.Sprint(cl.id), false)
			if err != nil {
				return nil, err
			}
			echoDone = echo.done
		case <-echoDone:
			// The command's reply would have come before the echo's.
			echoDone = nil
			if echo.err != nil {
				return nil, echo.err
			}
			return &Response{Message: Message{Identifier: cl.id, Type: TypeGeneric}, RTT: echo.rtt, Silent: true}, nil
		case <-ctx.Done():
			return nil, c.ctxErr(ctx, fmt.Sprintf("no reply within %v", time.Since(cl.sent).Round(time.Millisecond)))
		}
	}
}

// Send sends cmd without waiting for its reply; the reply, if one comes,
// goes to Events.
func (c *Client) Send(ctx context.Context, cmd string) error {
	if cmd == "" {
		return opError("exec", c.addr, ErrInvalidCommand)
	}
	cn, err := c.current(ctx)
	if err != nil {
		return opError("exec", c.addr, err)
	}
	_, err = c.send(cn, cmd, true)
	return opError("exec", c.addr, err)
}

// ServerInfo runs "serverinfo" and decodes its JSON.
func (c *Client) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	out, err := c.Exec(ctx, "serverinfo")
	if err != nil {
		return nil, err
	}
	return ParseServerInfo(out)
}

// Players runs "playerlist" and decodes its JSON.
func (c *Client) Players(ctx context.Context) ([]Player, error) {
	out, err := c.Exec(ctx, "playerlist")
	if err != nil {
		return nil, err
	}
	return ParsePlayers(out)
}

// Events delivers what the server says unasked: console lines, chat,
// F7 reports, players joining and leaving, and replies to other sessions
// on servers that send every reply to every session (Oxide).
func (c *Client) Events() <-chan console.Event { return c.events.Events() }

// Logins counts the successful connections, the first one included.
func (c *Client) Logins() int64 { return c.logins.Load() }

// Close ends the session and closes Events.
func (c *Client) Close() error {
	cn, ok := c.link.Close()
	if !ok {
		return nil
	}
	close(c.quit)
	if cn != nil {
		c.lose(cn, ErrClosed)
	}
	c.wg.Wait()
	c.events.Close()
	return nil
}

// Probe reports whether addr serves WebSocket (as Rust's WebRCON does)
// without trying a password: it sends a plain HTTP GET, which a
// WebSocket server answers with an HTTP status line (Rust may answer with
// its close frame), and a Source RCON server does not. It is how `gsq
// rcon` can tell a user whose Source RCON login failed to use WebRCON.
// opts may be nil; only Timeout and DialContext count.
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
	if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: "+addr+"\r\nConnection: close\r\n\r\n"); err != nil {
		return opError("probe", addr, err)
	}
	b := make([]byte, 16)
	n, err := io.ReadAtLeast(nc, b, 5)
	if Is(b[:n]) {
		return nil
	}
	if err != nil && neterr.IsTimeout(err) {
		return opError("probe", addr, &neterr.Cause{Msg: "no answer to an HTTP request", Errs: []error{ErrNotWebRcon, ErrTimeout}})
	}
	return opError("probe", addr, &neterr.Cause{Msg: fmt.Sprintf("the answer to an HTTP request is not HTTP: %q", b[:n]), Errs: []error{ErrNotWebRcon}})
}

var _ console.Session = (*Client)(nil)
