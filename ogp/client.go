package ogp

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// DefaultReadBuffer is the SO_RCVBUF a Client asks for its own socket;
// the kernel may grant less (net.core.rmem_max on Linux).
const DefaultReadBuffer = udpclient.DefaultReadBuffer

// Client queries OGP servers. The zero value is ready to use in [V091].
// A Client owns one UDP socket, opened on first use (or PacketConn) and
// shared by every call, read by one goroutine that hands each datagram to
// the calls of the server that sent it (the transport a2s.Client and the
// scan engine share too); each call runs a [Conversation] on the calling
// goroutine. It is safe for concurrent use. Call [Client.Close] to
// release the socket. The client remembers 65,536 servers' challenges;
// past that, a new server takes the place of one not asked for a while.
//
// An unanswered request is sent again after Timeout, half as long again
// on each resend, Retries times, and a call takes at most Deadline: with
// the defaults, 1 s, 1.5 s and 2.25 s, so a silent server fails after
// 4.75 s and never after more than 5 s.
//
// Every error a call returns is an [*OpError] whose cause is a
// [*CallError], which tells what the call sent. A call that got no
// answer fails with [ErrTimeout], unless the server sent datagrams that
// are not OGP meanwhile: then the error matches [ErrNotOGP] and the
// [*ParseError] of the first, and is not a timeout.
type Client struct {
	// Dialect is the wire layout; V091 by default.
	Dialect Dialect
	// Timeout is how long the first send of a request waits for its
	// answer (default DefaultTimeout, 1s); each resend waits half as long
	// again.
	Timeout time.Duration
	// Retries is how many times an unanswered request is resent: zero
	// means DefaultRetries, a negative value none. Error 3 re-challenges
	// do not count as retries.
	Retries int
	// Deadline is the most time one call takes, from its first request,
	// whatever the retries (default DefaultDeadline, 5s). Set it negative
	// for none: Timeout and Retries then bound the wait, and the context.
	Deadline time.Duration
	// MaxChallenges bounds the error 3 answers accepted per call (default
	// DefaultMaxChallenges, 3).
	MaxChallenges int
	// MaxBytesPerPacket is the split size the client asks for (500..1500).
	// Zero means DefaultPacketSize.
	MaxBytesPerPacket uint16
	// MaxAnswerSize caps a reassembled split answer. Zero means
	// DefaultMaxAnswerSize.
	MaxAnswerSize int
	// PacketConn is a socket of the caller's to use; the Client owns it
	// from then on, and Close closes it. If nil, the Client opens a UDP
	// socket on LocalAddr on first use.
	PacketConn net.PacketConn
	// LocalAddr is the address the Client binds when it opens its own
	// socket; the zero value means any address, any port.
	LocalAddr netip.AddrPort
	// ReadBuffer is the receive buffer (SO_RCVBUF) asked for the socket:
	// zero means DefaultReadBuffer, a negative value leaves the system
	// default. Many queries at once need a large one, or answers are
	// dropped.
	ReadBuffer int
	// Debug, if set, sees every datagram sent ("send") and received
	// ("recv"). It must not retain b. Received datagrams are reported
	// from the read loop, so Debug should be quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	mu         sync.Mutex
	t          *udpclient.Transport // open, or nil
	challenges *udpclient.Challenges
	closed     bool
}

// CallError is the cause inside the [*OpError] of every failed Client
// call: the error itself, and what the call had sent when it ended. Its
// message is Err's.
type CallError struct {
	Err   error
	Stats Stats
}

// Error returns Err's message.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *CallError) Unwrap() error { return e.Err }

// DialectError means the server seems to speak the other dialect than the
// Client's, for example a [V1] Client asking a v0.91 server.
type DialectError struct {
	Client Dialect // the dialect the Client spoke
	Server Dialect // the dialect the server seems to speak
	// Sure is true when the answer, which did not parse in the Client's
	// dialect, parses completely in the Server's. It is false when the
	// server answered error 4 (invalid query) to a query whose layout
	// differs between the dialects, which only suggests the other one.
	Sure bool
	Err  error // what failed in the Client's dialect
}

// Error says which dialect the server seems to speak, then why.
func (e *DialectError) Error() string {
	if e.Sure {
		return fmt.Sprintf("ogp: the server answers in dialect %v, not %v: %s", e.Server, e.Client, trimPrefix(e.Err))
	}
	return fmt.Sprintf("ogp: %s: the server may speak dialect %v, which lays out the host name, map, mod and player address fields differently from %v",
		trimPrefix(e.Err), e.Server, e.Client)
}

// Unwrap returns Err.
func (e *DialectError) Unwrap() error { return e.Err }

// Ping sends a Ping (with the challenge flag, so the answer also tells
// the current challenge) and returns the round-trip time.
func (c *Client) Ping(ctx context.Context, addr netip.AddrPort) (time.Duration, error) {
	cl := c.call(ctx, addr, true, nil)
	defer callPool.Put(cl)
	r := cl.conv.Result()
	return r.RTT, r.Err
}

// Query sends a Default Query asking what q says (nil: everything,
// QueryAll) and returns the answer. When the error wraps
// [ErrUnknownField] the Result still holds the sections parsed before the
// unknown bit. When the answer shows that the server speaks the other
// dialect, the error wraps a [*DialectError]. The Result is nil when no
// answer came.
func (c *Client) Query(ctx context.Context, addr netip.AddrPort, q *Query) (*Result, error) {
	cl := c.call(ctx, addr, false, q)
	defer callPool.Put(cl)
	r := cl.conv.Result()
	if r.Answer == nil {
		return nil, r.Err
	}
	res := new(Result)
	*res = *r
	return res, res.Err
}

// call is one call in progress, pooled: its conversation and the options
// it reads.
type call struct {
	opts Options
	conv Conversation
}

var callPool = sync.Pool{New: func() any { return new(call) }}

// call runs one conversation with addr, a Ping or a Default Query of q.
func (c *Client) call(ctx context.Context, addr netip.AddrPort, ping bool, q *Query) *call {
	addr = unmapped(addr)
	cl := callPool.Get().(*call)
	cl.opts = Options{
		Dialect: c.Dialect, Ping: ping, Query: q, Timeout: c.Timeout, Retries: c.Retries, Deadline: c.Deadline,
		MaxChallenges: c.MaxChallenges, MaxBytesPerPacket: c.MaxBytesPerPacket, MaxAnswerSize: c.MaxAnswerSize,
	}
	t, chals, err := c.transport()
	chal, has := chals.Get(addr)
	cl.conv.Start(&cl.opts, addr, chal, has)
	if err != nil {
		cl.conv.Fail(err)
		return cl
	}
	t.Exchange(ctx, addr, &cl.conv, nil)
	if chal, ok := cl.conv.Challenge(); ok {
		chals.Put(addr, chal)
	}
	return cl
}

// transport opens the socket on first use.
func (c *Client) transport() (*udpclient.Transport, *udpclient.Challenges, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, ErrClientClosed
	}
	if c.t == nil {
		t, err := udpclient.Open(udpclient.Config{
			Conn: c.PacketConn, LocalAddr: c.LocalAddr, ReadBuffer: c.ReadBuffer,
			Name: "ogp", ErrClosed: ErrClientClosed, Debug: c.Debug,
		})
		if err != nil {
			return nil, nil, err
		}
		c.t, c.challenges = t, udpclient.NewChallenges(0)
	}
	return c.t, c.challenges, nil
}

// Close releases the socket. Calls in flight fail with ErrClientClosed.
// It is safe to call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	t := c.t
	c.mu.Unlock()
	switch {
	case t != nil:
		return t.Close()
	case c.PacketConn != nil:
		return c.PacketConn.Close()
	}
	return nil
}

// differs reports whether q has other bytes in the other dialect than in
// d, so that a server of the other dialect misreads it.
func (q *Query) differs(d Dialect) bool {
	a, err := q.Append(nil, d)
	b, err2 := q.Append(nil, d.other())
	return err == nil && err2 == nil && !bytes.Equal(a, b)
}

// trimPrefix is err's message without its "ogp: " prefix.
func trimPrefix(err error) string { return strings.TrimPrefix(err.Error(), "ogp: ") }

func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}
