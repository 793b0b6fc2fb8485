// Package udpserve holds what the UDP servers of gsq (a2s.Server and
// ogp.Server) share around their handlers: the set of sockets Serve reads,
// the address the server reports, the read loop, and a Shutdown that
// closes the sockets and waits for their loops. The conventions it keeps
// are those of net/http's Server, carried over to datagrams: Serve takes a
// socket of the caller's, returns ErrServerClosed after Shutdown, and
// LocalAddr tells a caller that asked for port 0 which port it got.
//
// It uses the standard library only.
package udpserve

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gsq-project/gsq/internal/udpio"
)

// MaxReadErrors is how many read errors in a row (other than a closed
// socket, which ends the loop at once) a read loop skips before it gives
// up: a single error, such as ICMP feedback reported on some systems, is
// not the end of a socket.
const MaxReadErrors = 16

// readBatch is how many datagrams one read may return (recvmmsg(2) on
// Linux).
const readBatch = 8

// Sockets is the set of sockets a server serves. The zero value is empty
// and ready to use.
type Sockets struct {
	shutdown atomic.Bool
	mu       sync.Mutex
	conns    []net.PacketConn // served now, in the order Serve got them
	loops    sync.WaitGroup
}

// Serve reads pc until it is closed or fails MaxReadErrors times in a row,
// handing each datagram of up to size bytes to handle, which must not
// retain b. After Shutdown, which closes pc, it returns closed; it returns
// closed at once, and closes pc, when Shutdown came first.
func (s *Sockets) Serve(pc net.PacketConn, size int, closed error, handle func(from netip.AddrPort, b []byte)) error {
	s.mu.Lock()
	if s.shutdown.Load() {
		s.mu.Unlock()
		pc.Close()
		return closed
	}
	s.conns = append(s.conns, pc)
	s.loops.Add(1)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.conns = slices.DeleteFunc(s.conns, func(c net.PacketConn) bool { return c == pc })
		s.mu.Unlock()
		s.loops.Done()
	}()
	err := read(pc, size, handle)
	if s.shutdown.Load() {
		return closed
	}
	return err
}

// read is Serve's loop.
func read(pc net.PacketConn, size int, handle func(from netip.AddrPort, b []byte)) error {
	r := udpio.NewReader(pc, size, readBatch)
	defer r.Close()
	for failures := 0; ; {
		n, err := r.Read()
		if err != nil {
			if failures++; failures >= MaxReadErrors || errors.Is(err, net.ErrClosed) {
				return err
			}
			continue
		}
		failures = 0
		for i := range n {
			handle(r.Datagram(i))
		}
	}
}

// Listen opens the UDP socket for a server's ListenAndServe: on addr, or
// on def (the protocol's conventional ":port") when addr is empty. It
// returns ErrShutdown once Shutdown was called.
func (s *Sockets) Listen(addr, def string) (net.PacketConn, error) {
	if s.shutdown.Load() {
		return nil, ErrShutdown
	}
	if addr == "" {
		addr = def
	}
	return net.ListenPacket("udp", addr)
}

// ErrShutdown is Listen's error after Shutdown; the servers return their
// own ErrServerClosed for it.
var ErrShutdown = errors.New("server shut down")

// LocalAddr is the address of the first socket still served, or nil
// before Serve and after Shutdown.
func (s *Sockets) LocalAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		return nil
	}
	return s.conns[0].LocalAddr()
}

// Shutdown closes every socket served and waits for the loops to return,
// or for ctx. Serve refuses new sockets from then on.
func (s *Sockets) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.mu.Lock()
	for _, pc := range s.conns {
		pc.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.loops.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Writer is how a server sends a reply: *net.UDPConn has the method.
type Writer interface {
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// WriterOf is pc as a Writer: itself when it has the method, else an
// adapter that calls WriteTo.
func WriterOf(pc net.PacketConn) Writer {
	if w, ok := pc.(Writer); ok {
		return w
	}
	return packetConnWriter{pc}
}

type packetConnWriter struct{ pc net.PacketConn }

func (w packetConnWriter) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	return w.pc.WriteTo(b, net.UDPAddrFromAddrPort(addr))
}
