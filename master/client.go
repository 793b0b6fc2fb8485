package master

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// Client lists master servers. The zero value is ready to use. It owns
// one UDP socket, opened on first use (or PacketConn), read by the shared
// client transport of gsq's UDP protocols; each listing runs a
// [Conversation] on the calling goroutine. It is safe for concurrent use,
// and runs one listing per master at a time (the master's replies carry
// no id to tell two apart): a second listing of the same master waits
// for the first. Close releases the socket.
type Client struct {
	// Timeout, MaxTimeout, Retries, Deadline, MaxPages and MaxAddresses
	// are the [Options] of every listing; zero values are the defaults.
	Timeout      time.Duration
	MaxTimeout   time.Duration
	Retries      int
	Deadline     time.Duration
	MaxPages     int
	MaxAddresses int
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
	busy   map[netip.AddrPort]chan struct{} // the masters being listed
	closed bool
}

// List lists the servers the master at addr has for q (its region, its
// filter, and the seed to start after: the zero value starts at the
// beginning), calling each with every page's new addresses as they come:
// a program can query the first servers while the rest are listed. The
// slice each gets is valid until it returns; each stops the listing by
// returning false (the Result then has Complete false and no error).
// Addresses listed again are dropped. The Result says what came; its Err,
// also returned, is an [*OpError] when the listing failed or was cut
// short ([ErrLimit]), after each has had every address that came.
func (c *Client) List(ctx context.Context, addr netip.AddrPort, q Query, each func(page []netip.AddrPort) bool) (*Result, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	o := &Options{Query: q, Timeout: c.Timeout, MaxTimeout: c.MaxTimeout, Retries: c.Retries, Deadline: c.Deadline,
		MaxPages: c.MaxPages, MaxAddresses: c.MaxAddresses}
	conv := new(Conversation)
	conv.Start(o, addr, 0, false)
	if conv.Done() {
		return c.result(conv)
	}
	t, release, err := c.acquire(ctx, addr)
	if err != nil {
		conv.Fail(err)
		return c.result(conv)
	}
	defer release()
	t.Exchange(ctx, addr, conv, func() {
		if page := conv.TakeNew(); len(page) > 0 && each != nil && !each(page) {
			conv.Stop()
		}
	})
	return c.result(conv)
}

func (c *Client) result(conv *Conversation) (*Result, error) {
	r := *conv.Result()
	return &r, r.Err
}

// acquire opens the socket on first use and waits for the master at addr
// to be free of other listings, within ctx; release frees it.
func (c *Client) acquire(ctx context.Context, addr netip.AddrPort) (*udpclient.Transport, func(), error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, nil, ErrClientClosed
		}
		if c.t == nil {
			t, err := udpclient.Open(udpclient.Config{
				Conn: c.PacketConn, LocalAddr: c.LocalAddr, ReadBuffer: c.ReadBuffer,
				Name: "master", ErrClosed: ErrClientClosed, Debug: c.Debug,
			})
			if err != nil {
				c.mu.Unlock()
				return nil, nil, err
			}
			c.t, c.busy = t, map[netip.AddrPort]chan struct{}{}
		}
		wait, busy := c.busy[addr]
		if !busy {
			free := make(chan struct{})
			c.busy[addr] = free
			t := c.t
			c.mu.Unlock()
			return t, func() {
				c.mu.Lock()
				delete(c.busy, addr)
				c.mu.Unlock()
				close(free)
			}, nil
		}
		c.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// Close releases the socket; listings in flight fail with
// ErrClientClosed. It is safe to call more than once.
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
