package satisfactory

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// Client polls Satisfactory servers. The zero value is ready to use. It
// owns one UDP socket, opened on first use (or PacketConn), read by the
// shared client transport of gsq's UDP protocols; each poll runs a
// [Conversation] on the calling goroutine. It is safe for concurrent use.
// Close releases the socket.
//
// A poll that gets no reply fails with an error matching [ErrTimeout]
// and os.ErrDeadlineExceeded (and context.DeadlineExceeded when the
// context's deadline ended it); a closed port fails at once with
// [ErrUnreachable]. Errors are [*OpError] values.
type Client struct {
	// Timeout, MaxTimeout, Retries and Deadline are the [Options] of
	// every poll; zero values are the defaults (1 s, no cap, 2, 5 s).
	Timeout, MaxTimeout time.Duration
	Retries             int
	Deadline            time.Duration
	// PacketConn is a socket of the caller's to use; the Client owns it
	// from then on. If nil, the Client opens a UDP socket on LocalAddr on
	// first use.
	PacketConn net.PacketConn
	// LocalAddr is the address the Client binds when it opens its own
	// socket; the zero value means any address, any port.
	LocalAddr netip.AddrPort
	// ReadBuffer is the SO_RCVBUF asked for the socket: zero means the
	// transport's default, a negative value the system's.
	ReadBuffer int
	// Debug, if set, sees every datagram sent ("send") and received
	// ("recv"). It must not retain b; received datagrams are reported
	// from the read loop, so it should be quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	mu     sync.Mutex
	t      *udpclient.Transport
	closed bool
}

// State polls the server at addr and returns its reply: its state, build,
// sub-states and name, with the round-trip time. The error, also in the
// Result, is an [*OpError] when no reply came.
func (c *Client) State(ctx context.Context, addr netip.AddrPort) (*Result, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	o := &Options{Timeout: c.Timeout, MaxTimeout: c.MaxTimeout, Retries: c.Retries, Deadline: c.Deadline}
	var conv Conversation
	conv.Start(o, addr, 0, false)
	t, err := c.transport()
	if err != nil {
		conv.Fail(err)
	} else {
		t.Exchange(ctx, addr, &conv, nil)
	}
	r := *conv.Result()
	return &r, r.Err
}

// transport opens the socket on first use.
func (c *Client) transport() (*udpclient.Transport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, ErrClientClosed
	}
	if c.t == nil {
		t, err := udpclient.Open(udpclient.Config{
			Conn: c.PacketConn, LocalAddr: c.LocalAddr, ReadBuffer: c.ReadBuffer,
			Name: "satisfactory", ErrClosed: ErrClientClosed, Debug: c.Debug,
		})
		if err != nil {
			return nil, err
		}
		c.t = t
	}
	return c.t, nil
}

// Close releases the socket; polls in flight fail with ErrClientClosed.
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
