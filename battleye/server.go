package battleye

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/udpserve"
)

// Server defaults, used when the matching [Server] field is zero.
const (
	// DefaultPartSize is the most answer text one datagram carries before
	// the answer is split into parts.
	DefaultPartSize = 1024
	// DefaultMaxClients is how many logged-in clients the server keeps.
	DefaultMaxClients = 32
	// DefaultIdleTimeout is how long a client may go without sending a
	// command before the server forgets it (BERConProtocol.txt: 45 s).
	DefaultIdleTimeout = 45 * time.Second
	// DefaultResendInterval and DefaultResends: an unacknowledged server
	// message is sent again every 2 s, 5 times, and then the client is
	// forgotten (BERConProtocol.txt: "5 times for 10 seconds").
	DefaultResendInterval = 2 * time.Second
	DefaultResends        = 5
	// DefaultRateLimit and DefaultRateBurst bound the datagrams a source
	// may send per second.
	DefaultRateLimit = 50
	DefaultRateBurst = 100
	// DefaultRateSources is how many sources the rate limiter and the
	// lockout table remember.
	DefaultRateSources = 4096
	// DefaultMaxFailedLogins and DefaultLockoutDuration: a source that
	// sent this many wrong passwords is ignored until this long has passed
	// since its last one (console.Lockout).
	DefaultMaxFailedLogins = 5
	DefaultLockoutDuration = 5 * time.Minute
	// maxPending is how many unacknowledged messages a client may have
	// before it is forgotten.
	maxPending = 64
	// cmdQueue is how many commands of one client wait for its handler:
	// as many as a client can have in flight.
	cmdQueue = 256
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("battleye: server closed")

// A Handler runs one command of a logged-in client and writes its output
// to w. Commands of one client run one at a time, in order; clients run
// concurrently. ctx ends when the client is forgotten or the server shuts
// down.
type Handler interface {
	ServeBattlEye(ctx context.Context, w ResponseWriter, cmd string)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, w ResponseWriter, cmd string)

// ServeBattlEye calls f(ctx, w, cmd).
func (f HandlerFunc) ServeBattlEye(ctx context.Context, w ResponseWriter, cmd string) { f(ctx, w, cmd) }

// ResponseWriter takes a command's output. Output beyond the server's
// MaxResponseSize fails with ErrResponseTooLarge (what fitted is sent).
type ResponseWriter interface {
	io.Writer
	io.StringWriter
	// RemoteAddr is the client's address.
	RemoteAddr() netip.AddrPort
}

// Server serves BattlEye RCon over UDP, so a Go program can offer the
// console DayZ and Arma admins' tools speak. The zero value, given a
// Password and a Handler, is usable; fields must not change once serving.
//
// It behaves as BERConProtocol.txt describes: a login is answered 1 or 0;
// commands of a logged-in client are answered with their sequence number,
// in parts when long; an empty command is a keep-alive; server messages
// ([Server.Broadcast]) are sent again until acknowledged, and a client
// that leaves them unacknowledged, or sends no command for IdleTimeout,
// is forgotten. With Reforger set it answers as Arma Reforger does.
//
// What a peer can cost it is bounded:
//   - Datagrams from a source beyond RateLimit per second are dropped, and
//     a source that sent MaxFailedLogins wrong passwords is ignored for
//     LockoutDuration. A source is an IPv4 address or an IPv6 /64.
//   - An unauthenticated source never gets more than it sent: a login's
//     answer (9 bytes) is no larger than the login (8 bytes and the
//     password) plus one byte, and anything else from it gets nothing.
//   - At most MaxClients clients are logged in; a new login replaces the
//     one idle longest. Each has at most 256 commands queued and 64
//     messages unacknowledged.
//   - A command is answered once per sequence number: the same number
//     again (a client asking for lost parts) gets the same answer, sent
//     again, and the handler does not run again.
type Server struct {
	// Addr is the UDP address ListenAndServe binds; empty means ":2305".
	Addr string
	// Password is the RCon password; an empty one refuses every login.
	Password string
	// Handler runs commands; nil answers each with nothing.
	Handler Handler
	// Reforger answers as Arma Reforger: each command is acknowledged
	// with an empty reply, then "Processing Command: <cmd>" and the
	// output, one line per server message.
	Reforger bool
	// PartSize is the most text per datagram; 0 means DefaultPartSize.
	PartSize int
	// MaxResponseSize bounds one command's output; 0 means 255 parts.
	MaxResponseSize int
	// MaxClients, IdleTimeout, ResendInterval, Resends, RateLimit,
	// RateBurst, RateSources, MaxFailedLogins and LockoutDuration: 0
	// means the default above; a negative count or duration means none
	// (no limit, never).
	MaxClients      int
	IdleTimeout     time.Duration
	ResendInterval  time.Duration
	Resends         int
	RateLimit       float64
	RateBurst       int
	RateSources     int
	MaxFailedLogins int
	LockoutDuration time.Duration
	// Logf, if set, receives notable events (logins, lockouts, clients
	// forgotten, datagrams dropped), each kind rate-limited.
	Logf func(format string, args ...any)

	once    sync.Once
	socks   udpserve.Sockets
	limiter *udpserve.RateLimiter
	log     ratelog.Limiter
	quit    chan struct{}
	wg      sync.WaitGroup
	dropped atomic.Int64
	logins  atomic.Int64

	mu      sync.Mutex
	clients map[netip.AddrPort]*beClient
	fails   console.Lockout
}

// beClient is a logged-in client.
type beClient struct {
	addr    netip.AddrPort
	w       udpserve.Writer
	ctx     context.Context
	cancel  context.CancelFunc
	cmds    chan command
	lastCmd time.Time
	msgSeq  byte
	pending map[byte]*pendingMsg
	// The answer to the last command, kept to answer its sequence number
	// again without running it again.
	lastSeq  int
	lastSent [][]byte
}

type command struct {
	seq byte
	cmd string
}

type pendingMsg struct {
	pkt   []byte
	sends int
	next  time.Time
}

func (s *Server) init() {
	s.once.Do(func() {
		s.quit = make(chan struct{})
		s.clients = make(map[netip.AddrPort]*beClient)
		s.fails = console.Lockout{Limit: max(0, cmp.Or(s.MaxFailedLogins, DefaultMaxFailedLogins)), For: max(0, cmp.Or(s.LockoutDuration, DefaultLockoutDuration)), Sources: s.rateSources()}
		s.log.Logf = s.Logf
		if rate := s.rateLimit(); rate > 0 {
			burst := s.RateBurst
			if burst <= 0 {
				burst = DefaultRateBurst
			}
			s.limiter = udpserve.NewRateLimiter(rate, float64(burst), s.rateSources())
		}
		s.wg.Add(1)
		go s.janitor()
	})
}

func (s *Server) rateLimit() float64 { return max(0, cmp.Or(s.RateLimit, DefaultRateLimit)) }
func (s *Server) rateSources() int   { return max(max(0, cmp.Or(s.RateSources, DefaultRateSources)), 1) }
func (s *Server) partSize() int      { return max(max(0, cmp.Or(s.PartSize, DefaultPartSize)), 1) }
func (s *Server) maxClients() int    { return max(0, cmp.Or(s.MaxClients, DefaultMaxClients)) }
func (s *Server) idleTimeout() time.Duration {
	return max(0, cmp.Or(s.IdleTimeout, DefaultIdleTimeout))
}
func (s *Server) resendEvery() time.Duration {
	if v := max(0, cmp.Or(s.ResendInterval, DefaultResendInterval)); v > 0 {
		return v
	}
	return DefaultResendInterval
}
func (s *Server) resends() int { return max(0, cmp.Or(s.Resends, DefaultResends)) }

// maxResponse is MaxResponseSize, within the 255 parts an answer can have.
func (s *Server) maxResponse() int {
	most := MaxParts * s.partSize()
	if v := max(0, cmp.Or(s.MaxResponseSize, most)); v > 0 && v < most {
		return v
	}
	return most
}

// ListenAndServe listens on Addr (":2305" if empty) and serves.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, ":2305")
	if err != nil {
		if errors.Is(err, udpserve.ErrShutdown) {
			return ErrServerClosed
		}
		return err
	}
	return s.Serve(pc)
}

// Serve serves on pc until Shutdown; it returns ErrServerClosed then.
func (s *Server) Serve(pc net.PacketConn) error {
	s.init()
	w := udpserve.WriterOf(pc)
	return s.socks.Serve(pc, readBufferSize, ErrServerClosed, func(from netip.AddrPort, b []byte) {
		s.handle(w, from, b)
	})
}

// LocalAddr is the address served, once Serve runs.
func (s *Server) LocalAddr() net.Addr { return s.socks.LocalAddr() }

// Shutdown closes the sockets, forgets every client and waits for the
// handlers, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	err := s.socks.Shutdown(ctx)
	s.mu.Lock()
	select {
	case <-s.quit:
	default:
		close(s.quit)
	}
	for _, cl := range s.clients {
		s.forget(cl, "")
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Clients is how many clients are logged in.
func (s *Server) Clients() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.clients)
}

// Logins counts the successful logins so far.
func (s *Server) Logins() int64 { return s.logins.Load() }

// Dropped counts the datagrams dropped: rate-limited, malformed, from a
// source not logged in or locked out, or commands beyond a full queue.
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Broadcast sends msg as a server message to every logged-in client, and
// again until each acknowledges it. It returns how many clients it went to.
func (s *Server) Broadcast(msg string) int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, cl := range s.clients {
		s.message(cl, []byte(msg))
	}
	return len(s.clients)
}

// message sends one server message to cl. Under s.mu.
func (s *Server) message(cl *beClient, data []byte) {
	if len(cl.pending) >= maxPending {
		s.forget(cl, "too many unacknowledged messages")
		return
	}
	seq := cl.msgSeq
	cl.msgSeq++
	pkt, _ := Packet{Type: TypeMessage, Seq: seq, Data: data}.AppendBinary(nil)
	cl.pending[seq] = &pendingMsg{pkt: pkt, sends: 1, next: time.Now().Add(s.resendEvery())}
	cl.w.WriteToUDPAddrPort(pkt, cl.addr)
}

// forget removes cl. Under s.mu.
func (s *Server) forget(cl *beClient, why string) {
	if s.clients[cl.addr] != cl {
		return
	}
	delete(s.clients, cl.addr)
	cl.cancel()
	if why != "" {
		s.log.Printf("forgot", "battleye: forgot client %v: %s", cl.addr, why)
	}
}

func (s *Server) drop(kind, format string, args ...any) {
	s.dropped.Add(1)
	s.log.Printf(kind, format, args...)
}

// handle takes one datagram.
func (s *Server) handle(w udpserve.Writer, from netip.AddrPort, b []byte) {
	now := time.Now()
	if s.limiter != nil && !s.limiter.Allow(from.Addr(), now.UnixNano()) {
		s.drop("rate", "battleye: %v: over the rate limit, datagram dropped", from)
		return
	}
	p, err := ParsePacket(b)
	if err != nil {
		s.drop("malformed", "battleye: %v: %v", from, err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.quit:
		return
	default:
	}
	cl := s.clients[from]
	switch p.Type {
	case TypeLogin:
		s.login(w, from, p.Data, now)
	case TypeCommand:
		if cl == nil {
			s.drop("not logged in", "battleye: %v: command from a client not logged in, ignored", from)
			return
		}
		cl.lastCmd = now
		switch {
		case len(p.Data) == 0:
			pkt, _ := Packet{Type: TypeCommand, Seq: p.Seq}.AppendBinary(nil)
			w.WriteToUDPAddrPort(pkt, from)
			cl.lastSeq, cl.lastSent = -1, nil
		case int(p.Seq) == cl.lastSeq:
			for _, pkt := range cl.lastSent {
				w.WriteToUDPAddrPort(pkt, from)
			}
		default:
			select {
			case cl.cmds <- command{seq: p.Seq, cmd: string(p.Data)}:
				cl.lastSeq, cl.lastSent = int(p.Seq), nil
			default:
				s.drop("queue full", "battleye: %v: %d commands waiting, command dropped", from, cmdQueue)
			}
		}
	case TypeMessage:
		if cl != nil {
			delete(cl.pending, p.Seq)
		}
	}
}

// login checks a password. Under s.mu.
func (s *Server) login(w udpserve.Writer, from netip.AddrPort, password []byte, now time.Time) {
	if s.fails.Blocked(from.Addr(), now) {
		s.drop("locked out", "battleye: %v: locked out, login ignored", from)
		return
	}
	want := sha256.Sum256([]byte(s.Password))
	got := sha256.Sum256(password)
	verdict := byte(0)
	switch {
	case s.Password != "" && subtle.ConstantTimeCompare(want[:], got[:]) == 1:
		verdict = 1
		s.admit(w, from, now)
	case s.fails.Fail(from.Addr(), now):
		s.log.Printf("lockout", "battleye: %v: %d wrong passwords, locked out for %v", from, s.fails.Limit, s.fails.For)
	default:
		s.log.Printf("wrong password", "battleye: %v: wrong password", from)
	}
	pkt, _ := Packet{Type: TypeLogin, Data: []byte{verdict}}.AppendBinary(nil)
	w.WriteToUDPAddrPort(pkt, from)
}

// admit logs from in, replacing its earlier session or, when full, the
// client idle longest. Under s.mu.
func (s *Server) admit(w udpserve.Writer, from netip.AddrPort, now time.Time) {
	if old := s.clients[from]; old != nil {
		s.forget(old, "")
	}
	if max := s.maxClients(); max > 0 && len(s.clients) >= max {
		var idlest *beClient
		for _, cl := range s.clients {
			if idlest == nil || cl.lastCmd.Before(idlest.lastCmd) {
				idlest = cl
			}
		}
		s.forget(idlest, "replaced by a new login")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cl := &beClient{addr: from, w: w, ctx: ctx, cancel: cancel, cmds: make(chan command, cmdQueue),
		lastCmd: now, pending: make(map[byte]*pendingMsg), lastSeq: -1}
	s.clients[from] = cl
	s.logins.Add(1)
	s.wg.Add(1)
	go s.serveClient(cl)
}

// serveClient runs cl's commands in order until it is forgotten.
func (s *Server) serveClient(cl *beClient) {
	defer s.wg.Done()
	for {
		select {
		case <-cl.ctx.Done():
			return
		case c := <-cl.cmds:
			s.run(cl, c)
		}
	}
}

// run runs one command and sends its answer.
func (s *Server) run(cl *beClient, c command) {
	if s.Reforger {
		// Reforger acknowledges at once and answers later.
		ack, _ := Packet{Type: TypeCommand, Seq: c.seq}.AppendBinary(nil)
		s.answer(cl, c.seq, [][]byte{ack})
	}
	rw := &responseWriter{addr: cl.addr, max: s.maxResponse()}
	if s.Handler != nil {
		s.Handler.ServeBattlEye(cl.ctx, rw, c.cmd)
	}
	if !s.Reforger {
		s.answer(cl, c.seq, s.split(c.seq, rw.buf))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients[cl.addr] != cl {
		return
	}
	s.message(cl, []byte(reforgerEcho+" "+c.cmd))
	for line := range strings.SplitSeq(strings.TrimRight(string(rw.buf), "\n"), "\n") {
		if line != "" && s.clients[cl.addr] == cl {
			s.message(cl, []byte(line))
		}
	}
}

// answer sends a command's answer and keeps it for a repeated sequence
// number.
func (s *Server) answer(cl *beClient, seq byte, pkts [][]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients[cl.addr] != cl {
		return
	}
	if cl.lastSeq == int(seq) {
		cl.lastSent = pkts
	}
	for _, pkt := range pkts {
		cl.w.WriteToUDPAddrPort(pkt, cl.addr)
	}
}

// split cuts an answer into datagrams of at most PartSize text each.
func (s *Server) split(seq byte, out []byte) [][]byte {
	size := s.partSize()
	if len(out) <= size {
		pkt, _ := Packet{Type: TypeCommand, Seq: seq, Data: out}.AppendBinary(nil)
		return [][]byte{pkt}
	}
	total := (len(out) + size - 1) / size
	pkts := make([][]byte, 0, total)
	for i := range total {
		part := out[i*size : min((i+1)*size, len(out))]
		pkt, _ := Packet{Type: TypeCommand, Seq: seq, Total: byte(total), Index: byte(i), Data: part}.AppendBinary(nil)
		pkts = append(pkts, pkt)
	}
	return pkts
}

// janitor re-sends unacknowledged messages and forgets idle and deaf
// clients.
func (s *Server) janitor() {
	defer s.wg.Done()
	t := time.NewTicker(max(s.resendEvery()/4, time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case now := <-t.C:
			s.sweep(now)
		}
	}
}

func (s *Server) sweep(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	idle := s.idleTimeout()
	for _, cl := range s.clients {
		if idle > 0 && now.Sub(cl.lastCmd) >= idle {
			s.forget(cl, "no command for "+idle.String())
			continue
		}
		resends := s.resends()
		if s.Resends < 0 {
			clear(cl.pending)
			continue
		}
		for _, m := range cl.pending {
			if now.Before(m.next) {
				continue
			}
			if m.sends > resends {
				s.forget(cl, "a server message was never acknowledged")
				break
			}
			m.sends++
			m.next = now.Add(s.resendEvery())
			cl.w.WriteToUDPAddrPort(m.pkt, cl.addr)
		}
	}
}

// responseWriter collects a command's output up to max bytes.
type responseWriter struct {
	addr netip.AddrPort
	buf  []byte
	max  int
}

func (w *responseWriter) Write(b []byte) (int, error) {
	room := w.max - len(w.buf)
	if len(b) > room {
		w.buf = append(w.buf, b[:max(room, 0)]...)
		return max(room, 0), ErrResponseTooLarge
	}
	w.buf = append(w.buf, b...)
	return len(b), nil
}

func (w *responseWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

func (w *responseWriter) RemoteAddr() netip.AddrPort { return w.addr }
