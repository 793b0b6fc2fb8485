//go:build !(linux && (amd64 || arm64))

package sim

import (
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
)

// epollLoop exists on Linux only.
type epollLoop struct{}

// fleetSocket is a server's socket, read by its own goroutine.
type fleetSocket struct {
	conn *net.UDPConn
	sent atomic.Int64
}

func (s *fleetServer) listen() (err error) {
	s.sock.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(s.addr))
	return err
}

func (s *fleetSocket) close() {
	if s.conn != nil {
		s.conn.Close()
	}
}

func (s *fleetSocket) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	s.sent.Add(1) // before the datagram can be answered
	n, err := s.conn.WriteToUDPAddrPort(b, to)
	if err != nil {
		s.sent.Add(-1)
	}
	return n, err
}

func (f *Fleet) start() error {
	for _, srv := range f.servers {
		srv.answerer = newAnswerer(f.challenge)
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			srv.serve()
		}()
	}
	return nil
}

func (f *Fleet) halt() {
	for _, srv := range f.servers {
		srv.sock.close()
	}
	f.wg.Wait()
}

// serve answers datagrams until the socket is closed.
func (s *fleetServer) serve() {
	var buf [2048]byte
	for {
		n, from, err := s.sock.conn.ReadFromUDPAddrPort(buf[:])
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		s.answer(buf[:n], from)
	}
}
