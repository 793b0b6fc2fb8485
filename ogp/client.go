package ogp

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Client defaults.
const (
	DefaultTimeout       = 2 * time.Second
	DefaultMaxAnswerSize = 1 << 20
	// maxRejections is how many error 3 answers one call accepts.
	maxRejections = 3
	// maxCachedChallenges bounds the challenge cache.
	maxCachedChallenges = 4096
	// readBufferSize holds the largest UDP datagram.
	readBufferSize = 65535
)

// Client queries OGP servers. The zero value is ready to use in [V091].
// A Client owns one UDP socket, opened on first use and shared by every
// call; it is safe for concurrent use. Call [Client.Close] to release it.
type Client struct {
	// Dialect is the wire layout; V091 by default.
	Dialect Dialect
	// Timeout is how long each attempt waits for an answer; the context
	// bounds the whole call. Zero means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times an unanswered request is resent. Error 3
	// re-challenges do not count as retries.
	Retries int
	// MaxBytesPerPacket is the split size the client asks for (500..1500).
	// Zero means DefaultPacketSize.
	MaxBytesPerPacket uint16
	// MaxAnswerSize caps a reassembled split answer. Zero means
	// DefaultMaxAnswerSize.
	MaxAnswerSize int
	// ReadBuffer, if positive, is the receive buffer (SO_RCVBUF) asked for
	// the client's socket, which the kernel may cap. Many queries at once
	// need more than the system default, or answers are dropped.
	ReadBuffer int
	// Debug, if set, sees every datagram sent ("send") and received
	// ("recv") by a call. It is called from the calling goroutines.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	mu         sync.Mutex
	conn       *net.UDPConn
	closed     bool
	calls      map[callKey]chan []byte
	challenges map[netip.AddrPort]uint32
}

type callKey struct {
	addr netip.AddrPort
	id   uint32
}

// Response is the answer to a Default Query.
type Response struct {
	Answer *Answer
	Header Header        // header of the (first) answer datagram
	RTT    time.Duration // from the last send to the first answer datagram
}

// Ping sends a Ping (with the challenge flag, so the answer also tells
// the current challenge) and returns the round-trip time.
func (c *Client) Ping(ctx context.Context, addr netip.AddrPort) (time.Duration, error) {
	_, _, rtt, err := c.exchange(ctx, addr, TypePing, nil)
	return rtt, err
}

// Query sends a Default Query v1 and returns the parsed answer. When the
// error wraps [ErrUnknownField] the Response still holds the sections
// parsed before the unknown bit.
func (c *Client) Query(ctx context.Context, addr netip.AddrPort, q *Query) (*Response, error) {
	body, err := q.Append(nil, c.Dialect)
	if err != nil {
		return nil, err
	}
	h, ab, rtt, err := c.exchange(ctx, addr, TypeDefault, body)
	if err != nil {
		return nil, err
	}
	a, err := ParseAnswer(ab, c.Dialect)
	if a == nil {
		return nil, err
	}
	return &Response{Answer: a, Header: h, RTT: rtt}, err
}

// Close releases the socket. Calls in flight fail with ErrClientClosed.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

func (c *Client) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c *Client) maxAnswer() int {
	if c.MaxAnswerSize > 0 {
		return c.MaxAnswerSize
	}
	return DefaultMaxAnswerSize
}

func (c *Client) packetSize() uint16 {
	if c.MaxBytesPerPacket != 0 {
		return c.MaxBytesPerPacket
	}
	return DefaultPacketSize
}

// register opens the socket if needed and routes answers for key to the
// returned channel.
func (c *Client) register(key callKey) (chan []byte, *net.UDPConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, ErrClientClosed
	}
	if c.conn == nil {
		conn, err := net.ListenUDP("udp", nil)
		if err != nil {
			return nil, nil, err
		}
		if c.ReadBuffer > 0 {
			_ = conn.SetReadBuffer(c.ReadBuffer) // best effort, like the kernel's cap
		}
		c.conn = conn
		c.calls = make(map[callKey]chan []byte)
		go c.readLoop(conn)
	}
	if _, dup := c.calls[key]; dup {
		return nil, nil, errors.New("ogp: duplicate request id")
	}
	ch := make(chan []byte, 32)
	c.calls[key] = ch
	return ch, c.conn, nil
}

func (c *Client) unregister(key callKey) {
	c.mu.Lock()
	delete(c.calls, key)
	c.mu.Unlock()
}

// readLoop hands every datagram that carries a RequestID to the call
// waiting for that (source, RequestID); everything else is dropped.
func (c *Client) readLoop(conn *net.UDPConn) {
	buf := make([]byte, readBufferSize)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				c.mu.Lock()
				for _, ch := range c.calls {
					close(ch)
				}
				c.calls = nil
				c.mu.Unlock()
				return
			}
			continue
		}
		h, _, err := ParseHeader(buf[:n])
		if err != nil || h.Flags&FlagAnswer == 0 || h.Flags&FlagRequestID == 0 {
			continue
		}
		key := callKey{netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), h.RequestID}
		c.mu.Lock()
		if ch, ok := c.calls[key]; ok {
			select {
			case ch <- append([]byte(nil), buf[:n]...):
			default: // the call is flooded; drop
			}
		}
		c.mu.Unlock()
	}
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
		rand.Read(b[:])
		if id := binary.LittleEndian.Uint32(b[:]); id != 0 {
			return id
		}
	}
}

// exchange sends one request until it is answered, re-challenging on
// error 3, and returns the answer's header and (reassembled) body.
func (c *Client) exchange(ctx context.Context, addr netip.AddrPort, typ Type, body []byte) (Header, []byte, time.Duration, error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	if !addr.IsValid() {
		return Header{}, nil, 0, fmt.Errorf("ogp: invalid address %v", addr)
	}
	key := callKey{addr, newID()}
	ch, conn, err := c.register(key)
	if err != nil {
		return Header{}, nil, 0, err
	}
	defer c.unregister(key)

	req := Header{Type: typ, Flags: FlagChallenge | FlagRequestID, RequestID: key.id}
	if typ == TypeDefault {
		req.Flags |= FlagSplit
		req.MaxBytesPerPacket = c.packetSize()
	}
	if c.Dialect == V1 {
		req.Flags |= FlagUTF8
	}
	var asm reassembly
	rejections := 0
	for attempt := 0; ; {
		req.Challenge = c.challenge(addr)
		pkt, _ := req.AppendBinary(nil)
		pkt = append(pkt, body...)
		if c.Debug != nil {
			c.Debug("send", addr, pkt)
		}
		sent := time.Now()
		if _, err := conn.WriteToUDPAddrPort(pkt, addr); err != nil {
			return Header{}, nil, 0, err
		}
		h, ab, rtt, err := c.await(ctx, addr, typ, ch, &asm, sent)
		switch {
		case err == nil:
			return h, ab, rtt, nil
		case errors.Is(err, errRechallenge):
			if rejections++; rejections > maxRejections {
				return Header{}, nil, 0, ErrTooManyChallenges
			}
			asm = reassembly{}
			continue
		case err != errAttemptTimeout:
			return Header{}, nil, 0, err
		}
		if attempt++; attempt > c.Retries {
			return Header{}, nil, 0, fmt.Errorf("%w: no answer from %v after %d attempts%s", ErrTimeout, addr, attempt, asm.progress())
		}
	}
}

var (
	errRechallenge    = errors.New("ogp: re-challenge")
	errAttemptTimeout = errors.New("ogp: attempt timed out")
)

// await waits for the answer to one sent request.
func (c *Client) await(ctx context.Context, addr netip.AddrPort, typ Type, ch chan []byte, asm *reassembly, sent time.Time) (Header, []byte, time.Duration, error) {
	timer := time.NewTimer(c.timeout())
	defer timer.Stop()
	var rtt time.Duration
	for {
		var pkt []byte
		var open bool
		select {
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return Header{}, nil, 0, fmt.Errorf("%w: %w%s", ErrTimeout, ctx.Err(), asm.progress())
			}
			return Header{}, nil, 0, ctx.Err()
		case <-timer.C:
			return Header{}, nil, 0, errAttemptTimeout
		case pkt, open = <-ch:
			if !open {
				return Header{}, nil, 0, ErrClientClosed
			}
		}
		if rtt == 0 {
			rtt = time.Since(sent)
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
				return Header{}, nil, 0, fmt.Errorf("%w: error 3 without a new challenge", &ServerError{Code: e.Code})
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
