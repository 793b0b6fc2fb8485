package ogp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/maphash"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Handler answers Default Queries. ServeOGP returns everything the server
// supports: the sections in Request and, per section, the fields in its
// mask. The [Server] keeps only what the query asked for, so a handler may
// ignore q. Returning a [*ServerError] makes the server answer with that
// error code; any other error drops the query without an answer.
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

// Server defaults.
const (
	DefaultRateLimit         = 50 // packets per second per source address
	DefaultChallengeLifetime = time.Hour
	rateBuckets              = 4096
)

// Server answers OGP queries. Set Handler and call [Server.ListenAndServe]
// or [Server.Serve], or feed datagrams to [Server.HandlePacket] from a
// socket shared with other protocols (see [Is]).
//
// Safety defaults: Default Queries need a valid challenge (a per-address
// value derived from a rotating secret, so the server keeps no per-client
// state); until a request proves it, no answer is larger than the request
// (a Ping answer mirrors its request, and error 3 carries the new
// challenge in its header only, unless CopyRequest is set); each source
// address is rate limited.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on; empty means
	// "127.0.0.1:0".
	Addr string
	// Handler answers Default Queries; nil answers every one with error 4.
	Handler Handler
	// Dialect is the wire layout; V091 by default.
	Dialect Dialect
	// NoChallenge turns the challenge off: every query is answered.
	NoChallenge bool
	// CopyRequest makes error 3 answers carry the spec's copy of the
	// request, which makes them larger than the request they answer.
	CopyRequest bool
	// RateLimit is how many packets per second one source address may
	// send (bursts of twice that, at least one); zero means DefaultRateLimit and a
	// negative value turns the limit off.
	RateLimit float64
	// ChallengeLifetime is how often the challenge secret rotates (the
	// previous one stays valid); zero means DefaultChallengeLifetime.
	ChallengeLifetime time.Duration
	// Banned, if set, reports banned client addresses; they get error 0
	// (or nothing, with IgnoreBanned).
	Banned       func(netip.Addr) bool
	IgnoreBanned bool
	// Logf, if set, receives a line per dropped or failed packet.
	Logf func(format string, args ...any)

	mu       sync.Mutex
	keys     [2][32]byte // current and previous challenge secret
	keyTime  time.Time
	keyed    bool
	seed     maphash.Seed
	buckets  []bucket
	nextID   atomic.Uint32
	conns    map[net.PacketConn]struct{}
	wg       sync.WaitGroup
	shutdown atomic.Bool
}

type bucket struct {
	tokens float64
	last   time.Time
}

func (s *Server) logf(format string, args ...any) {
	if s.Logf != nil {
		s.Logf(format, args...)
	}
}

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	addr := s.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return err
	}
	return s.Serve(pc)
}

// Serve reads datagrams from pc and answers them until Shutdown, which
// closes pc. It returns ErrServerClosed after Shutdown.
func (s *Server) Serve(pc net.PacketConn) error {
	s.mu.Lock()
	if s.shutdown.Load() {
		s.mu.Unlock()
		pc.Close()
		return ErrServerClosed
	}
	if s.conns == nil {
		s.conns = make(map[net.PacketConn]struct{})
	}
	s.conns[pc] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()

	w, ok := pc.(PacketWriter)
	if !ok {
		w = packetConnWriter{pc}
	}
	buf := make([]byte, readBufferSize)
	for {
		n, from, err := readFrom(pc, buf)
		if err != nil {
			if s.shutdown.Load() {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		if !Is(buf[:n]) {
			continue
		}
		s.HandlePacket(w, from, buf[:n])
	}
}

// readFrom reads one datagram as a netip.AddrPort source.
func readFrom(pc net.PacketConn, buf []byte) (int, netip.AddrPort, error) {
	if uc, ok := pc.(*net.UDPConn); ok {
		return uc.ReadFromUDPAddrPort(buf)
	}
	n, a, err := pc.ReadFrom(buf)
	if err != nil {
		return n, netip.AddrPort{}, err
	}
	ua, ok := a.(*net.UDPAddr)
	if !ok {
		return 0, netip.AddrPort{}, nil
	}
	return n, ua.AddrPort(), nil
}

type packetConnWriter struct{ pc net.PacketConn }

func (w packetConnWriter) WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error) {
	return w.pc.WriteTo(b, net.UDPAddrFromAddrPort(addr))
}

// Shutdown closes every socket Serve reads from and waits for the serve
// loops to return, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.mu.Lock()
	for pc := range s.conns {
		pc.Close()
	}
	s.conns = nil
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RotateChallenge replaces the challenge secret now; challenges issued
// before the previous rotation stop being valid.
func (s *Server) RotateChallenge() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rotateLocked(time.Now())
}

func (s *Server) rotateLocked(now time.Time) {
	s.keys[1] = s.keys[0]
	rand.Read(s.keys[0][:])
	if !s.keyed {
		s.keys[1] = s.keys[0]
		s.keyed = true
	}
	s.keyTime = now
}

// challenge returns the current challenge for ip and whether got is
// valid (current or previous secret).
func (s *Server) challenge(ip netip.Addr, got uint32) (current uint32, valid bool) {
	s.mu.Lock()
	now := time.Now()
	life := s.ChallengeLifetime
	if life <= 0 {
		life = DefaultChallengeLifetime
	}
	if !s.keyed || now.Sub(s.keyTime) >= life {
		s.rotateLocked(now)
	}
	keys := s.keys
	s.mu.Unlock()
	current = challengeFor(&keys[0], ip)
	return current, got == current || got == challengeFor(&keys[1], ip)
}

func challengeFor(key *[32]byte, ip netip.Addr) uint32 {
	var in [48]byte
	copy(in[:32], key[:])
	a := ip.As16()
	copy(in[32:], a[:])
	sum := sha256.Sum256(in[:])
	if v := binary.LittleEndian.Uint32(sum[:]); v != 0 {
		return v
	}
	return 1
}

// allow applies the per-address token bucket.
func (s *Server) allow(ip netip.Addr) bool {
	rate := s.RateLimit
	if rate < 0 {
		return true
	}
	if rate == 0 {
		rate = DefaultRateLimit
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.buckets == nil {
		s.buckets = make([]bucket, rateBuckets)
		s.seed = maphash.MakeSeed()
	}
	a := ip.As16()
	b := &s.buckets[maphash.Bytes(s.seed, a[:])%rateBuckets]
	now := time.Now()
	burst := max(1, 2*rate)
	if b.last.IsZero() {
		b.tokens = burst
	} else {
		b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// HandlePacket answers one datagram b from from, writing any answer to
// w. It ignores what is not an OGP query.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	h, body, err := ParseHeader(b)
	if err != nil || h.Flags&FlagAnswer != 0 || h.Type == TypeError || h.Type == TypeMasterUplink {
		return
	}
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	ip := from.Addr()
	if !s.allow(ip) {
		s.logf("ogp: rate limit: dropped packet from %v", from)
		return
	}
	x := exchange{s: s, w: w, to: from, req: h, reqLen: len(b)}
	x.current, x.proven = s.challenge(ip, h.Challenge)
	x.proven = x.proven && h.Flags&FlagChallenge != 0 || s.NoChallenge
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
		if !x.proven {
			x.sendChallenge(body)
			return
		}
		q, err := ParseQuery(body, s.Dialect)
		if err != nil {
			x.sendError(ErrorInvalidQuery)
			return
		}
		s.serveQuery(&x, &q)
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
		s.logf("ogp: handler: %v", err)
		return
	case a == nil:
		return
	}
	out := a.filter(q, s.Dialect)
	e := encoder{d: s.Dialect, latin1: s.Dialect == V1 && x.req.Flags&FlagUTF8 == 0}
	out.encode(&e)
	body, err := e.result()
	if err != nil {
		s.logf("ogp: encode answer: %v", err)
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
	reqLen  int
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

// sendChallenge answers error 3 with the new challenge.
func (x *exchange) sendChallenge(body []byte) {
	h := x.answerHeader()
	h.Type = TypeError
	h.Flags |= FlagChallenge
	b := []byte{byte(ErrorInvalidChallenge)}
	if x.s.CopyRequest {
		c := x.req
		c.Flags |= FlagChallenge
		c.Challenge = x.current
		b, _ = c.AppendBinary(b)
		b = append(b, body...)
		x.proven = true // the operator allowed this amplification
	}
	x.send(h, b)
}

// send writes the answer, split to the client's MaxBytesPerPacket (or
// DefaultPacketSize). Before the challenge is proven nothing larger than
// the request goes out.
func (x *exchange) send(h Header, body []byte) {
	if !x.proven && h.Len()+len(body) > x.reqLen {
		x.s.logf("ogp: unproven %v request from %v too small to answer (%d bytes)", x.req.Type, x.to, x.reqLen)
		return
	}
	max := DefaultPacketSize
	if x.req.Flags&FlagSplit != 0 {
		max = int(x.req.MaxBytesPerPacket)
	}
	if h.Len()+len(body) > max && (h.Flags&FlagRequestID == 0 || h.RequestID == 0) {
		h.Flags |= FlagRequestID
		h.RequestID = x.s.nextID.Add(1)
	}
	_, err := appendFragments(nil, h, body, max, func(p []byte) {
		if _, err := x.w.WriteToUDPAddrPort(p, x.to); err != nil {
			x.s.logf("ogp: write to %v: %v", x.to, err)
		}
	})
	if err != nil {
		x.s.logf("ogp: answer to %v: %v", x.to, err)
	}
}
