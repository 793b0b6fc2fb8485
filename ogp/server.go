package ogp

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
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

// Handler answers Default Queries. ServeOGP returns everything the server
// supports: the sections in Request and, per section, the fields in its
// mask. The [Server] keeps only what the query asked for, so a handler may
// ignore q. Returning a [*ServerError] makes the server answer with that
// error code; any other error drops the query without an answer.
//
// ServeOGP runs on the server's read loop: it should be quick.
type Handler interface {
	ServeOGP(from netip.AddrPort, q *Query) (*Answer, error)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(from netip.AddrPort, q *Query) (*Answer, error)

// ServeOGP calls f.
func (f HandlerFunc) ServeOGP(from netip.AddrPort, q *Query) (*Answer, error) { return f(from, q) }

// PacketWriter sends a datagram; *net.UDPConn is one.
type PacketWriter interface {
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// Server defaults, used when the corresponding Server field is zero.
const (
	// DefaultServerAddr is where ListenAndServe listens: all interfaces,
	// port 27015. OGP has no registered port; games chose their own
	// (Onset: the game port - 1, the Warband WSE plugin: 22222).
	DefaultServerAddr        = ":27015"
	DefaultRateLimit         = 50 // requests per second per source address
	DefaultRateSources       = 1 << 16
	DefaultChallengeLifetime = time.Hour
)

// readBufferSize holds the largest UDP datagram.
const readBufferSize = 65535

// Amplification limit (see the package doc): before a request proves its
// challenge, the answer is at most the request plus replySlack bytes and
// at most replyFactor times the request.
const (
	replySlack  = 32
	replyFactor = 3
)

// replyLimit is the largest answer to an unproven request of n bytes.
func replyLimit(n int) int { return min(n+replySlack, replyFactor*n) }

// Server answers OGP queries. Set Handler and call [Server.ListenAndServe]
// or [Server.Serve], or feed datagrams to [Server.HandlePacket] from a
// socket shared with other protocols (see [Is]). The zero value needs only
// a Handler.
//
// The server follows the specification's challenge flow: a Default Query
// whose challenge is missing or wrong gets error 3, whose Data is the
// copy of the request holding the new challenge; sending that copy back
// gets the answer. Ping needs no challenge. The challenge is a keyed hash
// of the source address and a time period, so the server keeps no state
// per client. Until a request proves its challenge, no answer is larger
// than the request plus 32 bytes, nor more than three times the request
// (QUIC's anti-amplification limit, RFC 9000 section 8), and error 3 fits
// that bound by construction. Each source address is rate limited.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on; empty means
	// DefaultServerAddr (":27015", all interfaces).
	Addr string
	// Handler answers Default Queries; nil answers every one with error 4.
	Handler Handler
	// Dialect is the wire layout; V091 by default.
	Dialect Dialect
	// NoChallenge turns the challenge off: every query is answered. It
	// turns the amplification protection off too.
	NoChallenge bool
	// ChallengeSecret keys the challenge hash. If empty, a random key is
	// made on first use. Servers sharing it accept each other's
	// challenges.
	ChallengeSecret []byte
	// ChallengeLifetime is the challenge period: a challenge stays valid
	// for at least this long and at most twice as long. Zero means
	// DefaultChallengeLifetime.
	ChallengeLifetime time.Duration
	// RateLimit is how many requests per second one source address may
	// send (an IPv6 /64 counts as one address); zero means
	// DefaultRateLimit and a negative value turns the limit off.
	RateLimit float64
	// RateBurst is the token-bucket size: zero means twice RateLimit, at
	// least 1.
	RateBurst int
	// RateSources bounds the rate limiter's table (zero means
	// DefaultRateSources); beyond it the oldest half is forgotten. A
	// source is an IPv4 address or an IPv6 /64.
	RateSources int
	// Banned, if set, reports banned client addresses; they get error 0
	// (or nothing, with IgnoreBanned).
	Banned       func(netip.Addr) bool
	IgnoreBanned bool
	// Logf, if set, receives a line per dropped or failed request. The
	// lines are rate-limited, since a peer can trigger them at will.
	Logf func(format string, args ...any)

	initOnce  sync.Once
	key       [32]byte
	period    int64 // ChallengeLifetime in nanoseconds
	rotations atomic.Int64
	limiter   *udpserve.RateLimiter
	log       ratelog.Limiter
	nextID    atomic.Uint32

	socks udpserve.Sockets
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		if len(s.ChallengeSecret) > 0 {
			s.key = sha256.Sum256(s.ChallengeSecret)
		} else {
			_, _ = rand.Read(s.key[:]) // never fails on supported platforms
		}
		s.period = int64(cmp.Or(max(s.ChallengeLifetime, 0), DefaultChallengeLifetime))
		if s.RateLimit >= 0 {
			rate := cmp.Or(s.RateLimit, DefaultRateLimit)
			burst := cmp.Or(float64(max(s.RateBurst, 0)), max(2*rate, 1))
			s.limiter = udpserve.NewRateLimiter(rate, burst, cmp.Or(max(s.RateSources, 0), DefaultRateSources))
		}
		s.log.Logf = s.Logf
	})
}

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, DefaultServerAddr)
	switch {
	case errors.Is(err, udpserve.ErrShutdown):
		return ErrServerClosed
	case err != nil:
		return fmt.Errorf("ogp: %w", err)
	}
	return s.Serve(pc)
}

// LocalAddr returns the address of the socket the server serves on (the
// first one still open, if Serve was called several times), or nil before
// Serve and after Shutdown. With ListenAndServe it is set once the server
// listens, so a caller that asked for port 0 learns the port.
func (s *Server) LocalAddr() net.Addr { return s.socks.LocalAddr() }

// Serve reads datagrams from pc and answers them until Shutdown, which
// closes pc; then it returns ErrServerClosed. It also returns when pc is
// closed otherwise, or fails to read 16 times in a row.
func (s *Server) Serve(pc net.PacketConn) error {
	s.init()
	w := udpserve.WriterOf(pc)
	return s.socks.Serve(pc, readBufferSize, ErrServerClosed, func(from netip.AddrPort, b []byte) {
		if from.IsValid() && Is(b) {
			s.HandlePacket(w, from, b)
		}
	})
}

// Shutdown closes every socket Serve reads from and waits for the serve
// loops to return, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.socks.Shutdown(ctx) }

// RotateChallenge starts a new challenge period now. Challenges issued in
// the period before stay valid until the next rotation; those issued
// earlier stop being valid.
func (s *Server) RotateChallenge() {
	s.init()
	s.rotations.Add(1)
}

// challenge returns the current challenge for ip and whether got is
// valid: the challenge of the current or the previous period.
func (s *Server) challenge(ip netip.Addr, got uint32) (current uint32, valid bool) {
	p := time.Now().UnixNano()/s.period + s.rotations.Load()
	current = s.challengeAt(ip, p)
	return current, got == current || got == s.challengeAt(ip, p-1)
}

// challengeAt is the challenge of ip in period p: a hash of the key, p
// and the address, never 0 (which asks for a challenge).
func (s *Server) challengeAt(ip netip.Addr, p int64) uint32 {
	var in [32 + 8 + 16]byte
	copy(in[:32], s.key[:])
	binary.LittleEndian.PutUint64(in[32:], uint64(p))
	a := ip.As16()
	copy(in[40:], a[:])
	sum := sha256.Sum256(in[:])
	if v := binary.LittleEndian.Uint32(sum[:]); v != 0 {
		return v
	}
	return 1
}

// HandlePacket answers one datagram b from from, writing any answer to
// w. It ignores what is not an OGP query. It is safe for concurrent use.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	s.init()
	h, body, err := ParseHeader(b)
	if err != nil || h.Flags&FlagAnswer != 0 || h.Type == TypeError || h.Type == TypeMasterUplink {
		return
	}
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	ip := from.Addr()
	if s.limiter != nil && !s.limiter.Allow(ip, time.Now().UnixNano()) {
		s.log.Printf("rate", "ogp: rate limit: dropped a request from %v", ip)
		return
	}
	x := exchange{s: s, w: w, to: from, req: h, raw: b, proven: s.NoChallenge}
	if h.Flags&FlagChallenge != 0 || !s.NoChallenge && h.Type == TypeDefault {
		var valid bool
		x.current, valid = s.challenge(ip, h.Challenge)
		x.proven = x.proven || valid && h.Flags&FlagChallenge != 0
	}
	if s.Banned != nil && s.Banned(ip) {
		if !s.IgnoreBanned {
			x.sendError(ErrorBanned)
		}
		return
	}
	if h.Flags&FlagSplit != 0 && !s.validPacketSize(h.MaxBytesPerPacket) {
		x.sendError(ErrorInvalidValue)
		return
	}
	switch h.Type {
	case TypePing:
		x.send(x.answerHeader(), nil)
	case TypeDefault:
		q, err := ParseQuery(body, s.Dialect)
		switch {
		case err != nil:
			x.sendError(ErrorInvalidQuery)
		case !x.proven:
			x.sendChallenge()
		default:
			s.serveQuery(&x, &q)
		}
	default:
		x.sendError(ErrorInvalidType)
	}
}

func (s *Server) validPacketSize(n uint16) bool {
	if s.Dialect == V1 {
		return n >= MinPacketSize
	}
	return n >= MinPacketSize && n <= MaxPacketSize
}

func (s *Server) serveQuery(x *exchange, q *Query) {
	if s.Handler == nil {
		x.sendError(ErrorInvalidQuery)
		return
	}
	a, err := s.Handler.ServeOGP(x.to, q)
	var se *ServerError
	switch {
	case errors.As(err, &se):
		x.sendError(se.Code)
		return
	case err != nil:
		s.log.Printf("handler", "ogp: handler: %v", err)
		return
	case a == nil:
		return
	}
	out := a.filter(q, s.Dialect)
	e := encoder{d: s.Dialect, latin1: s.Dialect == V1 && x.req.Flags&FlagUTF8 == 0}
	out.encode(&e)
	body, err := e.result()
	if err != nil {
		s.log.Printf("encode", "ogp: encode answer: %v", err)
		return
	}
	x.send(x.answerHeader(), body)
}

// filter returns a copy of a holding only what q asks for.
func (a *Answer) filter(q *Query, d Dialect) Answer {
	out := *a
	out.Request = a.Request & q.Request & RequestAll
	out.Info.Fields &= q.Info & InfoAll
	if d == V1 {
		out.Info.ModFields &= q.Mod & ModAll
		out.Info.MapFields &= q.Map & MapAll
	}
	out.Teams.Fields &= q.Team & TeamAll
	out.Players.Fields &= q.Player & PlayerAll
	out.AddOns.Fields &= q.AddOn & AddOnAll
	return out
}

// exchange is the answering of one request.
type exchange struct {
	s       *Server
	w       PacketWriter
	to      netip.AddrPort
	req     Header
	raw     []byte // the request datagram
	current uint32 // the current challenge for this address
	proven  bool   // the request carried a valid challenge (or none is needed)
}

// answerHeader mirrors the request's challenge, request id and (V1)
// UTF-8 flags; the challenge value is the current one.
func (x *exchange) answerHeader() Header {
	h := Header{Type: x.req.Type, Flags: FlagAnswer | x.req.Flags&(FlagChallenge|FlagRequestID),
		Challenge: x.current, RequestID: x.req.RequestID}
	if x.s.Dialect == V1 {
		h.Flags |= x.req.Flags & FlagUTF8
	}
	return h
}

func (x *exchange) sendError(code ErrorCode) {
	h := x.answerHeader()
	h.Type = TypeError
	h.Flags &^= FlagChallenge
	x.send(h, []byte{byte(code)})
}

// sendChallenge answers error 3: the header holds the new challenge, and
// the Data is the copy of the request holding it.
func (x *exchange) sendChallenge() {
	h := x.answerHeader()
	h.Type = TypeError
	h.Flags |= FlagChallenge
	b := make([]byte, 1, 1+len(x.raw)+4)
	b[0] = byte(ErrorInvalidChallenge)
	b, err := appendRequestCopy(b, x.raw, x.current)
	if err != nil {
		x.s.log.Printf("copy", "ogp: no request copy for %v: %v", x.to, err)
		return
	}
	x.send(h, b)
}

// send writes the answer, split to the client's MaxBytesPerPacket (or
// DefaultPacketSize). Before the challenge is proven the answer goes out
// only when it fits the amplification limit, in one datagram.
func (x *exchange) send(h Header, body []byte) {
	max := DefaultPacketSize
	if x.req.Flags&FlagSplit != 0 {
		max = int(x.req.MaxBytesPerPacket)
	}
	if size := h.Len() + len(body); !x.proven && (size > replyLimit(len(x.raw)) || size > max) {
		x.s.log.Printf("amplification", "ogp: no %d-byte answer to an unproven %d-byte %v request from %v",
			size, len(x.raw), x.req.Type, x.to)
		return
	}
	if h.Len()+len(body) > max && (h.Flags&FlagRequestID == 0 || h.RequestID == 0) {
		h.Flags |= FlagRequestID
		if h.RequestID = x.s.nextID.Add(1); h.RequestID == 0 {
			h.RequestID = x.s.nextID.Add(1)
		}
	}
	_, err := appendFragments(nil, h, body, max, func(p []byte) {
		if _, err := x.w.WriteToUDPAddrPort(p, x.to); err != nil {
			x.s.log.Printf("write", "ogp: write to %v: %v", x.to, err)
		}
	})
	if err != nil {
		x.s.log.Printf("split", "ogp: answer to %v: %v", x.to, err)
	}
}
