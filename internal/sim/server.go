package sim

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/rcon"
)

// Server is one simulated game server: A2S and OGP on a UDP port, through
// a Mux, and RCON on TCP at the same port. Listen binds it; set its fields,
// then Start it.
type Server struct {
	// Mux answers the UDP datagrams.
	Mux Mux
	// RCON serves the TCP listener, when Listen made one.
	RCON *rcon.Server
	// WrapWriter, if set, wraps the UDP socket's writer, for instance with
	// a quirk profile's lossy knobs.
	WrapWriter func(a2s.PacketWriter) a2s.PacketWriter
	// Logf, if set, receives what fails while serving.
	Logf func(format string, args ...any)

	udp *net.UDPConn
	tcp net.Listener
	wg  sync.WaitGroup
}

// Listen binds a server's UDP socket at addr and, with tcp, a TCP listener
// on the same port. When addr asks for any free port (0), the UDP port the
// kernel picks may be taken on TCP, so it tries up to 20 ports.
func Listen(addr *net.UDPAddr, tcp bool) (*Server, error) {
	tries := 1
	if addr.Port == 0 {
		tries = 20
	}
	var lastErr error
	for range tries {
		udp, err := net.ListenUDP("udp", addr)
		if err != nil {
			return nil, err // a *net.OpError: "listen udp ADDR: ..."
		}
		if !tcp {
			return &Server{udp: udp}, nil
		}
		l, err := net.Listen("tcp", udp.LocalAddr().String())
		if err == nil {
			return &Server{udp: udp, tcp: l}, nil
		}
		udp.Close()
		lastErr = err
	}
	return nil, lastErr
}

// Addr is the address the server is bound to (UDP, and TCP if any).
func (s *Server) Addr() netip.AddrPort { return s.udp.LocalAddr().(*net.UDPAddr).AddrPort() }

// Start serves in the background until Shutdown.
func (s *Server) Start() {
	if s.tcp != nil && s.RCON != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.RCON.Serve(s.tcp); err != nil && !errors.Is(err, rcon.ErrServerClosed) {
				s.logf("rcon: %v", err)
			}
		}()
	}
	var w a2s.PacketWriter = s.udp
	if s.WrapWriter != nil {
		w = s.WrapWriter(w)
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.serveUDP(w)
	}()
}

// serveUDP reads datagrams until the socket closes.
func (s *Server) serveUDP(w a2s.PacketWriter) {
	buf := make([]byte, 64*1024)
	for {
		n, from, err := s.udp.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // a transient error such as ICMP feedback
		}
		s.Mux.HandlePacket(w, from, buf[:n])
	}
}

// Shutdown stops serving, or releases the sockets of a server never
// started: UDP at once, RCON after its open sessions end or ctx expires.
func (s *Server) Shutdown(ctx context.Context) error {
	s.udp.Close()
	var err error
	if s.RCON != nil && s.tcp != nil {
		err = s.RCON.Shutdown(ctx)
	}
	if s.tcp != nil {
		s.tcp.Close() // Shutdown closed it if it was served; a second close is harmless
	}
	s.wg.Wait()
	return err
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}
