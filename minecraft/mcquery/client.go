package mcquery

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// DefaultPort is Query's port when the server does not set query.port:
// the game's.
const DefaultPort = 25565

// Client queries Minecraft servers over Query. The zero value is ready to
// use. It owns one UDP socket, opened on first use (or PacketConn), read
// by the shared client transport of gsq's UDP protocols
// (internal/udpclient); each call runs a [Conversation] on the calling
// goroutine. Servers keep tokens per source address and port, and the
// socket stays the same, so the Client keeps each server's token for the
// next call, which then asks the stat at once (a stale one costs a
// silent stat and a handshake, which the Conversation does). It is safe
// for concurrent use. Close releases the socket.
//
// A query that gets no answer fails with an error matching [ErrTimeout]
// and os.ErrDeadlineExceeded (and context.DeadlineExceeded when the
// context's deadline ended it); a closed port fails at once with
// [ErrUnreachable] where the system reports it (Linux). Errors are
// [*OpError] values.
type Client struct {
	// Timeout, MaxTimeout, Retries and Deadline are Query's (defaults
	// 1s, no cap, 2, 5s).
	Timeout, MaxTimeout time.Duration
	Retries             int
	Deadline            time.Duration
	// SessionID is the session id sent (default DefaultSessionID), masked
	// with SessionMask.
	SessionID uint32
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

// BasicStat asks addr for its basic stat.
func (c *Client) BasicStat(ctx context.Context, addr netip.AddrPort) (*BasicStat, time.Duration, error) {
	r := c.run(ctx, addr, false)
	return r.Basic, r.RTT, r.Err
}

// FullStat asks addr for its full stat: every player and the plugins.
func (c *Client) FullStat(ctx context.Context, addr netip.AddrPort) (*FullStat, time.Duration, error) {
	r := c.run(ctx, addr, true)
	return r.Full, r.RTT, r.Err
}

func (c *Client) run(ctx context.Context, addr netip.AddrPort, full bool) Result {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	q := &Query{Full: full, Timeout: c.Timeout, MaxTimeout: c.MaxTimeout, Retries: c.Retries, Deadline: c.Deadline, SessionID: c.SessionID}
	var conv Conversation
	t, challenges, err := c.transport()
	if err != nil {
		conv.Start(q, addr, 0, false)
		conv.Fail(err)
		return *conv.Result()
	}
	token, has := challenges.Get(addr)
	conv.Start(q, addr, token, has)
	t.Exchange(ctx, addr, &conv, nil)
	if token, ok := conv.Challenge(); ok {
		challenges.Put(addr, token)
	}
	return *conv.Result()
}

// transport opens the socket on first use.
func (c *Client) transport() (*udpclient.Transport, *udpclient.Challenges, error) {
	return c.lazy.Get(udpclient.Config{
		Conn: c.PacketConn, LocalAddr: c.LocalAddr, ReadBuffer: c.ReadBuffer,
		Name: "mcquery", ErrClosed: ErrClientClosed, Debug: c.Debug,
	})
}

// Close releases the socket; queries in flight fail with
// ErrClientClosed. It is safe to call more than once.
func (c *Client) Close() error { return c.lazy.Close(c.PacketConn) }
