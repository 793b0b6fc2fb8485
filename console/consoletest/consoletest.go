// Package consoletest is the test harness the console packages share
// (rcon, and the WebRCON, BattlEye, telnet and REST consoles built on
// package console): an in-memory network whose connections behave as TCP
// connections do for a client and a server (buffered both ways, with
// deadlines, end of stream and refused dials), so that a session and a
// fake server can talk inside a testing/synctest bubble. There, time
// moves only when every goroutine of the bubble waits, so a test of a
// 30 s keep-alive, a 5 s login timeout or a 250 ms probe wait takes no
// real time, and its timing is exact. CONTRIBUTING forbids sleeping in a
// test to wait for another goroutine: sleep in a bubble to let time pass,
// and call synctest.Wait to let every goroutine settle.
//
// Use it so, within synctest.Test:
//
//	synctest.Test(t, func(t *testing.T) {
//		var n consoletest.Network
//		l := n.MustListen(t, "127.0.0.1:27015")
//		go fake.Serve(l)                 // any server that takes a net.Listener
//		opts.DialContext = n.DialContext // the client dials over n
//		c, err := pkg.Dial(ctx, l.Addr().String(), ...)
//		...
//	})
//
// A Network carries datagrams too, for consoles over UDP (BattlEye RCon):
// Network.ListenPacket for a server's socket, Network.DialUDP (or
// DialContext with "udp") for a client's.
//
// A Network must be made inside the bubble that uses it. [Network.DialFrom]
// dials from an address of the test's choosing, for servers that count or
// lock out per address; [Listener.FailAccept] makes Accept fail, for the
// back-off of a server out of file descriptors. [Recv] and [NoEvent] wait
// for a session's events. Tests of real sockets (segmentation, a peer
// nobody here wrote) stay on loopback.
//
// This package uses the standard library only.
package consoletest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console"
)

// DefaultBufferSize is how many bytes a connection of a Network with no
// BufferSize holds each way before a write waits for the reader, about
// what a loopback socket holds.
const DefaultBufferSize = 64 << 10

// Network is an in-memory network of listeners and the connections made
// to them. The zero value is ready to use; it must not be copied after
// first use.
type Network struct {
	// BufferSize is what a connection holds each way before a write
	// waits; zero means DefaultBufferSize.
	BufferSize int

	mu        sync.Mutex
	listeners map[netip.AddrPort]*Listener
	socks     map[netip.AddrPort]*PacketConn // datagram sockets
	nextPort  uint16
}

// port picks a free port for an address that asked for 0.
func (n *Network) port() uint16 {
	if n.nextPort == 0 {
		n.nextPort = 40000
	}
	n.nextPort++
	return n.nextPort
}

// Listen listens on addr ("127.0.0.1:27015"; port 0 picks one).
func (n *Network) Listen(addr string) (*Listener, error) {
	ap, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, fmt.Errorf("consoletest: listen %q: %w", addr, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.listeners == nil {
		n.listeners = make(map[netip.AddrPort]*Listener)
	}
	if ap.Port() == 0 {
		ap = netip.AddrPortFrom(ap.Addr(), n.port())
	}
	if _, ok := n.listeners[ap]; ok {
		return nil, &net.OpError{Op: "listen", Net: "tcp", Addr: net.TCPAddrFromAddrPort(ap), Err: syscall.EADDRINUSE}
	}
	l := &Listener{net: n, addr: ap, conns: make(chan net.Conn), fail: make(chan error, maxFailAccept), closed: make(chan struct{})}
	n.listeners[ap] = l
	return l, nil
}

// MustListen is Listen that fails the test on error.
func (n *Network) MustListen(t testing.TB, addr string) *Listener {
	t.Helper()
	l, err := n.Listen(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// DialContext connects to addr from a new port of 127.0.0.1, with the
// signature of net.Dialer.DialContext, for a client's dial hook: a
// stream for "tcp", a connected datagram socket (DialUDP) for "udp".
func (n *Network) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if network == "udp" || network == "udp4" {
		dst, err := netip.ParseAddrPort(addr)
		if err != nil {
			return nil, &net.OpError{Op: "dial", Net: network, Err: err}
		}
		return n.DialUDP(dst), nil
	}
	n.mu.Lock()
	from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), n.port())
	n.mu.Unlock()
	return n.DialFrom(ctx, from.String(), addr)
}

// DialFrom connects to addr from the address from. It returns once the
// listener has accepted the connection; a dial to an address nobody
// listens on is refused (syscall.ECONNREFUSED), as on TCP.
func (n *Network) DialFrom(ctx context.Context, from, addr string) (net.Conn, error) {
	src, err := netip.ParseAddrPort(from)
	if err != nil {
		return nil, fmt.Errorf("consoletest: dial from %q: %w", from, err)
	}
	dst, err := netip.ParseAddrPort(addr)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: err}
	}
	n.mu.Lock()
	l := n.listeners[dst]
	size := n.BufferSize
	n.mu.Unlock()
	refused := &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(dst), Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	if l == nil {
		return nil, refused
	}
	client, server := Pipe(src, dst, size)
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, refused
	case <-ctx.Done():
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(dst), Err: ctx.Err()}
	}
}

// Listener is a net.Listener on a Network.
type Listener struct {
	net   *Network
	addr  netip.AddrPort
	conns chan net.Conn

	fail   chan error // what the next Accepts return
	closed chan struct{}
	once   sync.Once
}

// maxFailAccept bounds the errors FailAccept holds.
const maxFailAccept = 64

// Accept waits for the next connection, or returns the next error given
// to FailAccept.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case err := <-l.fail:
		return nil, err
	default:
	}
	select {
	case err := <-l.fail:
		return nil, err
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: net.ErrClosed}
	}
}

// FailAccept makes the next Accepts return errs, one each, before any
// connection; a blocked Accept returns the first at once. It holds up
// to 64 errors.
func (l *Listener) FailAccept(errs ...error) {
	for _, err := range errs {
		l.fail <- err
	}
}

// Close stops listening: the address is free again, and dials to it are
// refused.
func (l *Listener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		l.net.mu.Lock()
		if l.net.listeners[l.addr] == l {
			delete(l.net.listeners, l.addr)
		}
		l.net.mu.Unlock()
	})
	return nil
}

// Addr returns the listener's address, a *net.TCPAddr.
func (l *Listener) Addr() net.Addr { return net.TCPAddrFromAddrPort(l.addr) }

// AddrPort returns the listener's address.
func (l *Listener) AddrPort() netip.AddrPort { return l.addr }

// Recv waits up to within for the next event of a session's Events (a
// console.Session's, or any such channel) and returns it; it fails the
// test if none comes or the channel is closed. In a bubble, within is
// time on the bubble's clock.
func Recv(t testing.TB, events <-chan console.Event, within time.Duration) console.Event {
	t.Helper()
	timer := time.NewTimer(within)
	defer timer.Stop()
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatal("the events channel was closed")
		}
		return e
	case <-timer.C:
		t.Fatalf("no event within %v", within)
	}
	return console.Event{}
}

// NoEvent fails the test if an event is waiting once every goroutine of
// the bubble has settled. It must run in a synctest bubble.
func NoEvent(t testing.TB, events <-chan console.Event) {
	t.Helper()
	synctest.Wait()
	select {
	case e, ok := <-events:
		if ok {
			t.Fatalf("unexpected event %+v", e)
		}
	default:
	}
}
