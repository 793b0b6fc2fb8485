//go:build !(linux && (amd64 || arm64))

package sim

import (
	"errors"
	"net"
	"net/netip"
	"time"
)

// epollLoop exists on Linux only.
type epollLoop struct{}

// fleetSocket is a server's socket, read by its own goroutine.
type fleetSocket struct{ conn *net.UDPConn }

func (s *fleetServer) listen() (err error) {
	s.sock.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(s.addr))
	return err
}

func (s *fleetServer) close() {
	if s.sock.conn != nil {
		s.sock.conn.Close()
	}
}

func (f *Fleet) start() error {
	for _, srv := range f.servers {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			srv.serve()
		}()
	}
	return nil
}

func (f *Fleet) halt() {
	f.closeSockets()
	f.wg.Wait()
}

// serve answers requests until the socket is closed.
func (s *fleetServer) serve() {
	var buf [2048]byte
	for {
		n, from, err := s.sock.conn.ReadFromUDPAddrPort(buf[:])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				s.flush() // the held-back datagram waited long enough
			}
			continue
		}
		s.requests.Add(1)
		s.answer(buf[:n], from)
	}
}

// hold arranges for the held-back datagram to go out 2 ms from now if
// nothing else is sent before.
func (s *fleetServer) hold() { _ = s.sock.conn.SetReadDeadline(time.Now().Add(2 * time.Millisecond)) }

func (s *fleetServer) write(b []byte, to netip.AddrPort) {
	if s.held == nil {
		_ = s.sock.conn.SetReadDeadline(time.Time{})
	}
	if _, err := s.sock.conn.WriteToUDPAddrPort(b, to); err == nil {
		s.sent.Add(1)
	}
}
