package sdtd

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/ratelog"
)

// Server defaults, used when the matching [Server] field is zero.
const (
	// DefaultFailedLoginLimit and DefaultBlockTime are serverconfig.xml's
	// TelnetFailedLoginLimit and TelnetFailedLoginsBlocktime defaults.
	DefaultFailedLoginLimit = 10
	DefaultBlockTime        = 10 * time.Second
	DefaultMaxConns         = 64
	// DefaultChunkSize: the server writes its output 64 characters at a
	// time, as 7DTD does.
	DefaultChunkSize = 64
	// outQueue is how many lines may wait for a slow client before it is
	// dropped.
	outQueue = 4096
)

// ErrServerClosed is returned by Serve and ListenAndServe after Shutdown.
var ErrServerClosed = errors.New("sdtd: server closed")

// A Handler runs one command of a logged-in client, writing its answer to
// w (lines; "\n" becomes "\r\n"). The server writes the "Executing
// command" log line to every client first, as 7DTD does. Commands of one
// client run in order. An unknown command should be answered
// "*** ERROR: unknown command '<cmd>'" ([UnknownCommand]), as 7DTD does.
type Handler interface {
	ServeTelnet(ctx context.Context, w ResponseWriter, cmd string)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, w ResponseWriter, cmd string)

// ServeTelnet calls f(ctx, w, cmd).
func (f HandlerFunc) ServeTelnet(ctx context.Context, w ResponseWriter, cmd string) { f(ctx, w, cmd) }

// ResponseWriter takes a command's answer.
type ResponseWriter interface {
	io.Writer
	io.StringWriter
	RemoteAddr() netip.AddrPort
}

// UnknownCommand is 7DTD's answer to a command it does not know.
func UnknownCommand(cmd string) string { return unknownCommand + cmd + "'" }

// Server serves the 7 Days to Die telnet console as the game does (from
// the decompiled server: TelnetConnection, TelnetConsole): the password
// prompt, "Logon successful." and the banner; before the login every log
// line reaches the client as one NUL byte; after it, log lines reach every
// client and answers the one that asked; "exit" ends a session. With an
// empty Password no login is asked, and only loopback clients are served.
//
// Wrong passwords are counted per source (an IPv4 address, an IPv6 /64);
// at FailedLoginLimit the server says "Too many failed login attempts!"
// and closes, and for BlockTime after the last failure it accepts and
// closes the source's connections at once, without a word. A successful
// login does not reset the count; only time does. MaxConns bounds the
// sessions, MaxLineLength a line, and a client that does not read is
// dropped once 4096 lines wait for it. A command's echo, its answer and
// the log lines that come while it runs are written together, in order,
// ChunkSize bytes per write.
type Server struct {
	// Addr is the TCP address ListenAndServe listens on; empty means
	// ":8081".
	Addr     string
	Password string
	Handler  Handler
	// Banner lines after "*** Connected with 7DTD server." (Server
	// version, Server IP, ... ); nil means a plain one.
	Banner []string
	// Limits; 0 means the default above, negative none.
	FailedLoginLimit int
	BlockTime        time.Duration
	MaxConns         int
	MaxLineLength    int
	// ChunkSize is how many bytes each write carries; 0 means 64.
	ChunkSize int
	Logf      func(format string, args ...any)

	once    sync.Once
	log     ratelog.Limiter
	started time.Time
	mu      sync.Mutex
	ln      net.Listener
	clients map[*telnetClient]struct{}
	fails   console.Lockout
	closed  bool
	wg      sync.WaitGroup
}

type telnetClient struct {
	nc     net.Conn
	peer   netip.AddrPort
	authed bool // under Server.mu
	out    chan []byte
	done   chan struct{}
	once   sync.Once

	// While a command runs, its echo, its answer and the log lines that
	// come meanwhile are gathered and queued together (up to batchSize
	// at a time), in the order they came.
	mu      sync.Mutex
	batch   []byte
	running bool
}

// batchSize is the most a command's gathered output holds before it is
// queued.
const batchSize = 16 << 10

// emit queues b, or gathers it while a command runs.
func (cl *telnetClient) emit(b []byte) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if !cl.running {
		cl.send(b)
		return
	}
	cl.batch = append(cl.batch, b...)
	if len(cl.batch) >= batchSize {
		cl.send(cl.batch)
		cl.batch = nil
	}
}

// gather starts or ends a command's gathering; the end queues what was
// gathered.
func (cl *telnetClient) gather(on bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.running = on
	if !on && len(cl.batch) > 0 {
		cl.send(cl.batch)
		cl.batch = nil
	}
}

func (s *Server) init() {
	s.once.Do(func() {
		s.started = time.Now()
		s.clients = make(map[*telnetClient]struct{})
		s.fails = console.Lockout{Limit: max(0, cmp.Or(s.FailedLoginLimit, DefaultFailedLoginLimit)), For: max(0, cmp.Or(s.BlockTime, DefaultBlockTime))}
		s.log.Logf = s.Logf
	})
}

// ListenAndServe listens on Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	addr := s.Addr
	if addr == "" {
		addr = ":8081"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve accepts on l until Shutdown; it returns ErrServerClosed then.
func (s *Server) Serve(l net.Listener) error {
	s.init()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		l.Close()
		return ErrServerClosed
	}
	s.ln = l
	s.mu.Unlock()
	for {
		nc, err := l.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		s.accept(nc)
	}
}

// LocalAddr is the address served, once Serve runs.
func (s *Server) LocalAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// Shutdown stops accepting, closes every session, and waits for them, or
// for ctx.
func (s *Server) Shutdown(ctx context.Context) error {
	s.init()
	s.mu.Lock()
	s.closed = true
	if s.ln != nil {
		s.ln.Close()
	}
	for cl := range s.clients {
		cl.stop()
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

// Log writes a log line to every client, as the game's log does:
// "<ISO time> <uptime> INF <text>" after the login, one NUL byte before.
func (s *Server) Log(text string) {
	s.init()
	now := time.Now()
	line := fmt.Sprintf("%s %.3f INF %s\r\n", now.Format("2006-01-02T15:04:05"), now.Sub(s.started).Seconds(), text)
	s.mu.Lock()
	defer s.mu.Unlock()
	for cl := range s.clients {
		if cl.authed {
			cl.emit([]byte(line))
		} else {
			cl.send([]byte{0})
		}
	}
}

// Sessions is how many clients are logged in.
func (s *Server) Sessions() int {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for cl := range s.clients {
		if cl.authed {
			n++
		}
	}
	return n
}

func (cl *telnetClient) send(b []byte) {
	select {
	case cl.out <- b:
	default:
		cl.stop() // a client that does not read
	}
}

func (cl *telnetClient) stop() {
	cl.once.Do(func() {
		close(cl.done)
		cl.nc.Close()
	})
}

// accept starts a session, or closes the connection of a blocked source
// at once, without a word.
func (s *Server) accept(nc net.Conn) {
	peer, _ := netip.ParseAddrPort(nc.RemoteAddr().String())
	blocked := s.fails.Blocked(peer.Addr(), time.Now())
	s.mu.Lock()
	full := max(0, cmp.Or(s.MaxConns, DefaultMaxConns)) > 0 && len(s.clients) >= max(0, cmp.Or(s.MaxConns, DefaultMaxConns))
	s.mu.Unlock()
	if blocked || full || (s.Password == "" && !peer.Addr().Unmap().IsLoopback()) {
		s.log.Printf("refused", "sdtd: %v: connection refused (blocked %v, full %v)", peer, blocked, full)
		nc.Close()
		return
	}
	cl := &telnetClient{nc: nc, peer: peer, out: make(chan []byte, outQueue), done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		nc.Close()
		return
	}
	s.clients[cl] = struct{}{}
	s.wg.Add(2)
	s.mu.Unlock()
	go s.write(cl)
	go s.serve(cl)
}

// write sends cl's queued output in ChunkSize pieces.
func (s *Server) write(cl *telnetClient) {
	defer s.wg.Done()
	chunk := max(0, cmp.Or(s.ChunkSize, DefaultChunkSize))
	for {
		select {
		case <-cl.done:
			return
		case b := <-cl.out:
			if b == nil {
				cl.stop()
				return
			}
			for len(b) > 0 {
				n := len(b)
				if chunk > 0 {
					n = min(n, chunk)
				}
				cl.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
				if _, err := cl.nc.Write(b[:n]); err != nil {
					cl.stop()
					return
				}
				b = b[n:]
			}
		}
	}
}

// serve runs cl's login and then its commands.
func (s *Server) serve(cl *telnetClient) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.clients, cl)
		s.mu.Unlock()
		cl.stop()
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-cl.done
		cancel()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		lr := NewLineReader(cl.nc, max(0, cmp.Or(s.MaxLineLength, 4096)))
		for {
			// 7DTD ends an input line at "\r" or "\n", trims it and
			// skips empty ones.
			line, err := lr.ReadLine()
			if err != nil {
				return
			}
			for part := range strings.FieldsFuncSeq(line, func(r rune) bool { return r == '\r' }) {
				if part = strings.TrimSpace(part); part != "" {
					select {
					case lines <- part:
					case <-cl.done:
						return
					}
				}
			}
		}
	}()
	if s.Password != "" {
		cl.send([]byte(PasswordPrompt + "\r\n"))
		if !s.login(cl, lines) {
			return
		}
	}
	welcome := s.banner()
	if s.Password != "" {
		welcome = LogonSuccessful + "\r\n\r\n\r\n\r\n" + welcome
	}
	s.mu.Lock()
	cl.authed = true
	cl.send([]byte(welcome)) // before any log line
	s.mu.Unlock()
	for line := range lines {
		if strings.EqualFold(line, "exit") {
			return
		}
		cl.gather(true)
		s.Log(fmt.Sprintf("Executing command '%s' by Telnet from %v", line, cl.peer))
		rw := &responseWriter{cl: cl}
		if s.Handler != nil {
			s.Handler.ServeTelnet(ctx, rw, line)
		} else {
			rw.WriteString(UnknownCommand(line))
		}
		rw.flush()
		cl.gather(false)
	}
}

// login reads passwords until the right one, or the failure limit.
func (s *Server) login(cl *telnetClient, lines <-chan string) bool {
	want := sha256.Sum256([]byte(s.Password))
	for line := range lines {
		got := sha256.Sum256([]byte(line))
		if subtle.ConstantTimeCompare(want[:], got[:]) == 1 {
			return true // the failure count stays: only time lifts it
		}
		over := s.fails.Fail(cl.peer.Addr(), time.Now())
		if over {
			s.log.Printf("lockout", "sdtd: %v: too many failed logins, blocked", cl.peer)
			cl.send([]byte(TooManyFailures + "\r\n"))
			cl.send(nil) // the writer closes the connection once that is out
			t := time.NewTimer(5 * time.Second)
			defer t.Stop()
			select {
			case <-cl.done:
			case <-t.C:
			}
			return false
		}
		s.log.Printf("wrong password", "sdtd: %v: wrong password", cl.peer)
		cl.send([]byte(PasswordWrong + "\r\n"))
	}
	return false
}

func (s *Server) banner() string {
	lines := s.Banner
	if lines == nil {
		lines = []string{"*** Server version: V 1.0 (b333) Compatibility Version: V 1.0", "",
			"Server IP:   Any", "Server port: 26900", "Max players: 8", "Game mode:   GameModeSurvival",
			"World:       Navezgane", "Game name:   gsq", "Difficulty:  2"}
	}
	var b strings.Builder
	b.WriteString("*** Connected with 7DTD server.\r\n")
	for _, l := range lines {
		b.WriteString(l + "\r\n")
	}
	b.WriteString("\r\nPress 'help' to get a list of all commands. Press 'exit' to end session.\r\n\r\n")
	return b.String()
}

// responseWriter sends a command's answer line by line.
type responseWriter struct {
	cl      *telnetClient
	partial []byte
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.partial = append(w.partial, b...)
	for {
		i := strings.IndexByte(string(w.partial), '\n')
		if i < 0 {
			break
		}
		w.cl.emit(append([]byte(strings.TrimRight(string(w.partial[:i]), "\r")), '\r', '\n'))
		w.partial = w.partial[i+1:]
	}
	select {
	case <-w.cl.done:
		return len(b), net.ErrClosed
	default:
	}
	return len(b), nil
}

func (w *responseWriter) WriteString(s string) (int, error) { return w.Write([]byte(s)) }
func (w *responseWriter) RemoteAddr() netip.AddrPort        { return w.cl.peer }

func (w *responseWriter) flush() {
	if len(w.partial) > 0 {
		w.Write([]byte("\n"))
	}
}
