package consoletest

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"
)

// This file is the datagram half of a Network, for consoles over UDP
// (BattlEye RCon): sockets are channels, so a reader waiting on one is
// durably blocked in a synctest bubble, and an hour of keep-alives and
// idle timers passes in no time. Datagrams keep their boundaries and, as
// on UDP, a datagram to a full inbox or to no socket is dropped.

// inboxSize is how many datagrams a socket holds unread before it drops.
const inboxSize = 1024

type datagram struct {
	from netip.AddrPort
	b    []byte
}

// ListenPacket opens a datagram socket on 127.0.0.1 and a free port.
func (n *Network) ListenPacket() *PacketConn {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.socks == nil {
		n.socks = make(map[netip.AddrPort]*PacketConn)
	}
	p := &PacketConn{
		net:   n,
		addr:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), n.port()),
		inbox: make(chan datagram, inboxSize),
		done:  make(chan struct{}),
	}
	p.rdl.init()
	n.socks[p.addr] = p
	return p
}

// DialUDP opens a datagram socket connected to remote, as net.DialUDP
// does: it sends to remote only and reads what remote sends.
func (n *Network) DialUDP(remote netip.AddrPort) *UDPConn {
	return &UDPConn{PacketConn: n.ListenPacket(), remote: remote}
}

func (n *Network) deliver(from, to netip.AddrPort, b []byte) {
	n.mu.Lock()
	p := n.socks[to]
	n.mu.Unlock()
	if p == nil {
		return
	}
	select {
	case p.inbox <- datagram{from, append([]byte(nil), b...)}:
	case <-p.done:
	default: // full: dropped, as a kernel drops
	}
}

// PacketConn is an unconnected datagram socket of a Network. It
// implements net.PacketConn.
type PacketConn struct {
	net  *Network
	addr netip.AddrPort

	inbox chan datagram
	once  sync.Once
	done  chan struct{}
	rdl   deadline
}

// ReadFrom waits for a datagram, the read deadline or Close.
func (p *PacketConn) ReadFrom(b []byte) (int, net.Addr, error) {
	d, err := p.read()
	if err != nil {
		return 0, nil, err
	}
	return copy(b, d.b), net.UDPAddrFromAddrPort(d.from), nil
}

func (p *PacketConn) read() (datagram, error) {
	select {
	case d := <-p.inbox:
		return d, nil
	default:
	}
	select {
	case d := <-p.inbox:
		return d, nil
	case <-p.done:
		return datagram{}, net.ErrClosed
	case <-p.rdl.wait():
		return datagram{}, os.ErrDeadlineExceeded
	}
}

// WriteTo sends b to addr, a *net.UDPAddr.
func (p *PacketConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	ua, ok := addr.(*net.UDPAddr)
	if !ok {
		return 0, errors.New("consoletest: not a UDP address")
	}
	return p.WriteToUDPAddrPort(b, ua.AddrPort())
}

// WriteToUDPAddrPort sends b to addr.
func (p *PacketConn) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	select {
	case <-p.done:
		return 0, net.ErrClosed
	default:
	}
	p.net.deliver(p.addr, netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port()), b)
	return len(b), nil
}

// Close closes the socket; blocked reads return net.ErrClosed.
func (p *PacketConn) Close() error {
	p.once.Do(func() {
		close(p.done)
		p.net.mu.Lock()
		delete(p.net.socks, p.addr)
		p.net.mu.Unlock()
	})
	return nil
}

// LocalAddr is the socket's address, a *net.UDPAddr.
func (p *PacketConn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(p.addr) }

// AddrPort is the socket's address.
func (p *PacketConn) AddrPort() netip.AddrPort { return p.addr }

// SetDeadline sets the read deadline; writes never block.
func (p *PacketConn) SetDeadline(t time.Time) error { return p.SetReadDeadline(t) }

// SetReadDeadline sets the read deadline, waking a blocked read.
func (p *PacketConn) SetReadDeadline(t time.Time) error { p.rdl.set(t); return nil }

// SetWriteDeadline does nothing: writes never block.
func (p *PacketConn) SetWriteDeadline(time.Time) error { return nil }

// UDPConn is a connected datagram socket of a Network. It implements
// net.Conn.
type UDPConn struct {
	*PacketConn
	remote netip.AddrPort
}

// Read returns the next datagram from the remote address.
func (c *UDPConn) Read(b []byte) (int, error) {
	for {
		d, err := c.read()
		if err != nil {
			return 0, err
		}
		if d.from == c.remote {
			return copy(b, d.b), nil
		}
	}
}

// Write sends b to the remote address.
func (c *UDPConn) Write(b []byte) (int, error) { return c.WriteToUDPAddrPort(b, c.remote) }

// RemoteAddr is the remote address, a *net.UDPAddr.
func (c *UDPConn) RemoteAddr() net.Addr { return net.UDPAddrFromAddrPort(c.remote) }
