package a2s

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

// DefaultPort is the conventional A2S query port: a Source server's game
// port, where it answers queries too.
const DefaultPort = 27015

// Server defaults, used when the corresponding Server field is zero.
const (
	DefaultServerAddr        = ":27015"
	DefaultChallengeLifetime = 30 * time.Second
	DefaultRateLimit         = 25 // requests per second per source IP
	DefaultRateSources       = 1 << 16
	sourceSplitHeaderLen     = 12
	goldSourceHeaderLen      = 9
)

// paddedInfoHeader is the length of an A2S_INFO request up to its padding:
// header, type, payload with its NUL, and the challenge's place.
const paddedInfoHeader = 5 + len(infoQuery) + 1 + 4

// serverReadBufferSize bounds a request. Requests are small; padded ones
// (Valve's 2020 proposal) stay under 1400 bytes. A longer datagram is
// truncated, which only makes the amplification check stricter.
const serverReadBufferSize = 4096

// Handler answers the A2S requests a Server has accepted: INFO ('T'),
// PLAYER ('U') and RULES ('V') requests whose challenge is proven (or
// every one when the server has NoChallenge). The server answers
// challenge ('W') and ping ('i') requests itself.
//
// ServeA2S runs on the server's read loop: it should be quick, must not
// retain w or r after returning, and may write any number of replies (none
// means the request is ignored, as SourceTV does for PLAYER).
type Handler interface {
	ServeA2S(w ResponseWriter, r *Request)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(w ResponseWriter, r *Request)

// ServeA2S calls f(w, r).
func (f HandlerFunc) ServeA2S(w ResponseWriter, r *Request) { f(w, r) }

// ResponseWriter sends replies to the source of a request.
type ResponseWriter interface {
	// RemoteAddr is the address the request came from.
	RemoteAddr() netip.AddrPort
	// Write sends a whole reply (starting with the 0xFFFFFFFF header), split
	// in the server's format when it does not fit one datagram.
	Write(payload []byte) error
	// WriteDatagram sends b as one datagram, unchanged: for handlers that
	// frame replies themselves (e.g. to emulate a quirky server).
	WriteDatagram(b []byte) error
}

// PacketWriter sends datagrams. *net.UDPConn satisfies it.
type PacketWriter interface {
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// Server answers A2S queries, so that a Go game server can be listed and
// queried like a Source one. The zero value needs only a Handler.
//
// By default the server challenges every query with a stateless HMAC of
// the source address and a time bucket of ChallengeLifetime (the current
// and the previous bucket are accepted), and until a request carries a
// valid challenge it never sends more bytes than the request had: it
// answers with an 'A' reply when that is no longer than the request, and
// not at all otherwise. Requests from one source are rate-limited with a
// token bucket; a source is an IPv4 address or an IPv6 /64 prefix, since
// one host commonly holds a whole /64.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on (default ":27015").
	Addr string
	// Handler answers accepted requests. See [StaticHandler].
	Handler Handler
	// NoChallenge answers INFO, PLAYER and RULES without a challenge, as
	// pre-2020 servers did. It turns off the amplification protection: use
	// it only to emulate old servers.
	NoChallenge bool
	// AcceptPaddedInfo answers an A2S_INFO request of at least
	// PaddedInfoSize bytes without a challenge, as Valve's 2020 proposal
	// allowed, when the whole reply is no larger than the request; a larger
	// reply is not sent, and the 'A' reply goes out instead. Real Source
	// servers insist on the challenge, so this is off by default.
	AcceptPaddedInfo bool
	// ChallengeSecret keys the challenge HMAC. If empty, a random key is
	// made on first use. Servers sharing it accept each other's challenges.
	ChallengeSecret []byte
	// ChallengeLifetime is how long a challenge stays valid at least
	// (default [DefaultChallengeLifetime]); it stays valid at most twice
	// as long.
	ChallengeLifetime time.Duration
	// RateLimit is the number of requests per second accepted from one
	// source (default 25); negative disables rate limiting.
	RateLimit float64
	// RateBurst is the token-bucket size (default 2*RateLimit, at least 1).
	RateBurst int
	// RateSources bounds the rate limiter's table (default 65536
	// sources); beyond it the oldest half is forgotten.
	RateSources int
	// SplitSize is the payload size of a split fragment: 1248 (default) or
	// 1188 for Source, 1391 (default) for GoldSource.
	SplitSize int
	// GoldSource splits replies in the GoldSource format.
	GoldSource bool
	// Logf, if set, receives the errors of sending replies. A peer can
	// cause them again and again (ICMP errors, a full socket buffer), so
	// they are limited to 5 lines per 10 seconds, the next line saying
	// how many were suppressed.
	Logf func(format string, args ...any)

	initOnce sync.Once
	key      []byte
	window   int64 // nanoseconds
	limiter  *udpserve.RateLimiter
	splitID  atomic.Uint32
	states   sync.Pool
	log      ratelog.Limiter

	socks udpserve.Sockets
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.key = s.ChallengeSecret
		if len(s.key) == 0 {
			s.key = make([]byte, 32)
			_, _ = rand.Read(s.key) // never fails on supported platforms
		}
		w := s.ChallengeLifetime
		if w <= 0 {
			w = DefaultChallengeLifetime
		}
		s.window = int64(w)
		s.log.Logf = s.Logf
		if s.RateLimit >= 0 {
			rate := s.RateLimit
			if rate == 0 {
				rate = DefaultRateLimit
			}
			burst := float64(s.RateBurst)
			if burst <= 0 {
				burst = max(2*rate, 1)
			}
			n := s.RateSources
			if n <= 0 {
				n = DefaultRateSources
			}
			s.limiter = udpserve.NewRateLimiter(rate, burst, n)
		}
		s.states.New = func() any { return s.newState() }
	})
}

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, DefaultServerAddr)
	switch {
	case errors.Is(err, udpserve.ErrShutdown):
		return ErrServerClosed
	case err != nil:
		return fmt.Errorf("a2s: %w", err)
	}
	return s.Serve(pc)
}

// LocalAddr returns the address of the socket the server serves on (the
// first one still open, if Serve was called several times), or nil before
// Serve and after Shutdown. With ListenAndServe it is set once the server
// listens, so a caller that asked for port 0 learns the port.
func (s *Server) LocalAddr() net.Addr { return s.socks.LocalAddr() }

// Serve answers the datagrams read from pc until Shutdown, which closes pc;
// then it returns ErrServerClosed. It also returns when pc is closed
// otherwise, or keeps failing to read.
func (s *Server) Serve(pc net.PacketConn) error {
	s.init()
	st := s.newState()
	w := udpserve.WriterOf(pc)
	return s.socks.Serve(pc, serverReadBufferSize, ErrServerClosed, func(from netip.AddrPort, b []byte) { s.handle(st, w, from, b) })
}

// Shutdown stops the server: it closes the sockets given to Serve and
// ListenAndServe and waits for their loops to end, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.socks.Shutdown(ctx) }

// HandlePacket answers one datagram b received from from, writing the
// replies to w. It lets one socket serve A2S beside other protocols (the
// caller demultiplexes by the bytes after 0xFFFFFFFF). It is safe for
// concurrent use and does not retain b.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	s.init()
	st := s.states.Get().(*serverState)
	s.handle(st, w, from, b)
	s.states.Put(st)
}

// serverState is the scratch space of one goroutine handling requests.
type serverState struct {
	mac     hash.Hash
	scratch [64]byte
	sum     []byte
	out     []byte
	rw      responseWriter
	req     Request
}

func (s *Server) newState() *serverState {
	st := &serverState{mac: hmac.New(sha256.New, s.key), out: make([]byte, 0, 64)}
	st.sum = make([]byte, 0, st.mac.Size())
	st.rw.s = s
	return st
}

// handle is HandlePacket with the goroutine's state.
func (s *Server) handle(st *serverState, w PacketWriter, from netip.AddrPort, b []byte) {
	if !hasHeader(b) {
		return
	}
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	now := time.Now().UnixNano()
	if s.limiter != nil && !s.limiter.Allow(from.Addr(), now) {
		return
	}
	req, err := ParseRequest(b)
	if err != nil {
		return
	}
	switch req.Type {
	case TypeChallengeRequestLegacy:
		s.sendChallenge(st, w, from, len(b), now)
		return
	case TypePingRequest:
		s.sendPing(st, w, from, len(b))
		return
	case TypeInfoRequest, TypePlayerRequest, TypeRulesRequest:
	default:
		return
	}
	budget := -1 // bytes the reply may take; -1 for no bound
	if !s.NoChallenge && (!req.HasChallenge || !s.validChallenge(st, from, req.Challenge, now)) {
		if !s.AcceptPaddedInfo || req.Type != TypeInfoRequest || len(b) < PaddedInfoSize {
			s.sendChallenge(st, w, from, len(b), now)
			return
		}
		// Clients that pad with zeros right after the payload send what
		// reads as challenge 0: the request has no challenge, and its
		// padding is what follows the challenge's place.
		req.Challenge, req.HasChallenge, req.Padding = 0, false, len(b)-paddedInfoHeader
		// Room is kept for the 'A' reply (9 bytes) that follows a reply
		// cut short, so the two together stay within the request.
		budget = len(b) - 9
	}
	if s.Handler == nil {
		return
	}
	st.req = req
	st.rw.w, st.rw.to, st.rw.budget, st.rw.overBudget = w, from, budget, false
	s.Handler.ServeA2S(&st.rw, &st.req)
	st.rw.w = nil
	if st.rw.overBudget {
		s.sendChallenge(st, w, from, len(b), now)
	}
}

// sendChallenge answers with an 'A' reply if it is no longer than the
// request (reqLen bytes).
func (s *Server) sendChallenge(st *serverState, w PacketWriter, to netip.AddrPort, reqLen int, now int64) {
	st.out = AppendChallenge(st.out[:0], s.challenge(st, to, now/s.window))
	if len(st.out) > reqLen && !s.NoChallenge {
		return
	}
	s.write(w, st.out, to)
}

// sourcePingPayload is SourcePingPayload as Text.
var sourcePingPayload = Text(SourcePingPayload)

// sendPing answers A2A_PING with the Source payload "00000000000000\0" when
// it fits the request (or without challenges), else with a bare 'j'.
func (s *Server) sendPing(st *serverState, w PacketWriter, to netip.AddrPort, reqLen int) {
	var p Ping
	if s.NoChallenge || reqLen >= 5+len(SourcePingPayload)+1 {
		p.Payload = sourcePingPayload
	}
	st.out, _ = p.AppendBinary(st.out[:0]) // a constant payload: no error
	if len(st.out) > reqLen && !s.NoChallenge {
		st.out = st.out[:5] // the bare 'j' still fits
	}
	s.write(w, st.out, to)
}

// challenge is the challenge of addr for a time bucket: the first four
// bytes of HMAC-SHA256(key, bucket || addr || port), never -1.
func (s *Server) challenge(st *serverState, addr netip.AddrPort, bucket int64) uint32 {
	b := binary.LittleEndian.AppendUint64(st.scratch[:0], uint64(bucket))
	a := addr.Addr().As16()
	b = append(b, a[:]...)
	b = binary.LittleEndian.AppendUint16(b, addr.Port())
	st.mac.Reset()
	st.mac.Write(b)
	st.sum = st.mac.Sum(st.sum[:0])
	c := binary.LittleEndian.Uint32(st.sum)
	if c == AskChallenge {
		c = 0
	}
	return c
}

// validChallenge accepts the challenge of the current or the previous bucket.
func (s *Server) validChallenge(st *serverState, addr netip.AddrPort, c uint32, now int64) bool {
	bucket := now / s.window
	return c == s.challenge(st, addr, bucket) || c == s.challenge(st, addr, bucket-1)
}

func (s *Server) write(w PacketWriter, b []byte, to netip.AddrPort) error {
	_, err := w.WriteToUDPAddrPort(b, to)
	if err != nil {
		s.log.Printf("write", "a2s: write to %s: %v", to, err)
	}
	return err
}

// splitWriter is the fragment writer of the server's format.
func (s *Server) splitWriter() (SplitWriter, int) {
	if s.GoldSource {
		size := s.SplitSize
		if size <= 0 {
			size = DefaultSplitSizeGold
		}
		return SplitWriter{Format: SplitGoldSource, Size: size}, size + goldSourceHeaderLen
	}
	size := s.SplitSize
	if size <= 0 {
		size = DefaultSplitSize
	}
	return SplitWriter{Format: SplitSource, Size: size}, size + sourceSplitHeaderLen
}

// nextSplitID returns a fresh split ID (bit 31, the compression flag, clear).
func (s *Server) nextSplitID() uint32 {
	return s.splitID.Add(1) & 0x7FFFFFFF
}

// responseWriter is the ResponseWriter of one request.
type responseWriter struct {
	s     *Server
	w     PacketWriter
	to    netip.AddrPort
	frags [][]byte
	// budget is the bytes the reply may still take, or -1 for no bound;
	// overBudget is set when a datagram was held back for it.
	budget     int
	overBudget bool
}

func (rw *responseWriter) RemoteAddr() netip.AddrPort { return rw.to }

func (rw *responseWriter) WriteDatagram(b []byte) error {
	if rw.w == nil {
		return errors.New("a2s: ResponseWriter used after ServeA2S returned")
	}
	if rw.budget >= 0 {
		if len(b) > rw.budget || rw.overBudget {
			rw.overBudget = true
			return fmt.Errorf("%w: a %d-byte reply to an unproven request of fewer bytes", ErrTooLarge, len(b))
		}
		rw.budget -= len(b)
	}
	return rw.s.write(rw.w, b, rw.to)
}

func (rw *responseWriter) Write(payload []byte) error {
	sw, limit := rw.s.splitWriter()
	if len(payload) <= limit {
		return rw.WriteDatagram(payload)
	}
	frags, err := sw.AppendFragments(rw.frags[:0], rw.s.nextSplitID(), payload)
	if err != nil {
		return err
	}
	rw.frags = frags[:0]
	for _, f := range frags {
		if err := rw.WriteDatagram(f); err != nil {
			return err
		}
	}
	return nil
}

// StaticHandler answers from fixed content, serialized once per Set: the
// reply bytes are cached until the content changes. A nil section is not
// answered. It is safe for concurrent use.
type StaticHandler struct {
	snap atomic.Pointer[staticSnapshot]
}

type staticSnapshot struct {
	version              uint64
	info, players, rules []byte
}

// NewStaticHandler returns a handler serving info, players and rules.
func NewStaticHandler(info *Info, players *Players, rules *Rules) (*StaticHandler, error) {
	h := new(StaticHandler)
	if err := h.Set(info, players, rules); err != nil {
		return nil, err
	}
	return h, nil
}

// Set replaces the content (serializing it now) and bumps Version. The
// handler does not retain the arguments.
func (h *StaticHandler) Set(info *Info, players *Players, rules *Rules) error {
	next := new(staticSnapshot)
	var err error
	if info != nil {
		if next.info, err = info.AppendBinary(nil); err != nil {
			return err
		}
	}
	if players != nil {
		if next.players, err = players.AppendBinary(nil); err != nil {
			return err
		}
	}
	if rules != nil {
		if next.rules, err = rules.AppendBinary(nil); err != nil {
			return err
		}
	}
	for {
		old := h.snap.Load()
		next.version = 1
		if old != nil {
			next.version = old.version + 1
		}
		if h.snap.CompareAndSwap(old, next) {
			return nil
		}
	}
}

// Version counts the calls to Set.
func (h *StaticHandler) Version() uint64 {
	if s := h.snap.Load(); s != nil {
		return s.version
	}
	return 0
}

// ServeA2S writes the cached reply for r.
func (h *StaticHandler) ServeA2S(w ResponseWriter, r *Request) {
	s := h.snap.Load()
	if s == nil {
		return
	}
	var b []byte
	switch r.Type {
	case TypeInfoRequest:
		b = s.info
	case TypePlayerRequest:
		b = s.players
	case TypeRulesRequest:
		b = s.rules
	}
	if b != nil {
		_ = w.Write(b)
	}
}
