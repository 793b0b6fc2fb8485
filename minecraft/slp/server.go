package slp

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/sourcekey"
)

// Server defaults, for the fields left zero.
const (
	DefaultServerAddr        = ":25565"
	DefaultMaxConns          = 512
	DefaultMaxConnsPerSource = 8
	DefaultConnTimeout       = 10 * time.Second
	DefaultMaxRequestSize    = 1024
	DefaultLegacyWait        = 100 * time.Millisecond
)

// Request is what a client asked for.
type Request struct {
	// RemoteAddr is the client's address: the source a PROXY header names
	// when the server expects one.
	RemoteAddr netip.AddrPort
	// Handshake is the modern handshake; for the 1.6 legacy ping, its
	// protocol, host and port.
	Handshake Handshake
	// Legacy is the legacy ping's variant; 0 for the modern protocol.
	Legacy LegacyVariant
}

// Reply is a server's answer to a status request or a legacy ping.
type Reply struct {
	// JSON is the status JSON (see [Status.AppendJSON]); nil closes the
	// connection after the handshake, as a server that does not answer
	// status does.
	JSON []byte
	// Trailer is sent raw after the JSON string, in the same packet: the
	// Better Compatibility Checker mod's second string.
	Trailer []byte
	// Legacy answers the legacy pings; nil closes their connection.
	Legacy *LegacyStatus
	// NoPong closes the connection after the status instead of answering
	// a ping, as Velocity and BungeeCord do.
	NoPong bool
}

// Handler answers status requests. ServeStatus runs on the connection's
// goroutine once the handshake (or legacy ping) is read; a nil Reply
// closes the connection at once, as the vanilla server does when status is
// off or it is still starting. It must be safe for concurrent use.
type Handler interface {
	ServeStatus(r *Request) *Reply
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(r *Request) *Reply

// ServeStatus calls f(r).
func (f HandlerFunc) ServeStatus(r *Request) *Reply { return f(r) }

// StaticHandler answers every request with one status, encoded once.
type StaticHandler struct{ reply Reply }

// NewStaticHandler returns a handler answering with s; the legacy pings
// get its version name, MOTD (flattened, § codes kept) and counts, with
// protocol 127 as every modern server gives them.
func NewStaticHandler(s *Status) (*StaticHandler, error) {
	json, err := s.AppendJSON(nil)
	if err != nil {
		return nil, err
	}
	h := &StaticHandler{reply: Reply{JSON: json}}
	proto := int32(ModernLegacyProtocol)
	ls := &LegacyStatus{Protocol: &proto, MOTD: s.Description.Legacy()}
	if s.Version != nil {
		ls.Version = s.Version.Name
	}
	if s.Players != nil {
		if s.Players.Online != nil {
			ls.Online = *s.Players.Online
		}
		if s.Players.Max != nil {
			ls.Max = *s.Players.Max
		}
	}
	h.reply.Legacy = ls
	return h, nil
}

// ServeStatus returns the status.
func (h *StaticHandler) ServeStatus(*Request) *Reply { return &h.reply }

// Server answers Server List Ping and the legacy pings over TCP, as a
// vanilla server does (wiki.vg, "Server List Ping"; the decompiled
// server's handshake, status and legacy handlers): one status per
// connection; a ping gets its pong and the connection is closed; any
// other packet, a second status request or a handshake for login closes
// it. The zero value needs only a Handler.
//
// It caps what a client may cost: MaxConns connections in all and
// MaxConnsPerSource from one source (an IPv4 address or an IPv6 /64),
// beyond which a new connection is closed at once; ConnTimeout for a
// connection's whole life; MaxRequestSize for a packet, checked against
// its length prefix before it is read.
type Server struct {
	// Addr is the TCP address ListenAndServe listens on (default
	// ":25565").
	Addr    string
	Handler Handler
	// MaxConns caps the connections open at once (default 512); negative
	// is no cap.
	MaxConns int
	// MaxConnsPerSource caps the connections from one source (default 8);
	// negative is no cap.
	MaxConnsPerSource int
	// ConnTimeout is the most a connection lives (default 10s): a status
	// exchange takes milliseconds.
	ConnTimeout time.Duration
	// MaxRequestSize bounds a client's packet (default 1024 bytes: a
	// handshake with a 255-character host fits).
	MaxRequestSize int
	// LegacyWait is how long a legacy ping of FE or FE 01 waits for the
	// rest of a longer form before it is answered as it is (default
	// 100ms; 1.4 to 1.6 servers wait a second).
	LegacyWait time.Duration
	// ProxyProtocol expects a PROXY protocol header (version 1 or 2)
	// first on every connection, as a server behind HAProxy does;
	// Request.RemoteAddr is then the source it names.
	ProxyProtocol bool
	// Debug, if set, sees every packet sent ("send") and received
	// ("recv"). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
	// Logf, if set, receives refused connections and failed writes,
	// 5 lines per 10 seconds at most.
	Logf func(format string, args ...any)

	initOnce sync.Once
	log      ratelog.Limiter

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	perSource map[netip.Addr]int
	shutdown  bool
	wg        sync.WaitGroup
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.log.Logf = s.Logf
		s.listeners = make(map[net.Listener]struct{})
		s.conns = make(map[net.Conn]struct{})
		s.perSource = make(map[netip.Addr]int)
	})
}

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	s.init()
	s.mu.Lock()
	down := s.shutdown
	s.mu.Unlock()
	if down {
		return ErrServerClosed
	}
	addr := s.Addr
	if addr == "" {
		addr = DefaultServerAddr
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return detail(errors.New("slp: listen"), "%v", err)
	}
	return s.Serve(l)
}

// LocalAddr is the address of a listener being served, or nil.
func (s *Server) LocalAddr() net.Addr {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	for l := range s.listeners {
		return l.Addr()
	}
	return nil
}

// Serve accepts connections on l until Shutdown, which closes it; then
// it returns ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	s.init()
	s.mu.Lock()
	if s.shutdown {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.listeners[l] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, l)
		s.mu.Unlock()
	}()
	backoff := time.Duration(0)
	for {
		c, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			down := s.shutdown
			s.mu.Unlock()
			if down {
				return ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of descriptors, a connection reset before accept: wait
			// it out, as net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			s.log.Printf("accept", "slp: accept: %v; retrying in %v", err, backoff)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		if !s.admit(c) {
			c.Close()
			continue
		}
		go s.serveConn(c)
	}
}

// admit counts c against the caps, and reports whether it is within them.
func (s *Server) admit(c net.Conn) bool {
	src := sourcekey.Of(addrPortOf(c.RemoteAddr()).Addr())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shutdown {
		return false
	}
	if m := cmp.Or(s.MaxConns, DefaultMaxConns); m > 0 && len(s.conns) >= m {
		s.log.Printf("cap", "slp: %v refused: %d connections open", c.RemoteAddr(), len(s.conns))
		return false
	}
	if m := cmp.Or(s.MaxConnsPerSource, DefaultMaxConnsPerSource); m > 0 && s.perSource[src] >= m {
		s.log.Printf("cap", "slp: %v refused: %d connections from its source", c.RemoteAddr(), s.perSource[src])
		return false
	}
	s.conns[c] = struct{}{}
	s.perSource[src]++
	s.wg.Add(1)
	return true
}

func (s *Server) release(c net.Conn) {
	src := sourcekey.Of(addrPortOf(c.RemoteAddr()).Addr())
	s.mu.Lock()
	delete(s.conns, c)
	if s.perSource[src]--; s.perSource[src] <= 0 {
		delete(s.perSource, src)
	}
	s.mu.Unlock()
	s.wg.Done()
}

// Shutdown closes the listeners and the connections open, and waits for
// their goroutines, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	s.mu.Lock()
	s.shutdown = true
	for l := range s.listeners {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func addrPortOf(a net.Addr) netip.AddrPort {
	if ta, ok := a.(*net.TCPAddr); ok {
		ap := ta.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	ap, _ := netip.ParseAddrPort(a.String())
	return ap
}

// conn is one client connection's reader.
type conn struct {
	s    *Server
	c    net.Conn
	peer netip.AddrPort
	buf  []byte
}

// more reads once more into the buffer, which holds at most limit bytes.
func (c *conn) more(limit int) bool {
	if len(c.buf) >= limit {
		return false
	}
	if cap(c.buf) == 0 {
		c.buf = make([]byte, 0, 256)
	}
	if len(c.buf) == cap(c.buf) {
		grown := make([]byte, len(c.buf), min(2*cap(c.buf), limit))
		copy(grown, c.buf)
		c.buf = grown
	}
	n, err := c.c.Read(c.buf[len(c.buf):min(cap(c.buf), limit)])
	c.buf = c.buf[:len(c.buf)+n]
	return n > 0 || err == nil
}

func (c *conn) packet(limit int) (Packet, bool) {
	for {
		p, n, err := ParsePacket(c.buf, limit)
		if err == nil {
			if c.s.Debug != nil {
				c.s.Debug("recv", c.peer, c.buf[:n])
			}
			c.buf = c.buf[n:]
			return p, true
		}
		if !errors.Is(err, ErrTruncated) || !c.more(limit+MaxVarIntLen) {
			return Packet{}, false
		}
	}
}

func (c *conn) write(b []byte) bool {
	if c.s.Debug != nil {
		c.s.Debug("send", c.peer, b)
	}
	if _, err := c.c.Write(b); err != nil {
		c.s.log.Printf("write", "slp: write to %v: %v", c.peer, err)
		return false
	}
	return true
}

func (s *Server) serveConn(nc net.Conn) {
	defer s.release(nc)
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(cmp.Or(s.ConnTimeout, DefaultConnTimeout)))
	c := &conn{s: s, c: nc, peer: addrPortOf(nc.RemoteAddr())}
	limit := cmp.Or(s.MaxRequestSize, DefaultMaxRequestSize)
	if s.ProxyProtocol {
		for {
			src, n, err := ParseProxyHeader(c.buf)
			if err == nil {
				if src.IsValid() {
					c.peer = netip.AddrPortFrom(src.Addr().Unmap(), src.Port())
				}
				c.buf = c.buf[n:]
				break
			}
			if !errors.Is(err, ErrTruncated) || !c.more(limit) {
				return
			}
		}
	}
	if len(c.buf) == 0 && !c.more(limit) {
		return
	}
	if c.buf[0] == 0xFE {
		s.serveLegacy(c)
		return
	}
	p, ok := c.packet(limit)
	if !ok || p.ID != IDHandshake {
		return
	}
	h, err := ParseHandshake(p.Data)
	if err != nil || h.NextState != NextStatus {
		return // login and transfer are not served
	}
	reply := s.serve(&Request{RemoteAddr: c.peer, Handshake: h})
	if reply == nil || reply.JSON == nil {
		return // status off, or starting: closed after the handshake
	}
	if p, ok = c.packet(limit); !ok || p.ID != IDStatusRequest || len(p.Data) != 0 {
		return
	}
	if !c.write(AppendStatusResponse(nil, reply.JSON, reply.Trailer)) || reply.NoPong {
		return
	}
	if p, ok = c.packet(limit); !ok || p.ID != IDPing {
		return // a second status request is refused by closing
	}
	if v, err := ParsePing(p.Data); err == nil {
		c.write(AppendPong(nil, v))
	}
}

// serve calls the handler, or answers nothing without one.
func (s *Server) serve(r *Request) *Reply {
	if s.Handler == nil {
		return nil
	}
	return s.Handler.ServeStatus(r)
}

// maxLegacyPing is the longest 1.6 ping: its host at MaxHostLen units.
const maxLegacyPing = 3 + 2 + 22 + 2 + 1 + 2 + 2*MaxHostLen + 4

// serveLegacy answers a legacy ping whose first byte is in c.buf.
func (s *Server) serveLegacy(c *conn) {
	var ping LegacyPing
	for {
		p, n, err := ParseLegacyPing(c.buf)
		if err != nil && !errors.Is(err, ErrTruncated) {
			return
		}
		if err == nil && (p.Variant == Legacy16 || n < len(c.buf)) {
			ping = p
			break
		}
		// FE or FE 01 may be the start of a longer form, and a prefix of
		// the 1.6 form needs the rest: wait a moment for more.
		if err == nil {
			_ = c.c.SetReadDeadline(time.Now().Add(cmp.Or(s.LegacyWait, DefaultLegacyWait)))
		}
		if !c.more(maxLegacyPing) {
			if err != nil {
				return
			}
			ping = p
			break
		}
	}
	if s.Debug != nil {
		s.Debug("recv", c.peer, c.buf)
	}
	reply := s.serve(&Request{RemoteAddr: c.peer, Legacy: ping.Variant,
		Handshake: Handshake{Protocol: int32(ping.Protocol), Host: ping.Host, Port: uint16(ping.Port)}})
	if reply == nil || reply.Legacy == nil {
		return
	}
	ls := *reply.Legacy
	if ping.Variant == LegacyBeta {
		ls.Protocol = nil // the beta format
	}
	_ = c.c.SetDeadline(time.Now().Add(cmp.Or(s.ConnTimeout, DefaultConnTimeout)))
	if b, err := ls.AppendBinary(nil); err == nil {
		c.write(b)
	}
}
