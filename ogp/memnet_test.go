package ogp_test

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// memNet is an in-memory UDP network for tests that run in a
// testing/synctest bubble: reads block on channels, so the bubble's clock
// advances as soon as every goroutine waits, and timeouts cost no wall
// time. Delivery is in order; a full queue or an unknown address drops
// the datagram, as UDP would.
type memNet struct {
	mu    sync.Mutex
	conns map[netip.AddrPort]*memConn
	// drop, if set, is asked about every datagram before delivery.
	drop func(from, to netip.AddrPort, b []byte) bool
}

type datagram struct {
	from netip.AddrPort
	b    []byte
}

// listen returns a conn bound to addr.
func (n *memNet) listen(addr string) *memConn {
	a := netip.MustParseAddrPort(addr)
	c := &memConn{net: n, addr: a, in: make(chan datagram, 64), closed: make(chan struct{})}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.conns == nil {
		n.conns = make(map[netip.AddrPort]*memConn)
	}
	n.conns[a] = c
	return c
}

// memConn is one socket of a memNet. It implements net.PacketConn.
type memConn struct {
	net    *memNet
	addr   netip.AddrPort
	in     chan datagram
	closed chan struct{}
	once   sync.Once
	sent   atomic.Int64 // datagrams written
}

func (c *memConn) ReadFrom(b []byte) (int, net.Addr, error) {
	select {
	case d := <-c.in:
		return copy(b, d.b), net.UDPAddrFromAddrPort(d.from), nil
	case <-c.closed:
		return 0, nil, net.ErrClosed
	}
}

func (c *memConn) WriteTo(b []byte, to net.Addr) (int, error) {
	select {
	case <-c.closed:
		return 0, net.ErrClosed
	default:
	}
	c.sent.Add(1)
	dst := to.(*net.UDPAddr).AddrPort()
	c.net.mu.Lock()
	peer := c.net.conns[dst]
	drop := c.net.drop
	c.net.mu.Unlock()
	if peer == nil || drop != nil && drop(c.addr, dst, b) {
		return len(b), nil
	}
	select {
	case peer.in <- datagram{c.addr, append([]byte(nil), b...)}:
	default:
	}
	return len(b), nil
}

func (c *memConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return nil
}

func (c *memConn) LocalAddr() net.Addr              { return net.UDPAddrFromAddrPort(c.addr) }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }
func (c *memConn) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	return c.WriteTo(b, net.UDPAddrFromAddrPort(to))
}
