package mcquery

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
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
	DefaultServerAddr        = ":25565"
	DefaultChallengeLifetime = 30 * time.Second
	DefaultRateLimit         = 25 // requests per second per source
)

// serverReadBufferSize bounds a request; the vanilla server reads 1460
// bytes.
const serverReadBufferSize = 1460

// Handler answers the stat requests whose token is proven. ServeQuery
// runs on the server's read loop: it should be quick and must not retain
// w or r.
type Handler interface {
	ServeQuery(w ResponseWriter, r *Request)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(w ResponseWriter, r *Request)

// ServeQuery calls f(w, r).
func (f HandlerFunc) ServeQuery(w ResponseWriter, r *Request) { f(w, r) }

// ResponseWriter sends replies to the source of a request.
type ResponseWriter interface {
	RemoteAddr() netip.AddrPort
	// Write sends b, a whole reply, as one datagram.
	Write(b []byte) error
}

// PacketWriter sends datagrams. *net.UDPConn satisfies it.
type PacketWriter = udpserve.Writer

// StaticHandler answers from one full stat, encoded once per Set; the
// basic stat is its [FullStat.Basic]. It is safe for concurrent use.
type StaticHandler struct {
	snap atomic.Pointer[staticReplies]
}

type staticReplies struct{ basic, full []byte }

// NewStaticHandler returns a handler answering with s.
func NewStaticHandler(s *FullStat) (*StaticHandler, error) {
	h := new(StaticHandler)
	return h, h.Set(s)
}

// Set replaces the content. The handler does not retain s.
func (h *StaticHandler) Set(s *FullStat) error {
	full, err := s.AppendReply(nil, 0)
	if err != nil {
		return err
	}
	basic, err := s.Basic().AppendReply(nil, 0)
	if err != nil {
		return err
	}
	h.snap.Store(&staticReplies{basic: basic, full: full})
	return nil
}

// ServeQuery writes the cached reply with r's session id.
func (h *StaticHandler) ServeQuery(w ResponseWriter, r *Request) {
	s := h.snap.Load()
	if s == nil {
		return
	}
	b := s.basic
	if r.Full {
		b = s.full
	}
	out := make([]byte, len(b))
	copy(out, b)
	binary.BigEndian.PutUint32(out[1:], r.SessionID)
	_ = w.Write(out)
}

// Server answers Query as the vanilla server does (the decompiled
// QueryThreadGs4): a handshake gets a token, a stat request with a valid
// token the basic or the full stat (full when the datagram is exactly 15
// bytes), and one with a bad or stale token nothing at all. The zero value
// needs only a Handler.
//
// Tokens are a stateless HMAC of the source address and port and a time
// bucket of ChallengeLifetime (the current and the previous bucket are
// accepted), where the vanilla server keeps a table. Before a token is
// proven the only reply is the handshake's, at most 17 bytes to a 7-byte
// request: never more than the request plus 32 bytes nor three times it.
// Requests are rate-limited per source (an IPv4 address or an IPv6 /64).
type Server struct {
	// Addr is the UDP address ListenAndServe listens on (default
	// ":25565").
	Addr    string
	Handler Handler
	// ChallengeSecret keys the token HMAC; random when empty.
	ChallengeSecret []byte
	// ChallengeLifetime is how long a token stays valid at least (default
	// 30s); at most twice as long.
	ChallengeLifetime time.Duration
	// SignedTokens makes tokens use all 32 bits, so that half are
	// negative, as PocketMine and Nukkit send them; by default they are
	// below 2^24, as the vanilla server's.
	SignedTokens bool
	// RateLimit is the requests per second accepted from one source
	// (default 25); negative disables it. RateBurst is the bucket's size
	// (default 2×RateLimit); RateSources bounds the table (default 65536).
	RateLimit   float64
	RateBurst   int
	RateSources int
	// Debug, if set, sees every datagram received ("recv") and sent
	// ("send"). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
	// Logf, if set, receives failed writes, 5 lines per 10 seconds at
	// most.
	Logf func(format string, args ...any)

	initOnce sync.Once
	key      []byte
	window   int64
	limiter  *udpserve.RateLimiter
	states   sync.Pool
	log      ratelog.Limiter
	socks    udpserve.Sockets
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.key = s.ChallengeSecret
		if len(s.key) == 0 {
			s.key = make([]byte, 32)
			_, _ = rand.Read(s.key)
		}
		w := s.ChallengeLifetime
		if w <= 0 {
			w = DefaultChallengeLifetime
		}
		s.window = int64(w)
		s.log.Logf = s.Logf
		s.limiter = udpserve.LimiterOf(s.RateLimit, s.RateBurst, s.RateSources, DefaultRateLimit)
		s.states.New = func() any { return &serverState{mac: hmac.New(sha256.New, s.key)} }
	})
}

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, DefaultServerAddr)
	switch {
	case errors.Is(err, udpserve.ErrShutdown):
		return ErrServerClosed
	case err != nil:
		return fmt.Errorf("mcquery: %w", err)
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

// serverState is the scratch space of one request.
type serverState struct {
	mac     hash.Hash
	scratch [64]byte
	sum     []byte
	out     []byte
	rw      responseWriter
	req     Request
}

// HandlePacket answers one datagram b from from, writing to w. It is safe
// for concurrent use and does not retain b.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	s.init()
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	now := time.Now().UnixNano()
	if s.limiter != nil && !s.limiter.Allow(from.Addr(), now) {
		return
	}
	req, err := ParseRequest(b)
	if err != nil {
		return
	}
	if s.Debug != nil {
		s.Debug("recv", from, b)
	}
	st := s.states.Get().(*serverState)
	defer s.states.Put(st)
	bucket := now / s.window
	switch req.Type {
	case TypeHandshake:
		st.out = AppendHandshakeReply(st.out[:0], req.SessionID, s.token(st, from, bucket))
		if len(st.out) <= min(3*len(b), len(b)+32) {
			s.write(w, st.out, from)
		}
	case TypeStat:
		if req.Token != s.token(st, from, bucket) && req.Token != s.token(st, from, bucket-1) {
			return // a bad or stale token: no reply, as the vanilla server
		}
		if s.Handler == nil {
			return
		}
		st.req = req
		st.rw = responseWriter{s: s, w: w, to: from}
		s.Handler.ServeQuery(&st.rw, &st.req)
		st.rw.w = nil
	}
}

// token is the token of addr for a time bucket.
func (s *Server) token(st *serverState, addr netip.AddrPort, bucket int64) int32 {
	b := binary.BigEndian.AppendUint64(st.scratch[:0], uint64(bucket))
	a := addr.Addr().As16()
	b = append(b, a[:]...)
	b = binary.BigEndian.AppendUint16(b, addr.Port())
	st.mac.Reset()
	st.mac.Write(b)
	st.sum = st.mac.Sum(st.sum[:0])
	t := binary.BigEndian.Uint32(st.sum)
	if !s.SignedTokens {
		t &= 1<<24 - 1
	}
	return int32(t)
}

func (s *Server) write(w PacketWriter, b []byte, to netip.AddrPort) error {
	if s.Debug != nil {
		s.Debug("send", to, b)
	}
	_, err := w.WriteToUDPAddrPort(b, to)
	if err != nil {
		s.log.Printf("write", "mcquery: write to %s: %v", to, err)
	}
	return err
}

type responseWriter struct {
	s  *Server
	w  PacketWriter
	to netip.AddrPort
}

func (rw *responseWriter) RemoteAddr() netip.AddrPort { return rw.to }

func (rw *responseWriter) Write(b []byte) error {
	if rw.w == nil {
		return errors.New("mcquery: ResponseWriter used after ServeQuery returned")
	}
	return rw.s.write(rw.w, b, rw.to)
}
