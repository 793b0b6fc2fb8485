package satisfactory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/udpserve"
)

// Server defaults, for the fields left zero: 5 replies a second to one
// source (in bursts of 10), 500 a second in all, 512 bytes a reply.
const (
	DefaultRateLimit    = 5
	DefaultGlobalLimit  = 500
	DefaultMaxReplySize = 512
)

// Handler gives the state a server answers a poll with: the Server sets
// its Cookie to the poll's. A nil state answers nothing. ServeState runs
// on the server's read loop: it should be quick, and the state it
// returns must not change while the Server writes it.
type Handler interface {
	ServeState(from netip.AddrPort) *ServerState
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(from netip.AddrPort) *ServerState

// ServeState calls f(from).
func (f HandlerFunc) ServeState(from netip.AddrPort) *ServerState { return f(from) }

// PacketWriter sends datagrams. *net.UDPConn satisfies it.
type PacketWriter = udpserve.Writer

// Server answers Lightweight Query polls with the state its Handler
// gives. The zero value needs only a Handler.
//
// The protocol has no challenge, so the server keeps what it reflects
// bounded: it answers only a well-formed poll (13 bytes, magic, type,
// version, terminator), a reply is never larger than MaxReplySize (a
// state that would make it larger is not sent), and replies are budgeted
// per source (RateLimit a second, an IPv4 address or an IPv6 /64) and in
// all (GlobalLimit a second). A 13-byte poll earns at most MaxReplySize
// bytes, and an address at most RateBurst of them at once.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on (default
	// ":7777").
	Addr    string
	Handler Handler
	// MaxReplySize caps a reply (default DefaultMaxReplySize).
	MaxReplySize int
	// RateLimit is the replies per second sent to one source (default
	// 5); negative disables it. RateBurst is its bucket (default twice
	// the rate). RateSources bounds the table (default 65536).
	RateLimit   float64
	RateBurst   int
	RateSources int
	// GlobalLimit is the replies per second sent in all (default 500),
	// in bursts of as many; negative disables it.
	GlobalLimit float64
	// Debug, if set, sees every datagram received ("recv") and sent
	// ("send"). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
	// Logf, if set, receives failed writes and oversized states, 5 lines
	// per 10 seconds at most.
	Logf func(format string, args ...any)

	initOnce sync.Once
	budget   *udpserve.Budget
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
		s.budget = udpserve.NewBudget(s.RateLimit, s.RateBurst, s.RateSources, DefaultRateLimit, 0, s.GlobalLimit, DefaultGlobalLimit)
		s.bufs.New = func() any {
			b := make([]byte, 0, DefaultMaxReplySize)
			return &b
		}
	})
}

func (s *Server) maxReply() int { return cmp.Or(max(s.MaxReplySize, 0), DefaultMaxReplySize) }

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, ":"+strconv.Itoa(DefaultPort))
	switch {
	case errors.Is(err, udpserve.ErrShutdown):
		return ErrServerClosed
	case err != nil:
		return fmt.Errorf("satisfactory: %w", err)
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
	return s.socks.Serve(pc, 64, ErrServerClosed, func(from netip.AddrPort, b []byte) { s.HandlePacket(w, from, b) })
}

// Shutdown closes the sockets and waits for their loops, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.socks.Shutdown(ctx) }

// HandlePacket answers one datagram b from from, writing to w. It is safe
// for concurrent use and does not retain b.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	s.init()
	poll, err := ParsePoll(b)
	if err != nil || s.Handler == nil {
		return
	}
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	if s.Debug != nil {
		s.Debug("recv", from, b)
	}
	if !s.budget.Allow(from.Addr(), s.clock()) {
		return
	}
	st := s.Handler.ServeState(from)
	if st == nil {
		return
	}
	if n := st.Len(); n > s.maxReply() {
		s.log.Printf("size", "satisfactory: a %d-byte state does not fit MaxReplySize %d: not sent", n, s.maxReply())
		return
	}
	reply := *st
	reply.Cookie = poll.Cookie
	buf := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(buf)
	out, err := reply.AppendBinary((*buf)[:0])
	*buf = out
	if err != nil {
		s.log.Printf("size", "satisfactory: state not sent: %v", err)
		return
	}
	if s.Debug != nil {
		s.Debug("send", from, out)
	}
	if _, err := w.WriteToUDPAddrPort(out, from); err != nil {
		s.log.Printf("write", "satisfactory: write to %v: %v", from, err)
	}
}
