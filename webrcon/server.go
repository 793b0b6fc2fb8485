package webrcon

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/httpserve"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// Server defaults, used when the matching [Server] field is zero.
const (
	// DefaultMaxRequestSize bounds a request message from a client.
	DefaultMaxRequestSize = 64 << 10
	// DefaultMaxResponseSize bounds one command's output.
	DefaultMaxResponseSize = 16 << 20
	DefaultMaxConns        = 64
	DefaultMaxFailedLogins = 5
	DefaultLockoutDuration = 5 * time.Minute
	// DefaultIdleTimeout closes a session that sent nothing for so long.
	DefaultIdleTimeout  = 10 * time.Minute
	DefaultWriteTimeout = 30 * time.Second
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("webrcon: server closed")

// A Handler runs one command of a session. What it writes to w is the
// reply, sent as one message with the request's Identifier when it
// returns; a handler that writes nothing sends no reply, as Rust does for
// commands that print nothing. Commands of one session run in order;
// sessions run concurrently.
type Handler interface {
	ServeWebRcon(ctx context.Context, w ResponseWriter, r *Request)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, w ResponseWriter, r *Request)

// ServeWebRcon calls f(ctx, w, r).
func (f HandlerFunc) ServeWebRcon(ctx context.Context, w ResponseWriter, r *Request) { f(ctx, w, r) }

// ResponseWriter takes a command's output. Output beyond MaxResponseSize
// fails with ErrMessageTooLarge.
type ResponseWriter interface {
	io.Writer
	io.StringWriter
	// SetType sets the reply's Type ("Generic" by default).
	SetType(typ string)
	// RemoteAddr is the client's address.
	RemoteAddr() netip.AddrPort
}

// Server serves WebRCON as Rust does, so a Go program can answer Rust
// admin tools: a WebSocket at "/<password>" on which JSON requests get
// JSON replies, and [Server.Broadcast] sends console lines, chat and
// reports to every session. It is an http.Handler; ListenAndServe runs it
// on its own. The zero value, given a Password and a Handler, is usable.
//
// Like Rust, it answers an upgrade whose path is not the password with a
// raw close frame (88 02 03 E8) and no HTTP at all. IgnorePings and
// BroadcastReplies make it as unkind as Rust and Oxide are.
//
// What a peer can cost it is bounded: MaxConns sessions, requests of
// MaxRequestSize, output of MaxResponseSize, IdleTimeout without a
// request, WriteTimeout per write, and a source (an IPv4 address or an
// IPv6 /64) that sent MaxFailedLogins wrong passwords is refused for
// LockoutDuration.
type Server struct {
	// Addr is the TCP address ListenAndServe listens on; empty means
	// ":28016".
	Addr     string
	Password string // the path; empty refuses every upgrade
	Handler  Handler
	// IgnorePings leaves WebSocket pings unanswered, as Rust does.
	IgnorePings bool
	// BroadcastReplies sends each reply to every session, as Oxide's
	// RemoteConsole does (Sessions.Broadcast).
	BroadcastReplies bool
	// Limits; 0 means the default above, negative none.
	MaxRequestSize  int
	MaxResponseSize int
	MaxConns        int
	MaxFailedLogins int
	LockoutDuration time.Duration
	IdleTimeout     time.Duration
	WriteTimeout    time.Duration
	// Logf receives notable events (failed logins, lockouts, refused
	// connections), each kind rate-limited.
	Logf func(format string, args ...any)

	once     sync.Once
	log      ratelog.Limiter
	mu       sync.Mutex
	sessions map[*session]struct{}
	fails    console.Lockout
	srv      httpserve.Server
	wg       sync.WaitGroup
}

type session struct {
	ws     *wsConn
	peer   netip.AddrPort
	cancel context.CancelFunc
}

func (s *Server) init() {
	s.once.Do(func() {
		s.sessions = make(map[*session]struct{})
		s.fails = console.Lockout{Limit: max(0, cmp.Or(s.MaxFailedLogins, DefaultMaxFailedLogins)), For: max(0, cmp.Or(s.LockoutDuration, DefaultLockoutDuration))}
		s.log.Logf = s.Logf
	})
}

// ListenAndServe listens on Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	s.init()
	return s.srv.ListenAndServe(s.Addr, ":28016", s, ErrServerClosed)
}

// Serve serves on l until Shutdown; it returns ErrServerClosed then.
func (s *Server) Serve(l net.Listener) error {
	s.init()
	return s.srv.Serve(l, s, ErrServerClosed)
}

// LocalAddr is the address served, once Serve runs.
func (s *Server) LocalAddr() net.Addr { return s.srv.LocalAddr() }

// Shutdown stops accepting, closes every session and waits for their
// handlers, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	err := s.srv.Shutdown(ctx)
	s.mu.Lock()
	for ss := range s.sessions {
		ss.cancel()
		ss.ws.nc.Close()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return err
}

// Sessions is how many sessions are open.
func (s *Server) Sessions() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// Broadcast sends m to every session (Identifier 0 for console lines,
// chat and reports). It returns how many sessions it went to.
func (s *Server) Broadcast(m Message) int {
	s.init()
	b, _ := json.Marshal(m)
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.ws.write(OpText, b)
	}
	return len(all)
}

// ServeHTTP upgrades a request whose path is the password and serves the
// session; any other path gets Rust's raw close frame.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.init()
	peer, _ := netip.ParseAddrPort(r.RemoteAddr)
	now := time.Now()
	locked := s.fails.Blocked(peer.Addr(), now)
	s.mu.Lock()
	full := max(0, cmp.Or(s.MaxConns, DefaultMaxConns)) > 0 && len(s.sessions) >= max(0, cmp.Or(s.MaxConns, DefaultMaxConns))
	closed := s.srv.Closed()
	s.mu.Unlock()
	switch {
	case closed:
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	case locked:
		s.log.Printf("locked out", "webrcon: %v: locked out, upgrade refused", peer)
		s.refuse(w)
		return
	case full:
		s.log.Printf("full", "webrcon: %v: %d sessions open, upgrade refused", peer, len(s.sessions))
		http.Error(w, "too many sessions", http.StatusServiceUnavailable)
		return
	}
	// A request that is no upgrade tried no password: it gets a plain
	// 400, and counts for nothing.
	key := r.Header.Get("Sec-WebSocket-Key")
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") || key == "" {
		http.Error(w, "a WebSocket upgrade is expected", http.StatusBadRequest)
		return
	}
	want := sha256.Sum256([]byte(s.Password))
	got := sha256.Sum256([]byte(strings.TrimPrefix(r.URL.Path, "/")))
	if s.Password == "" || subtle.ConstantTimeCompare(want[:], got[:]) != 1 {
		if s.fails.Fail(peer.Addr(), now) {
			s.log.Printf("lockout", "webrcon: %v: %d wrong passwords, locked out", peer, s.fails.Limit)
		} else {
			s.log.Printf("wrong password", "webrcon: %v: wrong password", peer)
		}
		s.refuse(w)
		return
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "cannot upgrade", http.StatusInternalServerError)
		return
	}
	nc.SetDeadline(time.Time{})
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{peer: peer, cancel: cancel, ws: &wsConn{nc: nc, br: brw.Reader,
		maxMsg: max(0, cmp.Or(s.MaxRequestSize, DefaultMaxRequestSize)), pong: !s.IgnorePings, wdl: max(0, cmp.Or(s.WriteTimeout, DefaultWriteTimeout))}}
	// The session is registered before the client learns of the upgrade,
	// so that a broadcast right after it reaches the client.
	ss.ws.wmu.Lock() // held until the 101 is out: a broadcast waits for it
	s.mu.Lock()
	if s.srv.Closed() {
		s.mu.Unlock()
		ss.ws.wmu.Unlock()
		cancel()
		nc.Close()
		return
	}
	s.sessions[ss] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()
	brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + acceptKey(key) + "\r\n\r\n")
	brw.Flush()
	ss.ws.wmu.Unlock()
	go s.serve(ctx, ss)
}

// refuse writes Rust's answer to a wrong password: a close frame where
// the HTTP response should be.
func (s *Server) refuse(w http.ResponseWriter) {
	nc, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "unauthorized", http.StatusUnauthorized)
		return
	}
	nc.SetWriteDeadline(time.Now().Add(time.Second))
	nc.Write(closeFrame)
	nc.Close()
}

// serve reads ss's requests and runs them in order.
func (s *Server) serve(ctx context.Context, ss *session) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		ss.cancel()
		ss.ws.close(1000)
	}()
	idle := max(0, cmp.Or(s.IdleTimeout, DefaultIdleTimeout))
	for {
		if idle > 0 {
			ss.ws.nc.SetReadDeadline(time.Now().Add(idle))
		}
		op, data, err := ss.ws.readMessage()
		if err != nil {
			return
		}
		if op != OpText {
			continue
		}
		var req Request
		if err := json.Unmarshal(data, &req); err != nil {
			continue // Rust ignores what it cannot read
		}
		rw := &responseWriter{peer: ss.peer, max: max(0, cmp.Or(s.MaxResponseSize, DefaultMaxResponseSize)), typ: TypeGeneric}
		if s.Handler != nil {
			s.Handler.ServeWebRcon(ctx, rw, &req)
		}
		if len(rw.buf) == 0 && !rw.typed {
			continue
		}
		m := Message{Message: string(rw.buf), Identifier: req.Identifier, Type: rw.typ}
		if s.BroadcastReplies {
			s.Broadcast(m)
			continue
		}
		b, _ := json.Marshal(m)
		if err := ss.ws.write(OpText, b); err != nil {
			return
		}
	}
}

type responseWriter struct {
	peer  netip.AddrPort
	buf   []byte
	max   int
	typ   string
	typed bool
}

func (w *responseWriter) Write(b []byte) (int, error) {
	if w.max > 0 && len(w.buf)+len(b) > w.max {
		return 0, ErrMessageTooLarge
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

func (w *responseWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }
func (w *responseWriter) SetType(t string)                  { w.typ, w.typed = t, true }
func (w *responseWriter) RemoteAddr() netip.AddrPort        { return w.peer }
