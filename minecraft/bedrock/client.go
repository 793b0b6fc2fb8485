package bedrock

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// Client asks Bedrock servers for their status. The zero value is ready
// to use. It owns one UDP socket, opened on first use (or PacketConn),
// read by the shared client transport of gsq's UDP protocols
// (internal/udpclient); each call runs a [Conversation] on the calling
// goroutine. It is safe for concurrent use. Close releases the socket.
//
// A ping that gets no pong fails with an error matching [ErrTimeout] and
// os.ErrDeadlineExceeded (and context.DeadlineExceeded when the context's
// deadline ended it); a closed port fails at once with [ErrUnreachable]
// where the system reports it (Linux). Errors are [*OpError] values.
type Client struct {
	// Timeout, MaxTimeout, Retries and Deadline are Query's (defaults
	// 1s, no cap, 2, 5s).
	Timeout, MaxTimeout time.Duration
	Retries             int
	Deadline            time.Duration
	// ClientGUID is the GUID the pings carry.
	ClientGUID int64
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
	Debug func(dir string, peer netip.AddrPort, b []byte)

	lazy udpclient.Lazy
}

// Response is a server's answer.
type Response struct {
	Status    *Status
	Pong      *Pong // the RakNet pong, raw status included
	Transport Transport
	RTT       time.Duration
}

// Status pings addr over RakNet and returns its status.
func (c *Client) Status(ctx context.Context, addr netip.AddrPort) (*Response, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	q := &Query{Timeout: c.Timeout, MaxTimeout: c.MaxTimeout, Retries: c.Retries, Deadline: c.Deadline, ClientGUID: c.ClientGUID}
	var conv Conversation
	conv.Start(q, addr, 0, false)
	t, _, err := c.transport()
	if err != nil {
		conv.Fail(err)
	} else {
		t.Exchange(ctx, addr, &conv, nil)
	}
	r := conv.Result()
	if r.Err != nil {
		return nil, r.Err
	}
	return &Response{Status: r.Status, Pong: r.Pong, Transport: r.Transport, RTT: r.RTT}, nil
}

// transport opens the socket on first use.
func (c *Client) transport() (*udpclient.Transport, *udpclient.Challenges, error) {
	return c.lazy.Get(udpclient.Config{
		Conn: c.PacketConn, LocalAddr: c.LocalAddr, ReadBuffer: c.ReadBuffer,
		Name: "bedrock", ErrClosed: ErrClientClosed, Debug: c.Debug,
	})
}

// Close releases the socket; pings in flight fail with ErrClientClosed.
// It is safe to call more than once.
func (c *Client) Close() error { return c.lazy.Close(c.PacketConn) }
