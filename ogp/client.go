package ogp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/udpio"
)

// Client defaults, used when the corresponding Client field is zero.
const (
	DefaultTimeout       = 2 * time.Second
	DefaultRetries       = 2
	DefaultMaxAnswerSize = 1 << 20
	// DefaultReadBuffer is the SO_RCVBUF a Client asks for its own
	// socket; the kernel may grant less (net.core.rmem_max on Linux).
	DefaultReadBuffer = 4 << 20
	// maxRejections is how many error 3 answers one call accepts.
	maxRejections = 3
	// maxCachedChallenges bounds the challenge cache.
	maxCachedChallenges = 4096
	// readBufferSize holds the largest UDP datagram.
	readBufferSize = 65535
	// readBatch is how many datagrams the read loop takes per system call
	// (recvmmsg on Linux).
	readBatch = 8
)

// Client queries OGP servers. The zero value is ready to use in [V091].
// A Client owns one UDP socket, opened on first use (or PacketConn) and
// shared by every call; it is safe for concurrent use. Call
// [Client.Close] to release it.
//
// Every error a call returns is an [*OpError] whose cause is a
// [*CallError], which tells what the call sent. A call that got no
// answer fails with [ErrTimeout], unless the server sent datagrams that
// are not OGP meanwhile: then the error matches [ErrNotOGP] and the
// [*ParseError] of the first, and is not a timeout.
type Client struct {
	// Dialect is the wire layout; V091 by default.
	Dialect Dialect
	// Timeout is how long each attempt waits for an answer; the context
	// bounds the whole call. Zero means DefaultTimeout. A call that is
	// never answered takes Timeout × (1 + retries), plus Timeout for
	// each error 3 re-challenge (at most 3).
	Timeout time.Duration
	// Retries is how many times an unanswered request is resent: zero
	// means DefaultRetries, a negative value none. Error 3 re-challenges
	// do not count as retries.
	Retries int
	// MaxBytesPerPacket is the split size the client asks for (500..1500).
	// Zero means DefaultPacketSize.
	MaxBytesPerPacket uint16
	// MaxAnswerSize caps a reassembled split answer. Zero means
	// DefaultMaxAnswerSize.
	MaxAnswerSize int
	// PacketConn is a socket of the caller's to use; the Client owns it
	// from then on, and Close closes it. If nil, the Client opens a UDP
	// socket on LocalAddr on first use.
	PacketConn net.PacketConn
	// LocalAddr is the address the Client binds when it opens its own
	// socket; the zero value means any address, any port.
	LocalAddr netip.AddrPort
	// ReadBuffer is the receive buffer (SO_RCVBUF) asked for the client's
	// own socket: zero means DefaultReadBuffer, a negative value leaves
	// the system default. Many queries at once need a large one, or
	// answers are dropped.
	ReadBuffer int
	// Debug, if set, sees every datagram sent ("send") and received
	// ("recv") by a call. It is called from the calling goroutines and
	// must not retain b.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	mu         sync.Mutex
	conn       net.PacketConn // open, or nil
	closed     bool
	loopErr    error         // why the read loop ended, if it did
	loopDone   chan struct{} // closed when the read loop returns
	calls      map[callKey]chan delivery
	challenges map[netip.AddrPort]uint32
	garbage    map[netip.AddrPort]garbage // datagrams that were not OGP, per source
}

// garbage counts the datagrams from one source that were not OGP, and
// keeps the parse error of the first.
type garbage struct {
	n   uint64
	err error
}

type callKey struct {
	addr netip.AddrPort
	id   uint32
}

// delivery is what the read loop hands a call: a datagram from its
// server, or the network's report that the server is unreachable.
type delivery struct {
	b   []byte
	err error // an ICMP error about the server, as a syscall.Errno
}

// Response is the answer to a Default Query.
type Response struct {
	Answer *Answer
	Header Header        // header of the (first) answer datagram
	RTT    time.Duration // from the last send to the first answer datagram
	Stats  Stats         // what the call sent
}

// Stats counts the request datagrams one Client call sent.
type Stats struct {
	// Sent is every request datagram sent: the first, the resends and
	// the re-challenges. It is 1 + Resent + Rechallenged once anything
	// was sent.
	Sent int
	// Resent counts the requests sent again because the previous one was
	// not answered within Timeout.
	Resent int
	// Rechallenged counts the requests sent again with a new challenge
	// after an error 3 answer.
	Rechallenged int
}

// CallError is the cause inside the [*OpError] of every failed Client
// call: the error itself, and what the call had sent when it ended. Its
// message is Err's.
type CallError struct {
	Err   error
	Stats Stats
}

// Error returns Err's message.
func (e *CallError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *CallError) Unwrap() error { return e.Err }

// DialectError means the server seems to speak the other dialect than the
// Client's, for example a [V1] Client asking a v0.91 server.
type DialectError struct {
	Client Dialect // the dialect the Client spoke
	Server Dialect // the dialect the server seems to speak
	// Sure is true when the answer, which did not parse in the Client's
	// dialect, parses completely in the Server's. It is false when the
	// server answered error 4 (invalid query) to a query whose layout
	// differs between the dialects, which only suggests the other one.
	Sure bool
	Err  error // what failed in the Client's dialect
}

// Error says which dialect the server seems to speak, then why.
func (e *DialectError) Error() string {
	if e.Sure {
		return fmt.Sprintf("ogp: the server answers in dialect %v, not %v: %s", e.Server, e.Client, trimPrefix(e.Err))
	}
	return fmt.Sprintf("ogp: %s: the server may speak dialect %v, which lays out the host name, map, mod and player address fields differently from %v",
		trimPrefix(e.Err), e.Server, e.Client)
}

// Unwrap returns Err.
func (e *DialectError) Unwrap() error { return e.Err }

// Ping sends a Ping (with the challenge flag, so the answer also tells
// the current challenge) and returns the round-trip time.
func (c *Client) Ping(ctx context.Context, addr netip.AddrPort) (time.Duration, error) {
	addr = unmapped(addr)
	_, _, rtt, st, err := c.exchange(ctx, addr, TypePing, nil)
	if err != nil {
		return 0, opError("ping", addr, st, err)
	}
	return rtt, nil
}

// Query sends a Default Query v1 and returns the parsed answer. When the
// error wraps [ErrUnknownField] the Response still holds the sections
// parsed before the unknown bit. When the answer shows that the server
// speaks the other dialect, the error wraps a [*DialectError].
func (c *Client) Query(ctx context.Context, addr netip.AddrPort, q *Query) (*Response, error) {
	addr = unmapped(addr)
	body, err := q.Append(nil, c.Dialect)
	if err != nil {
		return nil, opError("query", addr, Stats{}, err)
	}
	h, ab, rtt, st, err := c.exchange(ctx, addr, TypeDefault, body)
	if err != nil {
		var se *ServerError
		if errors.As(err, &se) && se.Code == ErrorInvalidQuery && q.differs(c.Dialect) {
			err = &DialectError{Client: c.Dialect, Server: c.Dialect.other(), Err: err}
		}
		return nil, opError("query", addr, st, err)
	}
	a, rest, err := parseAnswer(ab, c.Dialect)
	if err != nil || rest > 0 {
		if _, left, berr := parseAnswer(ab, c.Dialect.other()); berr == nil && left == 0 {
			if err == nil {
				err = fmt.Errorf("%d bytes left after the answer", rest)
			}
			return nil, opError("query", addr, st, &DialectError{Client: c.Dialect, Server: c.Dialect.other(), Sure: true, Err: err})
		}
	}
	if a == nil {
		return nil, opError("query", addr, st, err)
	}
	resp := &Response{Answer: a, Header: h, RTT: rtt, Stats: st}
	if err != nil {
		return resp, opError("query", addr, st, err)
	}
	return resp, nil
}

// Close releases the socket. Calls in flight fail with ErrClientClosed.
// It is safe to call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	conn, done := c.conn, c.loopDone
	if conn == nil {
		conn = c.PacketConn
	}
	c.mu.Unlock()
	if conn == nil {
		return nil
	}
	err := conn.Close()
	if done != nil {
		<-done
	}
	return err
}

// differs reports whether q has other bytes in the other dialect than in
// d, so that a server of the other dialect misreads it.
func (q *Query) differs(d Dialect) bool {
	a, err := q.Append(nil, d)
	b, err2 := q.Append(nil, d.other())
	return err == nil && err2 == nil && !bytes.Equal(a, b)
}

// trimPrefix is err's message without its "ogp: " prefix.
func trimPrefix(err error) string { return strings.TrimPrefix(err.Error(), "ogp: ") }

func opError(op string, addr netip.AddrPort, st Stats, err error) error {
	return &OpError{Pkg: "ogp", Op: op, Addr: addr.String(), Err: &CallError{Err: err, Stats: st}}
}

func unmapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (c *Client) timeout() time.Duration { return orDefault(max(c.Timeout, 0), DefaultTimeout) }

// retries is the number of resends: Retries, 0 meaning the default and a
// negative value none.
func (c *Client) retries() int { return max(orDefault(c.Retries, DefaultRetries), 0) }

func (c *Client) maxAnswer() int { return orDefault(max(c.MaxAnswerSize, 0), DefaultMaxAnswerSize) }

func (c *Client) packetSize() uint16 { return orDefault(c.MaxBytesPerPacket, DefaultPacketSize) }

// register opens the socket if needed and routes answers for key to the
// returned channel, which is closed if the read loop ends.
func (c *Client) register(key callKey) (chan delivery, net.PacketConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.closed:
		return nil, nil, ErrClientClosed
	case c.loopErr != nil:
		return nil, nil, c.loopErr
	}
	if c.conn == nil {
		conn, err := c.open()
		if err != nil {
			return nil, nil, err
		}
		c.conn = conn
		c.calls = make(map[callKey]chan delivery)
		c.loopDone = make(chan struct{})
		// The reader asks for ICMP reports before the first send, or the
		// report about it would be lost.
		r := udpio.NewReader(conn, readBufferSize, readBatch)
		r.EnableReports()
		go c.readLoop(r, c.loopDone)
	}
	if _, dup := c.calls[key]; dup {
		return nil, nil, errors.New("ogp: duplicate request id")
	}
	ch := make(chan delivery, 32)
	c.calls[key] = ch
	return ch, c.conn, nil
}

// open returns PacketConn, or a new UDP socket on LocalAddr.
func (c *Client) open() (net.PacketConn, error) {
	if c.PacketConn != nil {
		_ = c.PacketConn.SetReadDeadline(time.Time{}) // the read loop waits for answers
		return c.PacketConn, nil
	}
	var laddr *net.UDPAddr
	if c.LocalAddr.IsValid() {
		laddr = net.UDPAddrFromAddrPort(c.LocalAddr)
	}
	conn, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return nil, fmt.Errorf("ogp: open socket: %w", err)
	}
	if size := orDefault(c.ReadBuffer, DefaultReadBuffer); size > 0 {
		_ = conn.SetReadBuffer(size) // best effort: the kernel caps it
	}
	return conn, nil
}

func (c *Client) unregister(key callKey) {
	c.mu.Lock()
	delete(c.calls, key)
	c.mu.Unlock()
}

// readLoop hands every datagram that carries a RequestID to the call
// waiting for that (source, RequestID), and the network's reports that a
// server is unreachable to every call waiting for that server; everything
// else is dropped. It ends when the socket is closed or fails
// maxReadErrors times in a row, and then fails every pending call.
func (c *Client) readLoop(r *udpio.Reader, done chan struct{}) {
	defer close(done)
	defer r.Close()
	for failures := 0; ; {
		n, err := r.Read()
		if err != nil {
			if isTimeout(err) {
				continue
			}
			if failures++; failures < maxReadErrors && !errors.Is(err, net.ErrClosed) {
				continue
			}
			c.endLoop(err)
			return
		}
		failures = 0
		for _, rep := range r.Reports() {
			c.report(rep)
		}
		for i := range n {
			c.deliver(r.Datagram(i))
		}
	}
}

// deliver hands the datagram b from from to the call it answers.
func (c *Client) deliver(from netip.AddrPort, b []byte) {
	h, _, err := ParseHeader(b)
	if err != nil && from.IsValid() {
		c.noteGarbage(unmapped(from), err)
	}
	if err != nil || !from.IsValid() || h.Flags&FlagAnswer == 0 || h.Flags&FlagRequestID == 0 {
		return
	}
	key := callKey{unmapped(from), h.RequestID}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.calls[key]; ok {
		select {
		case ch <- delivery{b: append([]byte(nil), b...)}:
		default: // the call is flooded; drop
		}
	}
}

// report hands an ICMP error to every call waiting for its server.
func (c *Client) report(rep udpio.Report) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for key, ch := range c.calls {
		if key.addr == rep.Addr {
			select {
			case ch <- delivery{err: rep.Err}:
			default:
			}
		}
	}
}

// endLoop records why the read loop ended and fails the pending calls.
func (c *Client) endLoop(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		c.loopErr = ErrClientClosed
	} else {
		c.loopErr = fmt.Errorf("ogp: read: %w", err)
	}
	for _, ch := range c.calls {
		close(ch)
	}
	c.calls = nil
}

// loopError is the error of a call whose channel was closed.
func (c *Client) loopError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loopErr == nil {
		return ErrClientClosed
	}
	return c.loopErr
}

// noteGarbage counts a datagram from addr that is not OGP.
func (c *Client) noteGarbage(addr netip.AddrPort, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.garbage == nil || len(c.garbage) >= maxCachedChallenges {
		c.garbage = make(map[netip.AddrPort]garbage)
	}
	g := c.garbage[addr]
	if g.err == nil {
		g.err = err
	}
	g.n++
	c.garbage[addr] = g
}

func (c *Client) garbageFrom(addr netip.AddrPort) garbage {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.garbage[addr]
}

// unanswered is the error of a call to addr that timed out with err: it
// says so if addr sent datagrams that were not OGP since the call began
// (when before counted them), and marks err incomplete if part of a split
// answer came.
func (c *Client) unanswered(addr netip.AddrPort, before garbage, asm *reassembly, err error) error {
	if g := c.garbageFrom(addr); g.n > before.n {
		return &notOGP{g.err}
	}
	if asm.got > 0 {
		return incomplete{err}
	}
	return err
}

func (c *Client) challenge(addr netip.AddrPort) uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.challenges[addr]
}

func (c *Client) setChallenge(addr netip.AddrPort, v uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.challenges == nil || len(c.challenges) >= maxCachedChallenges {
		c.challenges = make(map[netip.AddrPort]uint32)
	}
	c.challenges[addr] = v
}

// newID returns a random non-zero request id.
func newID() uint32 {
	var b [4]byte
	for {
		_, _ = rand.Read(b[:]) // never fails on supported platforms
		if id := binary.LittleEndian.Uint32(b[:]); id != 0 {
			return id
		}
	}
}

// exchange sends one request until it is answered, re-challenging on
// error 3, and returns the answer's header and (reassembled) body.
func (c *Client) exchange(ctx context.Context, addr netip.AddrPort, typ Type, body []byte) (Header, []byte, time.Duration, Stats, error) {
	var st Stats
	if !addr.IsValid() {
		return Header{}, nil, 0, st, errors.New("ogp: invalid address")
	}
	if err := ctx.Err(); err != nil {
		return Header{}, nil, 0, st, ctxError(err, nil)
	}
	key := callKey{addr, newID()}
	ch, conn, err := c.register(key)
	if err != nil {
		return Header{}, nil, 0, st, err
	}
	defer c.unregister(key)
	junk := c.garbageFrom(addr)

	req := Header{Type: typ, Flags: FlagChallenge | FlagRequestID, RequestID: key.id}
	if typ == TypeDefault {
		req.Flags |= FlagSplit
		req.MaxBytesPerPacket = c.packetSize()
	}
	if c.Dialect == V1 {
		req.Flags |= FlagUTF8
	}
	var asm reassembly
	retries := c.retries()
	pkt := make([]byte, 0, req.Len()+len(body))
	for {
		req.Challenge = c.challenge(addr)
		pkt, _ = req.AppendBinary(pkt[:0])
		pkt = append(pkt, body...)
		if c.Debug != nil {
			c.Debug("send", addr, pkt)
		}
		sent := time.Now()
		if err := udpio.WriteTo(conn, pkt, addr); err != nil {
			return Header{}, nil, 0, st, fmt.Errorf("ogp: send: %w", err)
		}
		st.Sent++
		h, ab, rtt, err := c.await(ctx, addr, typ, ch, &asm, sent)
		switch {
		case err == nil:
			return h, ab, rtt, st, nil
		case err == errRechallenge:
			if st.Rechallenged == maxRejections {
				return Header{}, nil, 0, st, ErrTooManyChallenges
			}
			st.Rechallenged++
			asm = reassembly{}
			continue
		case errors.Is(err, ErrTimeout): // the context's deadline
			return Header{}, nil, 0, st, c.unanswered(addr, junk, &asm, err)
		case err != errAttemptTimeout:
			return Header{}, nil, 0, st, err
		}
		if st.Resent == retries {
			err := fmt.Errorf("%w after %d %s%s", ErrTimeout, st.Sent, plural(st.Sent, "attempt"), asm.progress())
			return Header{}, nil, 0, st, c.unanswered(addr, junk, &asm, err)
		}
		st.Resent++
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// ctxError is the error of a call whose context ended: a timeout that
// also matches context.DeadlineExceeded, or the cancellation.
func ctxError(err error, asm *reassembly) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (%w)%s", ErrTimeout, err, asm.progress())
	}
	return err
}

var (
	errRechallenge    = errors.New("ogp: re-challenge")
	errAttemptTimeout = errors.New("ogp: attempt timed out")
)

// await waits for the answer to one sent request.
func (c *Client) await(ctx context.Context, addr netip.AddrPort, typ Type, ch chan delivery, asm *reassembly, sent time.Time) (Header, []byte, time.Duration, error) {
	timer := time.NewTimer(c.timeout())
	defer timer.Stop()
	var rtt time.Duration
	for {
		var d delivery
		var open bool
		select {
		case <-ctx.Done():
			return Header{}, nil, 0, ctxError(ctx.Err(), asm)
		case <-timer.C:
			return Header{}, nil, 0, errAttemptTimeout
		case d, open = <-ch:
			if !open {
				return Header{}, nil, 0, c.loopError()
			}
		}
		if d.err != nil {
			return Header{}, nil, 0, &neterr.Unreachable{Sentinel: ErrUnreachable, Err: d.err}
		}
		pkt := d.b
		if rtt == 0 {
			rtt = max(time.Since(sent), 1)
		}
		if c.Debug != nil {
			c.Debug("recv", addr, pkt)
		}
		h, body, err := ParseHeader(pkt)
		if err != nil {
			continue // the read loop parsed it already
		}
		if h.Flags&FlagChallenge != 0 && h.Type != TypeError {
			c.setChallenge(addr, h.Challenge)
		}
		switch h.Type {
		case TypeError:
			e, err := ParseErrorAnswer(body)
			if err != nil {
				return Header{}, nil, 0, err
			}
			if e.Code != ErrorInvalidChallenge {
				return Header{}, nil, 0, &ServerError{Code: e.Code}
			}
			chal, ok := h.Challenge, h.Flags&FlagChallenge != 0
			if !ok {
				chal, ok = e.Challenge()
			}
			if !ok {
				return Header{}, nil, 0, fmt.Errorf("%w without a new challenge", &ServerError{Code: e.Code})
			}
			c.setChallenge(addr, chal)
			return Header{}, nil, 0, errRechallenge
		case typ:
		default:
			continue
		}
		if h.Flags&FlagSplit == 0 {
			return h, body, rtt, nil
		}
		first, whole, err := asm.add(h, body, c.maxAnswer())
		if err != nil {
			return Header{}, nil, 0, err
		}
		if whole != nil {
			return first, whole, rtt, nil
		}
	}
}

// isTimeout reports whether err is a net.Error timeout, such as a read
// deadline set on a caller's socket.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
