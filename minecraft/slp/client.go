package slp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
)

// Client defaults, for the fields left zero.
const (
	DefaultPort            = 25565
	DefaultTimeout         = 5 * time.Second
	DefaultMaxResponseSize = 512 << 10
	// DefaultProtocol is the protocol the handshake names: 47 (1.8), what
	// gamedig and mcstatus send, so the one servers and proxies are used
	// to from pingers. The vanilla convention -1 "might cause some
	// servers to close the connection" (wiki.vg).
	DefaultProtocol = 47
	// minPongWait is the least time the client waits for a pong once the
	// status came; a server that neither answers the ping nor closes
	// costs at most max(minPongWait, 4 status round trips), within the
	// Timeout.
	minPongWait = time.Second
)

// LegacyMode says when a Client uses the legacy ping.
type LegacyMode uint8

const (
	// LegacyFallback sends the modern handshake and, when it fails the way
	// an old server fails (it closes the connection without a byte, or
	// answers with a legacy kick packet), the legacy ping of
	// Client.LegacyVariant on a new connection. A modern server that does
	// not answer status closes both, and the error is ErrNoStatus.
	LegacyFallback LegacyMode = iota
	// LegacyNever sends the modern handshake only.
	LegacyNever
	// LegacyOnly sends the legacy ping only, never a modern handshake: for
	// servers up to 1.6, which log a modern handshake as an error.
	LegacyOnly
)

// Client asks Minecraft Java servers for their status over TCP, as the
// game's server list does (wiki.vg, "Server List Ping"): a handshake and a
// status request in one write, the status response read by its length
// prefix across as many reads as it takes, then a ping whose pong times
// the round trip. A server that closes after the status (Velocity and
// BungeeCord do) is timed by the status round trip instead. Each exchange
// takes a connection of its own; the vanilla server answers one status per
// connection. The zero value is ready to use and safe for concurrent use;
// set the fields before the first call.
//
// Errors are [*OpError] values naming the operation and the server. A
// server that accepts the connection and closes it without a status
// (enable-status=false, or still starting) fails with [ErrNoStatus]; one
// that sends nothing in time with an error matching [ErrTimeout] and
// [os.ErrDeadlineExceeded] (and [context.DeadlineExceeded] when the
// context's deadline ended it); a refused connection with
// [ErrUnreachable]; a malformed reply with a [*ParseError].
type Client struct {
	// Timeout bounds one exchange, connection included (default
	// DefaultTimeout, 5s); the context may end it sooner.
	Timeout time.Duration
	// Protocol is the protocol version the handshake names (default
	// DefaultProtocol). The server's own is in Status.Version.
	Protocol int32
	// NoPing skips the ping: the round trip is the status's.
	NoPing bool
	// Legacy says when the legacy ping is used (default LegacyFallback).
	Legacy LegacyMode
	// LegacyVariant is the legacy ping sent (default Legacy16).
	LegacyVariant LegacyVariant
	// ProxyProtocol, 1 or 2, sends a PROXY protocol header of that
	// version first, for servers behind HAProxy or TCPShield that expect
	// one; 0 sends none.
	ProxyProtocol int
	// MaxResponseSize bounds a packet from the server, checked against its
	// length prefix before anything is read (default
	// DefaultMaxResponseSize, 512 KiB: favicons and Forge mod lists are
	// large, and the vanilla limit is 32767 UTF-16 units of JSON).
	MaxResponseSize int
	// KeepFavicon keeps the favicon's image in the Status (its hash and
	// size are always there).
	KeepFavicon bool
	// NoSRV turns off the SRV lookup of StatusHost.
	NoSRV bool
	// Resolver looks up SRV records and addresses for StatusHost (default
	// net.DefaultResolver).
	Resolver Resolver
	// Dialer opens the connections (default a zero net.Dialer).
	Dialer *net.Dialer
	// Debug, if set, is called with every packet sent ("send") and
	// received ("recv"), framing included. It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
}

// Response is a server's answer.
type Response struct {
	// Status is the parsed status JSON; nil when the legacy ping answered.
	Status *Status
	// JSON is the status JSON as received.
	JSON []byte
	// Trailer is what the status packet carried after the JSON (the
	// Better Compatibility Checker mod's second string), raw; nil when
	// nothing.
	Trailer []byte
	// Legacy is the reply to the legacy ping, when that answered.
	Legacy *LegacyStatus
	// RTT is the round-trip time: of the ping when the pong came (Pong is
	// set), else of the status request.
	RTT  time.Duration
	Pong bool
	// Target is the host and port the client asked: the SRV target when
	// one was followed. Its Host is the one the handshake named.
	Target Target
	// Addr is the address that answered.
	Addr netip.AddrPort
}

func (c *Client) timeout() time.Duration {
	if c.Timeout <= 0 {
		return DefaultTimeout
	}
	return c.Timeout
}

func (c *Client) protocol() int32 {
	if c.Protocol == 0 {
		return DefaultProtocol
	}
	return c.Protocol
}

func (c *Client) maxResponse() int {
	if c.MaxResponseSize <= 0 {
		return DefaultMaxResponseSize
	}
	return c.MaxResponseSize
}

func (c *Client) legacyVariant() LegacyVariant {
	if c.LegacyVariant == 0 {
		return Legacy16
	}
	return c.LegacyVariant
}

// Status asks the server at addr for its status; the handshake names
// addr's IP address as the host.
func (c *Client) Status(ctx context.Context, addr netip.AddrPort) (*Response, error) {
	return c.StatusTarget(ctx, Target{Host: addr.Addr().Unmap().String(), Port: addr.Port()}, addr)
}

// StatusTarget asks the server at addr for its status, naming t in the
// handshake: the host and port as the user gave them, or the SRV target.
func (c *Client) StatusTarget(ctx context.Context, t Target, addr netip.AddrPort) (*Response, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	if c.Legacy == LegacyOnly {
		return c.legacy(ctx, t, addr)
	}
	r, err := c.modern(ctx, t, addr)
	if err != nil && c.Legacy == LegacyFallback && oldServerFailure(err) {
		if lr, lerr := c.legacy(ctx, t, addr); lerr == nil {
			return lr, nil
		}
	}
	return r, err
}

// oldServerFailure reports whether a modern attempt failed the way a
// server up to 1.6 fails it: closed without a byte, or a legacy kick.
func oldServerFailure(err error) bool {
	return errors.Is(err, ErrNoStatus) || errors.Is(err, errLegacyKick)
}

// errLegacyKick is the cause of a modern attempt answered with what reads
// as a legacy kick packet (FF and UTF-16 text).
var errLegacyKick = errors.New("slp: answered with a legacy kick packet (a server up to 1.6?)")

// exchange is one connection's I/O.
type exchange struct {
	c    *Client
	ctx  context.Context
	conn net.Conn
	addr netip.AddrPort
	end  time.Time // the exchange's deadline
	buf  []byte    // received and not consumed
	got  int       // bytes received in all
}

// dial opens the connection of one exchange, bounded by the Timeout and
// ctx.
func (c *Client) dial(ctx context.Context, op string, addr netip.AddrPort) (*exchange, func(), error) {
	opErr := func(err error) error { return &OpError{Pkg: "slp", Op: op, Addr: addr.String(), Err: err} }
	if err := ctx.Err(); err != nil {
		return nil, nil, opErr(err)
	}
	deadline := time.Now().Add(c.timeout())
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	d := net.Dialer{}
	if c.Dialer != nil {
		d = *c.Dialer
	}
	d.Deadline = deadline
	conn, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return nil, nil, opErr(dialError(ctx, err))
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	ex := &exchange{c: c, ctx: ctx, conn: conn, addr: addr, end: deadline}
	return ex, func() { stop(); conn.Close() }, nil
}

// dialError classifies a failed connection.
func dialError(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return &neterr.Unreachable{Sentinel: ErrUnreachable, Err: err}
	case neterr.IsTimeout(err):
		return ctxTimeout(ctx, "connection")
	case ctx.Err() != nil:
		return ctx.Err()
	}
	return err
}

// ctxTimeout is the cause of a wait for what that ran out of time.
func ctxTimeout(ctx context.Context, what string) error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return context.Canceled
	}
	d, ok := ctx.Deadline()
	return noAnswer(ctx.Err() != nil || ok && !time.Now().Before(d), what)
}

// ioError classifies a failed read or write while waiting for what.
func (ex *exchange) ioError(err error, what string) error {
	switch {
	case neterr.IsTimeout(err) || ex.ctx.Err() != nil:
		return ctxTimeout(ex.ctx, what)
	case ex.got == 0 && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)):
		return ErrNoStatus
	case errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return detail(ErrTruncated, "the server closed the connection after %d bytes", ex.got)
	}
	return err
}

// write sends b in one write.
func (ex *exchange) write(b []byte, what string) error {
	if ex.c.Debug != nil {
		ex.c.Debug("send", ex.addr, b)
	}
	if _, err := ex.conn.Write(b); err != nil {
		return ex.ioError(err, what)
	}
	return nil
}

// fill reads at least once more, keeping the buffer within limit bytes
// beyond what is held.
func (ex *exchange) fill(need int, what string) error {
	if cap(ex.buf)-len(ex.buf) < 1 || cap(ex.buf) < need {
		grown := make([]byte, len(ex.buf), max(need, min(2*cap(ex.buf), need+64<<10), 512))
		copy(grown, ex.buf)
		ex.buf = grown
	}
	n, err := ex.conn.Read(ex.buf[len(ex.buf):cap(ex.buf)])
	ex.buf = ex.buf[:len(ex.buf)+n]
	ex.got += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return ex.ioError(err, what)
}

// readPacket reads one framed packet of at most limit bytes.
func (ex *exchange) readPacket(limit int, what string) (Packet, error) {
	for {
		p, n, err := ParsePacket(ex.buf, limit)
		if err == nil {
			if ex.c.Debug != nil {
				ex.c.Debug("recv", ex.addr, ex.buf[:n])
			}
			ex.buf = ex.buf[n:]
			return p, nil
		}
		if !errors.Is(err, ErrTruncated) {
			return Packet{}, err
		}
		need := len(ex.buf) + 1
		if l, m, verr := ConsumeVarInt(ex.buf); verr == nil {
			need = m + int(l) // within limit: ParsePacket checked it
		}
		if err := ex.fill(need, what); err != nil {
			if errors.Is(err, ErrTruncated) && len(ex.buf) > 0 && ex.buf[0] == 0xFF && looksLegacyKick(ex.buf) {
				return Packet{}, errLegacyKick
			}
			return Packet{}, err
		}
	}
}

// looksLegacyKick reports whether b reads as a whole legacy kick packet:
// FF, a length in UTF-16 units, and exactly that much text.
func looksLegacyKick(b []byte) bool {
	n, err := LegacyReplyLen(b)
	return err == nil && n == len(b) && n > 3
}

// modern runs the modern exchange: handshake and request, status, ping.
func (c *Client) modern(ctx context.Context, t Target, addr netip.AddrPort) (*Response, error) {
	ex, done, err := c.dial(ctx, "status", addr)
	if err != nil {
		return nil, err
	}
	defer done()
	opErr := func(err error) error { return &OpError{Pkg: "slp", Op: "status", Addr: addr.String(), Err: err} }
	var req []byte
	if c.ProxyProtocol != 0 {
		local, _ := netip.ParseAddrPort(ex.conn.LocalAddr().String())
		if req, err = AppendProxyHeader(req, c.ProxyProtocol, local, addr); err != nil {
			return nil, opErr(err)
		}
	}
	req, err = Handshake{Protocol: c.protocol(), Host: t.Host, Port: t.Port, NextState: NextStatus}.AppendBinary(req)
	if err != nil {
		return nil, opErr(err)
	}
	req = AppendStatusRequest(req)
	sent := time.Now()
	if err := ex.write(req, "status"); err != nil {
		return nil, opErr(err)
	}
	var first time.Time
	p, err := ex.readPacketTimed(c.maxResponse(), "status", &first)
	if err != nil {
		return nil, opErr(err)
	}
	if p.ID != IDStatusResponse {
		return nil, opErr(parseErr("status", 0, detail(ErrUnexpectedPacket, "packet 0x%02x, not a status response", p.ID)))
	}
	sr, err := ParseStatusResponse(p.Data, c.maxResponse())
	if err != nil {
		return nil, opErr(err)
	}
	st, err := ParseStatus(sr.JSON, &ParseOptions{KeepFavicon: c.KeepFavicon})
	if err != nil {
		return nil, opErr(err)
	}
	r := &Response{Status: st, JSON: sr.JSON, Trailer: sr.Trailer, RTT: first.Sub(sent), Target: t, Addr: addr}
	if !c.NoPing {
		c.ping(ex, r)
	}
	return r, nil
}

// readPacketTimed is readPacket that records when the first byte came.
func (ex *exchange) readPacketTimed(limit int, what string, first *time.Time) (Packet, error) {
	if len(ex.buf) == 0 {
		if err := ex.fill(1, what); err != nil {
			return Packet{}, err
		}
	}
	*first = time.Now()
	return ex.readPacket(limit, what)
}

// ping times a ping and its pong into r. A server that closes instead, or
// answers with something else, leaves r's status round trip.
func (c *Client) ping(ex *exchange, r *Response) {
	if limit := time.Now().Add(max(minPongWait, 4*r.RTT)); limit.Before(ex.end) && ex.ctx.Err() == nil {
		_ = ex.conn.SetReadDeadline(limit)
	}
	payload := time.Now().UnixNano()
	sent := time.Now()
	if ex.write(AppendPing(nil, payload), "pong") != nil {
		return
	}
	var first time.Time
	p, err := ex.readPacketTimed(16, "pong", &first)
	if err != nil || p.ID != IDPong {
		return
	}
	if v, err := ParsePing(p.Data); err == nil && v == payload {
		r.RTT, r.Pong = first.Sub(sent), true
	}
}

// legacy runs the legacy ping.
func (c *Client) legacy(ctx context.Context, t Target, addr netip.AddrPort) (*Response, error) {
	ex, done, err := c.dial(ctx, "legacy", addr)
	if err != nil {
		return nil, err
	}
	defer done()
	opErr := func(err error) error { return &OpError{Pkg: "slp", Op: "legacy", Addr: addr.String(), Err: err} }
	var req []byte
	if c.ProxyProtocol != 0 {
		local, _ := netip.ParseAddrPort(ex.conn.LocalAddr().String())
		if req, err = AppendProxyHeader(req, c.ProxyProtocol, local, addr); err != nil {
			return nil, opErr(err)
		}
	}
	req, err = LegacyPing{Variant: c.legacyVariant(), Protocol: DefaultLegacyProtocol, Host: t.Host, Port: int32(t.Port)}.AppendBinary(req)
	if err != nil {
		return nil, opErr(err)
	}
	sent := time.Now()
	if err := ex.write(req, "legacy reply"); err != nil {
		return nil, opErr(err)
	}
	var first time.Time
	for {
		n, lerr := LegacyReplyLen(ex.buf)
		if lerr == nil && len(ex.buf) >= n {
			if c.Debug != nil {
				c.Debug("recv", addr, ex.buf[:n])
			}
			break
		}
		if lerr != nil && !errors.Is(lerr, ErrTruncated) {
			return nil, opErr(lerr)
		}
		if err := ex.fill(max(n, 3), "legacy reply"); err != nil {
			if errors.Is(err, ErrTruncated) && len(ex.buf) >= 3 {
				_, perr := ParseLegacyReply(ex.buf) // says where it ends
				err = perr
			}
			return nil, opErr(err)
		}
		if first.IsZero() {
			first = time.Now()
		}
	}
	ls, err := ParseLegacyReply(ex.buf)
	if err != nil {
		return nil, opErr(err)
	}
	return &Response{Legacy: ls, RTT: first.Sub(sent), Target: t, Addr: addr}, nil
}
