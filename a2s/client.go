package a2s

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/udpio"
)

// receiveBufferSize is the read buffer of a datagram: the largest UDP
// payload, because Rust and Unreal games send unsplit replies far beyond
// the spec's 1400 bytes.
const receiveBufferSize = 64 << 10

// DefaultReadBuffer is the SO_RCVBUF a Client asks for its socket, so that
// bursts of replies from many servers are not dropped by the kernel.
const DefaultReadBuffer = 4 << 20

// clientReadBatch is how many datagrams one read of the client's socket
// may return (recvmmsg(2) on Linux).
const clientReadBatch = 32

// maxCachedChallenges bounds the per-server challenge cache.
const maxCachedChallenges = 1 << 16

// callQueue is how many datagrams the read loop queues for a query before
// it drops the next ones: a query that is busy (decompressing, say) holds
// up no one else.
const callQueue = 64

// maxReadErrors is how many read errors in a row (other than a closed
// socket) end the read loop.
const maxReadErrors = 16

// ErrClientClosed is returned by queries on a closed Client.
var ErrClientClosed = errors.New("a2s: client closed")

// Client queries game servers. It is safe for concurrent use: all queries
// share one UDP socket, read by one goroutine that hands each datagram to
// the queries of the server that sent it. Each query is a [Conversation]
// run by the calling goroutine: it sends the requests, parses the replies,
// reassembles and decompresses split ones, so a hostile server's
// decompression bomb costs its own query's goroutine and holds up no one
// else. The zero value is ready to use; call Close to release the socket.
//
// A query asks for the challenge first and then, with it, for every
// section left at once; the challenge is remembered per server, so the
// next query to it needs no extra round trip (a stale one just earns a new
// one). An unanswered request is sent again after Timeout, half as long
// again on each resend, Retries times, and the whole query takes at most
// Deadline: with the defaults, 1 s, 1.5 s and 2.25 s, so a silent server
// fails after 4.75 s and never after more than 5 s.
//
// Errors are [*OpError] values naming the section and the server. A query
// that gets no answer fails with an error matching [ErrTimeout] and
// [os.ErrDeadlineExceeded] (and [context.DeadlineExceeded] when the
// context's deadline ended it); one whose server sent only what is not A2S
// with [ErrNotA2S]; on Linux, one to a closed port with [ErrUnreachable]
// at once (when the server's host sends the ICMP error: hosts rate-limit
// them); a malformed reply gives a [*ParseError]; a server that keeps
// sending new challenges gives [ErrTooManyChallenges]; a server that
// refuses with an 'l' reply gives a [*BannedError] at once.
//
// Set the fields before the first query; the socket options are read
// once, the others at the start of each query.
type Client struct {
	// Timeout is how long the first send of a request waits for its answer
	// (default DefaultTimeout, 1s); each resend waits half as long again.
	Timeout time.Duration
	// Retries is how many times an unanswered request is sent again
	// (default DefaultRetries, 2). Set it negative for none.
	Retries int
	// Deadline is the most time one query takes, from its first request,
	// whatever the retries (default DefaultDeadline, 5s). Set it negative
	// for none: Timeout and Retries then bound the wait.
	Deadline time.Duration
	// MaxChallenges bounds the new challenges accepted per query (default
	// DefaultMaxChallenges, 3).
	MaxChallenges int
	// GoldSourceGrace is how long Info waits for a Source 'I' reply after
	// an obsolete GoldSource 'm' one, since some GoldSource servers send
	// both (default 50ms; negative disables the wait).
	GoldSourceGrace time.Duration
	// LegacyChallenge fetches a missing challenge with the deprecated
	// A2S_SERVERQUERY_GETCHALLENGE request (see [Query.LegacyChallenge]).
	LegacyChallenge bool
	// PadInfo pads A2S_INFO requests to PaddedInfoSize bytes, which a
	// server may answer without a challenge (see [Query.PadInfo]). Servers
	// that insist on the challenge answer with an 'A' reply as usual, and
	// the resent request is padded too.
	PadInfo bool
	// PacketConn is the socket to use. If nil, the client opens a UDP
	// socket on first use. The Client owns it either way: Close closes it.
	PacketConn net.PacketConn
	// LocalAddr is the address the client binds when it opens its own
	// socket; the zero value binds every interface on a free port.
	LocalAddr netip.AddrPort
	// ReadBuffer is the SO_RCVBUF asked for the socket (default
	// DefaultReadBuffer, 4 MB; the kernel caps it).
	ReadBuffer int
	// Debug, if set, is called with every datagram sent ("send") and
	// received ("recv"). It must not retain b. Received datagrams are
	// reported from the read loop, so Debug should be quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	initOnce sync.Once
	initErr  error
	conn     net.PacketConn
	loopDone chan struct{} // closed when the read loop has returned

	mu         sync.Mutex
	peers      map[netip.AddrPort]*call // the queries of each server, linked by next
	challenges map[netip.AddrPort]uint32
	closed     bool
	readErr    error
}

// InfoResult is the answer to an A2S_INFO query.
type InfoResult struct {
	// Info is the preferred reply: the Source 'I' one when received, else
	// the obsolete GoldSource 'm' one.
	Info *Info
	// GoldSource is the 'm' reply when one was received (it is Info when
	// that was the only reply), nil otherwise.
	GoldSource *Info
	// RTT is the round-trip time of the query (see [Result.RTT]).
	RTT time.Duration
}

// call is one query in progress: the read loop queues the datagrams of its
// server on ch, and the querying goroutine runs the conversation.
type call struct {
	addr  netip.AddrPort
	next  *call // the next query of the same server
	ch    chan event
	timer *time.Timer
	query Query
	conv  Conversation
	req   []byte // the request buffer
}

// event is what the read loop hands a query: a datagram (which the query
// owns), or an ICMP error about its server.
type event struct {
	b      []byte
	err    error
	pooled *[]byte // b's buffer, to recycle once digested: a split fragment
}

// fragmentPool recycles the buffers of split fragments, which the
// reassembler copies: unlike whole replies, which the results alias.
var fragmentPool = sync.Pool{New: func() any {
	b := make([]byte, 0, pooledFragment)
	return &b
}}

// pooledFragment is the capacity of a pooled fragment buffer: the most a
// Reassembler takes by default.
const pooledFragment = DefaultMaxFragmentSize

// recycle returns ev's buffer to its pool, if it has one.
func (ev *event) recycle() {
	if ev.pooled != nil {
		*ev.pooled = ev.b[:0]
		fragmentPool.Put(ev.pooled)
	}
}

var callPool = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &call{ch: make(chan event, callQueue), timer: t, req: make([]byte, 0, 64)}
}}

// init opens the socket and starts the read loop once.
func (c *Client) init() error {
	c.initOnce.Do(func() {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			c.initErr = ErrClientClosed
			return
		}
		conn := c.PacketConn
		if conn == nil {
			uc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(c.LocalAddr))
			if err != nil {
				c.initErr = fmt.Errorf("a2s: open socket: %w", err)
				return
			}
			conn = uc
		}
		if uc, ok := conn.(*net.UDPConn); ok {
			size := c.ReadBuffer
			if size <= 0 {
				size = DefaultReadBuffer
			}
			_ = uc.SetReadBuffer(size) // best effort: the kernel caps it
		}
		c.conn = conn
		c.peers = make(map[netip.AddrPort]*call)
		c.challenges = make(map[netip.AddrPort]uint32)
		c.loopDone = make(chan struct{})
		r := udpio.NewReader(conn, receiveBufferSize, clientReadBatch)
		r.EnableReports() // a closed port fails its query at once (Linux)
		go c.readLoop(r)
	})
	return c.initErr
}

// Close closes the socket and fails the pending queries with
// ErrClientClosed. It is safe to call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	c.initOnce.Do(func() { c.initErr = ErrClientClosed }) // not started: never start
	if c.conn == nil {
		if c.PacketConn != nil {
			return c.PacketConn.Close()
		}
		return nil
	}
	err := c.conn.Close()
	<-c.loopDone
	return err
}

// Query asks addr for the sections wanted (zero means AllSections) in one
// conversation: once the challenge is known, every section is asked at
// once, and the whole query takes at most Deadline. The Result holds each
// section's value or error; err is nil when every section was answered,
// else the error of the first section that failed. The Result is nil only
// when the query could not start (the client is closed, or its socket
// could not be opened).
func (c *Client) Query(ctx context.Context, addr netip.AddrPort, sections Sections) (*Result, error) {
	return c.QueryFunc(ctx, addr, sections, nil)
}

// QueryFunc is Query that reports each section as it ends, so that a
// program can show the answers that came while it waits for the others:
// each, when not nil, is called with the sections that have just ended
// (answered or failed) and the result so far. Every section is reported
// once; a GoldSource server's INFO once its GoldSourceGrace is over. each
// runs on the goroutine of QueryFunc, between the steps of the query, so
// it should be quick; r is valid during the call only, but the values it
// points to stay valid.
func (c *Client) QueryFunc(ctx context.Context, addr netip.AddrPort, sections Sections, each func(ended Sections, r *Result)) (*Result, error) {
	cl, err := c.run(ctx, addr, sections, each)
	if err != nil {
		return nil, err
	}
	res := new(Result)
	*res = *cl.conv.Result()
	c.release(cl)
	return res, res.firstErr()
}

// firstErr is the error of the first section that failed.
func (r *Result) firstErr() error {
	for _, err := range [...]error{r.InfoErr, r.PlayersErr, r.RulesErr, r.PingErr} {
		if err != nil {
			return err
		}
	}
	return nil
}

// Info sends A2S_INFO to addr and returns its answer. When the server sends
// both a GoldSource 'm' reply and a Source 'I' reply, Info waits
// GoldSourceGrace after the 'm' one for the 'I' one and returns both.
func (c *Client) Info(ctx context.Context, addr netip.AddrPort) (*InfoResult, error) {
	cl, err := c.run(ctx, addr, SectionInfo, nil)
	if err != nil {
		return nil, err
	}
	defer c.release(cl)
	r := cl.conv.Result()
	if r.InfoErr != nil {
		return nil, r.InfoErr
	}
	return &InfoResult{Info: r.Info, GoldSource: r.GoldSource, RTT: r.RTT}, nil
}

// Players sends A2S_PLAYER to addr and returns its answer.
func (c *Client) Players(ctx context.Context, addr netip.AddrPort) (*Players, error) {
	cl, err := c.run(ctx, addr, SectionPlayers, nil)
	if err != nil {
		return nil, err
	}
	defer c.release(cl)
	r := cl.conv.Result()
	return r.Players, r.PlayersErr
}

// Rules sends A2S_RULES to addr and returns its answer.
func (c *Client) Rules(ctx context.Context, addr netip.AddrPort) (*Rules, error) {
	cl, err := c.run(ctx, addr, SectionRules, nil)
	if err != nil {
		return nil, err
	}
	defer c.release(cl)
	r := cl.conv.Result()
	return r.Rules, r.RulesErr
}

// Ping sends the deprecated A2A_PING to addr and returns the round-trip
// time. Modern Source servers do not answer it.
func (c *Client) Ping(ctx context.Context, addr netip.AddrPort) (time.Duration, error) {
	cl, err := c.run(ctx, addr, SectionPing, nil)
	if err != nil {
		return 0, err
	}
	defer c.release(cl)
	r := cl.conv.Result()
	if r.PingErr != nil {
		return 0, r.PingErr
	}
	return r.RTT, nil
}

// QueryInfo asks addr for A2S_INFO with a Client of its own, using the
// defaults, which it closes before returning, and returns the preferred
// reply. Programs that query more than once should keep a Client.
func QueryInfo(ctx context.Context, addr netip.AddrPort) (*Info, error) {
	c := new(Client)
	defer c.Close()
	res, err := c.Info(ctx, addr)
	if err != nil {
		return nil, err
	}
	return res.Info, nil
}

// query is the Query of the client's fields, for sections.
func (c *Client) query(sections Sections) Query {
	return Query{
		Sections:        sections,
		Timeout:         c.Timeout,
		Retries:         c.Retries,
		Deadline:        c.Deadline,
		MaxChallenges:   c.MaxChallenges,
		GoldSourceGrace: c.GoldSourceGrace,
		LegacyChallenge: c.LegacyChallenge,
		PadInfo:         c.PadInfo,
	}
}

// run holds the conversation of one query with addr until it is done. The
// caller reads its result, then releases the call.
func (c *Client) run(ctx context.Context, addr netip.AddrPort, sections Sections, each func(Sections, *Result)) (*call, error) {
	if err := c.init(); err != nil {
		return nil, err
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	cl := callPool.Get().(*call)
	cl.addr = addr
	cl.query = c.query(sections)
	chal, has, err := c.register(cl)
	if err != nil {
		callPool.Put(cl)
		return nil, err
	}
	conv := &cl.conv
	conv.Start(&cl.query, addr, chal, has)
	var reported Sections
	for {
		now := time.Now()
		c.sendPending(cl, now)
		if each != nil {
			if ended := conv.ended() &^ reported; ended != 0 {
				reported |= ended
				each(ended, conv.Result())
			}
		}
		if conv.Done() {
			break
		}
		wake := conv.Wake()
		cl.timer.Reset(wake.Sub(now))
		select {
		case ev := <-cl.ch:
			c.handle(cl, ev)
			for more := true; more && !conv.Done(); {
				select {
				case ev := <-cl.ch:
					c.handle(cl, ev)
				default:
					more = false
				}
			}
		case <-cl.timer.C:
			conv.Tick(time.Now())
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				conv.expire()
			} else {
				conv.Fail(ctx.Err())
			}
		case <-c.loopDone:
			c.mu.Lock()
			err := c.closedErrLocked()
			c.mu.Unlock()
			conv.Fail(err)
		}
	}
	cl.timer.Stop()
	c.unregister(cl)
	return cl, nil
}

// handle hands an event of the read loop to cl's conversation.
func (c *Client) handle(cl *call, ev event) {
	if ev.err != nil {
		cl.conv.Unreachable(ev.err)
		return
	}
	cl.conv.receive(ev.b, ev.pooled == nil, time.Now())
	ev.recycle()
}

// sendPending sends the requests cl's conversation has ready.
func (c *Client) sendPending(cl *call, now time.Time) {
	for {
		b, ok := cl.conv.AppendRequest(cl.req[:0], now)
		if !ok {
			return
		}
		cl.req = b
		if c.Debug != nil {
			c.Debug("send", cl.addr, b)
		}
		if err := udpio.WriteTo(c.conn, b, cl.addr); err != nil {
			if errors.Is(err, net.ErrClosed) {
				c.mu.Lock()
				if c.closed || c.readErr != nil {
					err = c.closedErrLocked() // closed while the request went out
				}
				c.mu.Unlock()
			}
			cl.conv.Fail(err)
			return
		}
	}
}

// release recycles a call whose result has been read.
func (c *Client) release(cl *call) {
	for {
		select {
		case ev := <-cl.ch:
			ev.recycle()
			continue
		default:
		}
		break
	}
	cl.conv.res = Result{} // let go of the parsed replies
	callPool.Put(cl)
}

// register adds cl to its server's queries and returns the cached
// challenge.
func (c *Client) register(cl *call) (chal uint32, has bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.readErr != nil {
		return 0, false, c.closedErrLocked()
	}
	cl.next = c.peers[cl.addr]
	c.peers[cl.addr] = cl
	chal, has = c.challenges[cl.addr]
	return chal, has, nil
}

// unregister removes cl from its server's queries and keeps the challenge
// its conversation learned.
func (c *Client) unregister(cl *call) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if head := c.peers[cl.addr]; head == cl {
		if cl.next == nil {
			delete(c.peers, cl.addr)
		} else {
			c.peers[cl.addr] = cl.next
		}
	} else {
		for p := head; p != nil; p = p.next {
			if p.next == cl {
				p.next = cl.next
				break
			}
		}
	}
	cl.next = nil
	if chal, ok := cl.conv.Challenge(); ok {
		if _, known := c.challenges[cl.addr]; !known && len(c.challenges) >= maxCachedChallenges {
			for k := range c.challenges { // evict an arbitrary entry
				delete(c.challenges, k)
				break
			}
		}
		c.challenges[cl.addr] = chal
	}
}

// closedErrLocked is why queries fail once the client is closed or its
// socket failed. c.mu is held.
func (c *Client) closedErrLocked() error {
	if c.readErr != nil {
		return c.readErr
	}
	return ErrClientClosed
}

// readLoop reads every datagram of the socket and hands it to the queries
// of its server, until the socket is closed or fails maxReadErrors times
// in a row.
func (c *Client) readLoop(r *udpio.Reader) {
	defer close(c.loopDone)
	defer r.Close()
	for failures := 0; ; {
		n, err := r.Read()
		if err != nil {
			if !errors.Is(err, net.ErrClosed) {
				if failures++; failures < maxReadErrors {
					continue
				}
			}
			c.mu.Lock()
			if !c.closed && c.readErr == nil {
				c.readErr = fmt.Errorf("a2s: read: %w", err)
			}
			c.mu.Unlock()
			return
		}
		failures = 0
		for _, rep := range r.Reports() {
			c.deliver(rep.Addr, nil, rep.Err)
		}
		for i := range n {
			from, b := r.Datagram(i)
			if c.Debug != nil {
				c.Debug("recv", from, b)
			}
			c.deliver(from, b, nil)
		}
	}
}

// deliver queues a copy of datagram b, or the ICMP error err, for every
// query of the server at addr. A query whose queue is full misses it.
func (c *Client) deliver(addr netip.AddrPort, b []byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for cl := c.peers[addr]; cl != nil; cl = cl.next {
		ev := event{err: err}
		switch {
		case err != nil:
		case len(b) <= pooledFragment && len(b) >= 4 && b[0] == 0xFE:
			ev.pooled = fragmentPool.Get().(*[]byte)
			ev.b = append(*ev.pooled, b...)
		default:
			ev.b = append([]byte(nil), b...)
		}
		select {
		case cl.ch <- ev:
		default:
			ev.recycle()
		}
	}
}
