package rcontest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gsq-project/gsq/rcon"
)

// MaxOutput is the most command output a [Server] buffers for one
// answer; a handler writing more gets an error.
const MaxOutput = 64 << 20

// maxRequestSize is the request size limit of the profiles that set
// none of their own.
const maxRequestSize = 1 << 20

// vanillaReadSize is the one read vanilla Minecraft makes per request.
const vanillaReadSize = 1460

// squadCloseDelay is how long Squad waits before closing the connection
// of a wrong password.
const squadCloseDelay = 250 * time.Millisecond

// errOutputTooLarge is returned to handlers that exceed MaxOutput.
var errOutputTooLarge = errors.New("rcontest: command output above MaxOutput")

// Server is a fake RCON server on a loopback port that imitates one real
// server ([Profile]) and can inject faults ([Faults]). Unlike
// [rcon.Server] it builds each answer in memory before writing it, which
// is what lets it imitate quirks byte by byte. Set the exported fields
// before Start; they must not change afterwards. A Server made as a
// literal, with a Listener of the caller's (an in-memory one, say),
// starts with Start too.
type Server struct {
	Profile  Profile
	Password string       // empty refuses every login
	Handler  rcon.Handler // nil means a zero SimHandler
	Faults   Faults
	// Behaviour, if set, replaces the profile's (Profile.Behaviour), for
	// a server that bends the protocol in a way no profile does.
	Behaviour *Behaviour
	// Script, if set, runs each connection in place of the server's own
	// conversation, for a test that needs to say what goes on the wire
	// packet by packet; it may hand the connection back with Conn.Serve.
	// The connection is closed when Script returns.
	Script func(c *Conn)
	// Logf, if set, receives one line for each request the server drops
	// and each connection it closes on purpose, with the reason.
	Logf func(format string, args ...any)
	// Listener is the listener, a loopback one bound by
	// NewUnstartedServer.
	Listener net.Listener

	received atomic.Int64
	dropped  atomic.Int64
	hangups  atomic.Int64

	accepted atomic.Int64

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	started bool
	closed  bool
	quit    chan struct{}
	wg      sync.WaitGroup
}

// NewServer starts and returns a Server imitating profile, with the
// given password and handler. The caller must Close it. It panics if no
// loopback port can be bound, as httptest does.
func NewServer(profile Profile, password string, h rcon.Handler) *Server {
	s := NewUnstartedServer(profile, password, h)
	s.Start()
	return s
}

// NewUnstartedServer is like NewServer but does not start serving, so
// fields such as Faults can be set first; call Start.
func NewUnstartedServer(profile Profile, password string, h rcon.Handler) *Server {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(fmt.Sprintf("rcontest: listen on loopback: %v", err))
	}
	return &Server{Profile: profile, Password: password, Handler: h, Listener: l}
}

// Start starts serving on Listener. It panics if called twice, or
// without a Listener.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.Listener == nil {
		panic("rcontest: Server started twice, or without a Listener")
	}
	s.started = true
	s.init()
	s.wg.Add(1)
	go s.serve()
}

func (s *Server) init() {
	if s.quit == nil {
		s.conns = make(map[net.Conn]struct{})
		s.quit = make(chan struct{})
	}
}

// behaviour is what the server does.
func (s *Server) behaviour() Behaviour {
	if s.Behaviour != nil {
		return *s.Behaviour
	}
	return s.Profile.Behaviour()
}

// Addr returns the address the server listens on.
func (s *Server) Addr() netip.AddrPort {
	if ta, ok := s.Listener.Addr().(*net.TCPAddr); ok {
		return ta.AddrPort()
	}
	return netip.AddrPort{}
}

// Received returns how many requests (packets) have reached the server,
// the dropped ones included.
func (s *Server) Received() int64 { return s.received.Load() }

// Dropped returns how many requests the server dropped without an
// answer: those Faults.DropEvery swallowed, and those the profile drops
// (legacy Rust's packets after the first of a read, ARK's requests that
// arrive while it handles one).
func (s *Server) Dropped() int64 { return s.dropped.Load() }

// Accepted returns how many connections the server has accepted.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

// Hangups returns how many connections the server closed on purpose: the
// profile's (Minecraft's parser, Squad's and go-mc's answer to a wrong
// password, go-mc's to anything but a command) and
// Faults.DropAfterBytes.
func (s *Server) Hangups() int64 { return s.hangups.Load() }

// Close stops the server, closes every connection and waits for them to
// finish. Calling it again does nothing.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.init()
	close(s.quit)
	s.Listener.Close()
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) serve() {
	defer s.wg.Done()
	for {
		nc, err := s.Listener.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(nc, int(s.accepted.Add(1)))
	}
}

func (s *Server) logf(c *Conn, format string, args ...any) {
	if s.Logf != nil {
		s.Logf("rcontest: %v: %s: %s", c.remote, s.Profile, fmt.Sprintf(format, args...))
	}
}

// hangUp counts a connection closed on purpose.
func (s *Server) hangUp(c *Conn, format string, args ...any) {
	s.hangups.Add(1)
	s.logf(c, "closing the connection: "+format, args...)
}

// drop counts n requests dropped without an answer; unread ones counts
// them as received too.
func (s *Server) drop(c *Conn, n int, unread bool, format string, args ...any) {
	if unread {
		s.received.Add(int64(n))
	}
	s.dropped.Add(int64(n))
	s.logf(c, "dropped %d request(s): "+format, append([]any{n}, args...)...)
}

func (s *Server) serveConn(nc net.Conn, index int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer func() {
		cancel()
		nc.Close()
		s.mu.Lock()
		delete(s.conns, nc)
		s.mu.Unlock()
		s.wg.Done()
	}()
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c := &Conn{srv: s, nc: nc, b: s.behaviour(), ctx: ctx, index: index}
	if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		c.remote = ta.AddrPort()
	}
	if c.b.Read == ReadStream || c.b.Read == ReadDropBusy {
		max := maxRequestSize
		if c.b.MaxRequest > 0 {
			max = c.b.MaxRequest
		}
		c.br = bufio.NewReader(nc)
		c.rd = rcon.NewReader(c.br, max)
	}
	if s.Script != nil {
		s.Script(c)
		return
	}
	c.Serve()
}

// Conn is one client connection of a Server, as a Script drives it.
type Conn struct {
	srv     *Server
	nc      net.Conn
	index   int
	remote  netip.AddrPort
	b       Behaviour
	ctx     context.Context
	br      *bufio.Reader
	rd      *rcon.Reader
	authed  bool
	utf8    bool   // legacy Rust: the client asked for UTF-8
	cmds    int    // commands received
	written int    // bytes written so far
	pending []byte // answers not written yet
	readBuf []byte // reads of the one-read profiles
}

// Index is the connection's number, from 1 for the server's first.
func (c *Conn) Index() int { return c.index }

// NetConn returns the connection, for raw writes and closing it.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Serve runs the rest of the conversation as the server's behaviour
// does, until the connection ends.
func (c *Conn) Serve() {
	for {
		p, ok := c.read()
		if !ok {
			return
		}
		c.srv.received.Add(1)
		if !c.answer(p) {
			c.flush()
			return
		}
		if c.srv.Faults.Coalesce && c.br != nil && c.br.Buffered() > 0 {
			continue
		}
		if !c.flush() {
			return
		}
	}
}

// ReadPacket reads the next request as the server's behaviour reads
// them; ok is false once the connection is gone, or the read broke the
// behaviour's rules (the connection is then closed, as the real server
// does).
func (c *Conn) ReadPacket() (p rcon.Packet, ok bool) {
	p, ok = c.read()
	if ok {
		c.srv.received.Add(1)
	}
	return p, ok
}

// Discard reads requests and answers none, until the connection ends: a
// server that went silent with the connection open.
func (c *Conn) Discard() {
	for _, ok := c.ReadPacket(); ok; _, ok = c.ReadPacket() {
	}
}

// Answer answers the request p as the server's behaviour does, and
// reports whether the connection is kept.
func (c *Conn) Answer(p rcon.Packet) bool {
	keep := c.answer(p)
	return c.flush() && keep
}

// Login reads the login and answers it as the server's behaviour does; it
// reports whether the client logged in.
func (c *Conn) Login() bool {
	p, ok := c.ReadPacket()
	return ok && p.Type == rcon.TypeAuth && c.Answer(p) && c.authed
}

// Send writes the packets in one write (cut as Faults say), so that they
// may reach the client in one read.
func (c *Conn) Send(pkts ...rcon.Packet) bool {
	for _, p := range pkts {
		c.add(p.ID, p.Type, p.Body)
	}
	return c.flush()
}

// Reply is the packets the server's behaviour answers output with for the
// command of id id.
func (c *Conn) Reply(id int32, output string) []rcon.Packet {
	saved := c.pending
	c.pending = nil
	c.output(id, []byte(output))
	b := c.pending
	c.pending = saved
	var pkts []rcon.Packet
	for len(b) > 0 {
		p, n, err := rcon.ParsePacket(b, len(b))
		if err != nil {
			break
		}
		pkts = append(pkts, p)
		b = b[n:]
	}
	return pkts
}

// read returns the next request.
func (c *Conn) read() (rcon.Packet, bool) {
	switch c.b.Read {
	case ReadVanilla:
		// One read of up to 1460 bytes must hold exactly one packet, or
		// the connection is closed.
		buf := make([]byte, vanillaReadSize)
		n, err := c.nc.Read(buf)
		if err != nil {
			return rcon.Packet{}, false
		}
		p, used, err := rcon.ParsePacket(buf[:n], vanillaReadSize)
		switch {
		case err != nil:
			c.srv.hangUp(c, "read of %d bytes is not a whole packet: %v", n, err)
			return rcon.Packet{}, false
		case used != n:
			c.srv.hangUp(c, "read of %d bytes holds more than one packet (%d + %d bytes)", n, used, n-used)
			return rcon.Packet{}, false
		}
		return p, true
	case ReadFirstOnly:
		return c.readFirst()
	}
	p, err := c.rd.ReadPacket()
	if err != nil {
		if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
			c.srv.hangUp(c, "%v", err)
		}
		return rcon.Packet{}, false
	}
	return p, true
}

// readFirst reads until the bytes read hold a whole packet, keeps the
// first and drops the rest of that read, as legacy Rust does.
func (c *Conn) readFirst() (rcon.Packet, bool) {
	buf := c.readBuf[:0]
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, 4096)
		}
		n, err := c.nc.Read(buf[len(buf):cap(buf)])
		if err != nil {
			return rcon.Packet{}, false
		}
		buf = buf[:len(buf)+n]
		p, used, err := rcon.ParsePacket(buf, maxRequestSize)
		if errors.Is(err, rcon.ErrTruncated) {
			continue
		}
		if err != nil {
			c.srv.hangUp(c, "%v", err)
			return rcon.Packet{}, false
		}
		if rest := buf[used:]; len(rest) > 0 {
			c.srv.drop(c, countPackets(rest), true, "not the first packet of the read")
		}
		p.Body = bytes.Clone(p.Body)
		c.readBuf = buf[:0]
		return p, true
	}
}

// countPackets counts the packets that begin in b, the last perhaps
// incomplete.
func countPackets(b []byte) int {
	n := 0
	for len(b) > 0 {
		n++
		_, used, err := rcon.ParsePacket(b, maxRequestSize)
		if err != nil {
			break
		}
		b = b[used:]
	}
	return n
}

// dropBusy drops what arrived together with the request being handled,
// as ARK does.
func (c *Conn) dropBusy() {
	if c.b.Read != ReadDropBusy || c.br.Buffered() == 0 {
		return
	}
	rest, _ := c.br.Peek(c.br.Buffered())
	n := countPackets(rest)
	_, _ = c.br.Discard(len(rest))
	c.srv.drop(c, n, true, "arrived while another request was handled")
}

// add appends one packet to the pending output.
func (c *Conn) add(id int32, typ rcon.PacketType, body []byte) {
	c.pending, _ = rcon.Packet{ID: id, Type: typ, Body: body}.AppendBinary(c.pending)
}

// answer queues the answer to p and reports whether to keep the
// connection.
func (c *Conn) answer(p rcon.Packet) bool {
	b := c.b
	switch {
	case p.Type == rcon.TypeAuth:
		return c.login(p)
	case b.AuthFirst && !c.authed:
		c.srv.hangUp(c, "type %d request before the login", p.Type)
		return false
	case !c.authed && b.UnauthMinus1:
		c.add(-1, rcon.TypeAuthResponse, nil)
	case !c.authed:
		if p.Type == rcon.TypeExecCommand {
			c.add(c.replyID(p.ID), rcon.TypeResponseValue, nil)
		}
	case p.Type == rcon.TypeExecCommand:
		c.command(p)
	case b.LowBytes && p.Type == rcon.TypeRustUTF8:
		c.utf8 = true
	case b.Probe == ProbeHangUp:
		c.srv.hangUp(c, "type %d request is not a command", p.Type)
		return false
	case b.Probe == ProbeUnknownRequest:
		c.add(p.ID, rcon.TypeResponseValue, []byte("Unknown request "+strconv.FormatUint(uint64(uint32(p.Type)), 16)))
	case p.Type == rcon.TypeResponseValue && (b.Probe == ProbeMirror || b.Probe == ProbeMirrorMalformed):
		id := c.replyID(p.ID)
		c.add(id, rcon.TypeResponseValue, nil)
		start := len(c.pending)
		c.add(id, rcon.TypeResponseValue, []byte{0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00})
		if b.Probe == ProbeMirrorMalformed {
			copy(c.pending[start:], []byte{10, 0, 0, 0}) // Squad: size 10, 17 bytes follow
		}
	}
	c.dropBusy()
	return true
}

func (c *Conn) replyID(id int32) int32 {
	if c.b.FixedReplyID {
		return c.b.ReplyID
	}
	return id
}

func (c *Conn) login(p rcon.Packet) bool {
	pw := p.Body
	if i := bytes.IndexByte(pw, 0); i >= 0 {
		pw = pw[:i]
	}
	c.authed = c.srv.Password != "" && subtle.ConstantTimeCompare(pw, []byte(c.srv.Password)) == 1
	if !c.authed {
		switch c.b.BadPassword {
		case BadPasswordClose:
			t := time.NewTimer(squadCloseDelay)
			select {
			case <-t.C:
			case <-c.srv.quit:
				t.Stop()
			}
			c.srv.hangUp(c, "wrong password")
			return false
		case BadPasswordSilent:
			return true
		}
	}
	if c.b.PreAuthEmpty {
		c.add(c.replyID(p.ID), rcon.TypeResponseValue, nil)
	}
	if !c.authed {
		c.add(-1, rcon.TypeAuthResponse, nil)
		if c.b.BadPassword == BadPasswordMinusOneClose {
			c.srv.hangUp(c, "wrong password")
			return false
		}
		return true
	}
	c.add(c.replyID(p.ID), rcon.TypeAuthResponse, nil)
	return true
}

func (c *Conn) command(p rcon.Packet) {
	b := c.b
	cmd := p.Body
	if i := bytes.IndexByte(cmd, 0); i >= 0 {
		cmd = cmd[:i]
	}
	if b.IgnoreEmpty && len(cmd) == 0 {
		return
	}
	c.cmds++
	if n := c.srv.Faults.DropEvery; n > 0 && c.cmds%n == 0 {
		c.srv.drop(c, 1, false, "Faults.DropEvery")
		return
	}
	if b.RustConsole {
		c.add(-1, rcon.TypeRustConsole, c.text("[rcon] executing: "+string(cmd)))
	}
	if b.Chat {
		c.add(0, rcon.TypeChatValue, []byte("[ChatAll] [SteamID:76561198000000000] Player : hello from squad"))
	}
	out := c.run(string(cmd))
	if len(out) == 0 && b.NoOutputReply != "" {
		out = []byte(b.NoOutputReply)
	}
	if b.RustConsole && isSay(cmd) {
		c.add(-1, rcon.TypeResponseValue, c.text(string(out)))
	} else {
		c.output(c.replyID(p.ID), out)
	}
	if b.RustConsole {
		c.add(-1, rcon.TypeResponseValue, nil)
	}
}

// output queues the packets of out, the output of a command answered
// with id, split as the behaviour splits.
func (c *Conn) output(id int32, out []byte) {
	b := c.b
	switch {
	case b.VanillaSplit:
		for _, body := range VanillaFragments(out) {
			c.add(id, rcon.TypeResponseValue, body)
		}
	case b.CutAnywhere:
		for len(out) > b.SplitBytes {
			c.add(id, rcon.TypeResponseValue, out[:b.SplitBytes])
			out = out[b.SplitBytes:]
		}
		c.add(id, rcon.TypeResponseValue, out)
	case b.SplitBytes > 0:
		sp := rcon.NewSplitter(rcon.DialectSource, b.SplitBytes, func(body []byte) error {
			c.add(id, rcon.TypeResponseValue, body)
			return nil
		})
		_, _ = sp.Write(out)
		_ = sp.Close()
	default:
		c.add(id, rcon.TypeResponseValue, c.text(string(out)))
	}
}

// text encodes s as the connection sends text: UTF-8, or for legacy Rust
// before the client asked for UTF-8, each UTF-16 unit cut to its low
// byte.
func (c *Conn) text(s string) []byte {
	if !c.b.LowBytes || c.utf8 {
		return []byte(s)
	}
	units := utf16.Encode([]rune(s))
	b := make([]byte, len(units))
	for i, u := range units {
		b[i] = byte(u)
	}
	return b
}

func isSay(cmd []byte) bool {
	name, _, _ := strings.Cut(string(cmd), " ")
	return strings.EqualFold(name, "say")
}

// run collects the handler's output.
func (c *Conn) run(cmd string) []byte {
	w := &bufferWriter{remote: c.remote}
	var h rcon.Handler = &SimHandler{}
	if c.srv.Handler != nil {
		h = c.srv.Handler
	}
	h.ServeRCON(c.ctx, w, cmd)
	return w.buf
}

// flush writes the pending answers, applying the faults.
func (c *Conn) flush() bool {
	b := c.pending
	c.pending = c.pending[:0]
	if len(b) == 0 {
		return true
	}
	f := c.srv.Faults
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-t.C:
		case <-c.srv.quit:
			t.Stop()
			return false
		}
	}
	drop := false
	if f.DropAfterBytes > 0 && c.written+len(b) >= f.DropAfterBytes {
		b = b[:f.DropAfterBytes-c.written]
		drop = true
	}
	c.written += len(b)
	if err := writePieces(c.nc, b, f.Segments, f.segmentDelay()); err != nil {
		return false
	}
	if drop {
		c.srv.hangUp(c, "Faults.DropAfterBytes reached after %d bytes", c.written)
		return false
	}
	return true
}

// VanillaFragments cuts out as vanilla Minecraft does: into strings of
// 4096 UTF-16 units, each encoded as UTF-8, a lone surrogate (half of a
// pair the cut went through) becoming '?'. Empty output is one empty
// fragment. Joined, they are what a client gets of out from the Minecraft
// profile.
func VanillaFragments(out []byte) [][]byte {
	units := utf16.Encode([]rune(string(out)))
	frags := [][]byte{}
	for len(units) > 0 || len(frags) == 0 {
		n := min(len(units), rcon.MinecraftFragmentUnits)
		frags = append(frags, encodeJavaUTF8(units[:n]))
		units = units[n:]
	}
	return frags
}

func encodeJavaUTF8(units []uint16) []byte {
	var b []byte
	for i := 0; i < len(units); i++ {
		u := rune(units[i])
		switch {
		case utf16.IsSurrogate(u) && i+1 < len(units) && utf16.DecodeRune(u, rune(units[i+1])) != utf8.RuneError:
			b = utf8.AppendRune(b, utf16.DecodeRune(u, rune(units[i+1])))
			i++
		case utf16.IsSurrogate(u):
			b = append(b, '?')
		default:
			b = utf8.AppendRune(b, u)
		}
	}
	return b
}

// bufferWriter collects a handler's output, up to MaxOutput.
type bufferWriter struct {
	buf    []byte
	remote netip.AddrPort
}

func (w *bufferWriter) Write(p []byte) (int, error) { return w.WriteString(string(p)) }

func (w *bufferWriter) WriteString(s string) (int, error) {
	if len(w.buf)+len(s) > MaxOutput {
		return 0, errOutputTooLarge
	}
	w.buf = append(w.buf, s...)
	return len(s), nil
}

func (w *bufferWriter) RemoteAddr() netip.AddrPort { return w.remote }

var _ rcon.ResponseWriter = (*bufferWriter)(nil)
