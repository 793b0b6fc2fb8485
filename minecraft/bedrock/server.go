package bedrock

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/udpserve"
)

// Server defaults, for the fields left zero.
const (
	DefaultServerAddr  = ":19132"
	DefaultRateLimit   = 5   // pongs per second per source
	DefaultGlobalLimit = 500 // pongs per second in all
	// DefaultMaxPongSize caps a pong: 512 bytes, room for a status of 477
	// bytes, more than BDS sends.
	DefaultMaxPongSize = 512
)

// serverReadBufferSize bounds a datagram read; pings are 33 bytes.
const serverReadBufferSize = 1500

// Handler gives the status a ping is answered with. ServePing runs on the
// server's read loop: it should be quick. A nil Status is not answered.
type Handler interface {
	ServePing(from netip.AddrPort, p *Ping) *Status
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(from netip.AddrPort, p *Ping) *Status

// ServePing calls f(from, p).
func (f HandlerFunc) ServePing(from netip.AddrPort, p *Ping) *Status { return f(from, p) }

// StaticHandler answers every ping with one status. It is safe for
// concurrent use.
type StaticHandler struct{ st atomic.Pointer[Status] }

// NewStaticHandler returns a handler answering with s.
func NewStaticHandler(s *Status) *StaticHandler {
	h := new(StaticHandler)
	h.Set(s)
	return h
}

// Set replaces the status.
func (h *StaticHandler) Set(s *Status) { h.st.Store(s) }

// ServePing returns the status.
func (h *StaticHandler) ServePing(netip.AddrPort, *Ping) *Status { return h.st.Load() }

// PacketWriter sends datagrams. *net.UDPConn satisfies it.
type PacketWriter = udpserve.Writer

// Server answers unconnected pings as a Bedrock server does. The zero
// value needs only a Handler.
//
// A pong needs no challenge, so a spoofed ping would make the server
// reflect a pong several times its size at the address it names. The
// server keeps that bounded three ways: it answers only a well-formed
// ping (33 bytes or more, RakNet's magic), so it never answers what is
// not one; a pong is never larger than MaxPongSize (a status that would
// make it larger is not sent), so one 33-byte ping earns at most
// MaxPongSize bytes; and pongs are budgeted per source (RateLimit a
// second, an IPv4 address or an IPv6 /64) and in all (GlobalLimit a
// second), so what one address can be sent, and what the server sends in
// all, has a ceiling whatever the pings. Real clients send one ping and
// wait, far below either budget.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on (default
	// ":19132").
	Addr    string
	Handler Handler
	// ServerGUID is the GUID the pongs carry.
	ServerGUID int64
	// MaxPongSize caps a pong (default 512 bytes).
	MaxPongSize int
	// RateLimit is the pongs per second sent to one source (default 5);
	// negative disables it. RateBurst is its bucket (default 2×RateLimit).
	// RateSources bounds the table (default 65536).
	RateLimit   float64
	RateBurst   int
	RateSources int
	// GlobalLimit is the pongs per second sent in all (default 500), in
	// bursts of as many; negative disables it.
	GlobalLimit float64
	// Debug, if set, sees every datagram received ("recv") and sent
	// ("send"). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
	// Logf, if set, receives failed writes and oversized statuses, 5
	// lines per 10 seconds at most.
	Logf func(format string, args ...any)

	initOnce sync.Once
	limiter  *udpserve.RateLimiter
	global   *udpserve.RateLimiter
	log      ratelog.Limiter
	bufs     sync.Pool
	socks    udpserve.Sockets
	clock    func() int64 // UnixNano; time.Now's unless a test sets it
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.log.Logf = s.Logf
		if s.clock == nil {
			s.clock = func() int64 { return time.Now().UnixNano() }
		}
		s.limiter = udpserve.LimiterOf(s.RateLimit, s.RateBurst, s.RateSources, DefaultRateLimit)
		if s.GlobalLimit >= 0 {
			g := s.GlobalLimit
			if g == 0 {
				g = DefaultGlobalLimit
			}
			s.global = udpserve.NewRateLimiter(g, g, 1)
		}
		s.bufs.New = func() any { return &scratch{status: make([]byte, 0, 256), pong: make([]byte, 0, DefaultMaxPongSize)} }
	})
}

func (s *Server) maxPong() int {
	if s.MaxPongSize <= 0 {
		return DefaultMaxPongSize
	}
	return s.MaxPongSize
}

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, DefaultServerAddr)
	switch {
	case errors.Is(err, udpserve.ErrShutdown):
		return ErrServerClosed
	case err != nil:
		return fmt.Errorf("bedrock: %w", err)
	}
	return s.Serve(pc)
}

// LocalAddr returns the address the server serves on, or nil.
func (s *Server) LocalAddr() net.Addr { return s.socks.LocalAddr() }

// Serve answers the datagrams read from pc until Shutdown, which closes
// pc; then it returns ErrServerClosed.
func (s *Server) Serve(pc net.PacketConn) error {
	s.init()
	w := udpserve.WriterOf(pc)
	return s.socks.Serve(pc, serverReadBufferSize, ErrServerClosed, func(from netip.AddrPort, b []byte) { s.HandlePacket(w, from, b) })
}

// Shutdown closes the sockets and waits for their loops, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.socks.Shutdown(ctx) }

// scratch is the buffers of one pong.
type scratch struct{ status, pong []byte }

// unspecified is the one key of the global budget.
var unspecified = netip.IPv4Unspecified()

// HandlePacket answers one datagram b from from, writing to w. It is safe
// for concurrent use and does not retain b.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	s.init()
	ping, err := ParsePing(b)
	if err != nil || s.Handler == nil {
		return
	}
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	if s.Debug != nil {
		s.Debug("recv", from, b)
	}
	now := s.clock()
	if s.limiter != nil && !s.limiter.Allow(from.Addr(), now) || s.global != nil && !s.global.Allow(unspecified, now) {
		return
	}
	st := s.Handler.ServePing(from, &ping)
	if st == nil {
		return
	}
	sc := s.bufs.Get().(*scratch)
	defer s.bufs.Put(sc)
	status, err := st.AppendStatus(sc.status[:0])
	sc.status = status
	if err != nil {
		s.log.Printf("status", "bedrock: status not sent: %v", err)
		return
	}
	out, err := Pong{Time: ping.Time, ServerGUID: s.ServerGUID, Status: status}.AppendBinary(sc.pong[:0])
	if err != nil || len(out) > s.maxPong() {
		s.log.Printf("status", "bedrock: a %d-byte status does not fit MaxPongSize %d: not sent", len(status), s.maxPong())
		return
	}
	sc.pong = out
	if s.Debug != nil {
		s.Debug("send", from, out)
	}
	if _, err := w.WriteToUDPAddrPort(out, from); err != nil {
		s.log.Printf("write", "bedrock: write to %s: %v", from, err)
	}
}
