package rcon

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
)

// This file holds a client's connections: the login, the loss of a
// connection, and the wait for its replacement, which the client's
// console.Redialer dials in the background.

// conn is one live connection and the reason it died.
type conn struct {
	nc     net.Conn
	rd     *Reader
	peer   netip.AddrPort
	since  time.Time     // when it was logged in
	served atomic.Bool   // a command got its answer on it
	err    error         // set once, under Client.mu, when the connection fails
	dead   chan struct{} // closed when err is set

	// Serial mode: the deadlines last set, owned by the slot's holder.
	rdl, wdl time.Time
	utf8Sent bool // legacy Rust was asked for UTF-8 (slot holder's)

	// Pipelined mode.
	wq    writeQueue
	woken []*call // got packets, to be woken (readLoop's own)
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
	if c.cn == nil {
		c.mode = c.newMode()
	}
	cn.since = time.Now()
	c.cn = cn
	c.cur.Store(cn)
	c.readers.Add(1)
	if c.opts.KeepAlive > 0 {
		c.readers.Add(1)
	}
	c.mu.Unlock()
	c.mode.attach(cn)
	if c.opts.KeepAlive > 0 {
		go func() {
			defer c.readers.Done()
			c.idle.KeepAlive(cn.dead, c.opts.KeepAlive, func() { c.mode.probeIdle(cn) })
		}()
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
		return c.loginErr(ctx, byCtx, dl.Sub(since), err)
	}
	sent := time.Now()
	for {
		p, err := cn.rd.next()
		if err != nil {
			return c.loginErr(ctx, byCtx, dl.Sub(since), err)
		}
		switch {
		case p.Type == TypeAuthResponse && p.ID == -1:
			return &causeError{msg: "authentication failed: the server answered the login with id -1 (wrong password)", errs: []error{ErrAuthFailed}}
		case p.Type == TypeAuthResponse:
			c.know.loggedIn(time.Since(sent), id, p.ID)
			return nil
		case p.Type == TypeResponseValue && len(p.Body) == 0:
			// SRCDS's empty packet before AUTH_RESPONSE.
		default:
			c.unsolicited(p)
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

// fail marks cn dead with err, fails the requests in flight on it and, if
// it was the live connection, has it replaced in the background.
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
	replace := c.redial != nil && !c.closed && c.cn == cn
	c.mu.Unlock()
	cn.nc.Close()
	c.mode.dropped(cn, err)
	if replace {
		c.redial.Lost(cn.served.Load() || time.Since(cn.since) > maxReconnectBackoff)
	}
}

// connErr returns the error cn died of.
func (c *Client) connErr(cn *conn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return cn.err
}

// connection returns the live connection, waiting within ctx and dl for
// the one that replaces a lost one, if reconnecting is allowed.
func (c *Client) connection(ctx context.Context, dl time.Time) (*conn, error) {
	if cn := c.cur.Load(); cn != nil && !c.shut.Load() {
		select {
		case <-cn.dead:
		default:
			return cn, nil
		}
	}
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
		case c.redial == nil:
			return nil, err
		}
		// A command may restart attempts that a refused login stopped.
		c.redial.Lost(false)
		ok, err := c.redial.Await(ctx, dl)
		switch {
		case c.shut.Load():
			return nil, ErrClientClosed
		case !ok && ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
			return nil, ctx.Err()
		case !ok && err != nil:
			return nil, err
		case !ok:
			return nil, c.deadlineErr(ctx, dl, "no reconnection within the time left", nil)
		case errors.Is(err, ErrAuthFailed):
			return nil, err
		}
	}
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
		if x.Messages > 0 {
			msg += fmt.Sprintf(" (%d packets, %d bytes arrived)", x.Messages, len(x.out))
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
