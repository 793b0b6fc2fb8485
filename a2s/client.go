package a2s

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Client defaults, used when the corresponding Client field is zero.
const (
	DefaultTimeout         = 2 * time.Second
	DefaultRetries         = 2
	DefaultMaxChallenges   = 3
	DefaultGoldSourceGrace = 50 * time.Millisecond
)

// receiveBufferSize is the read buffer of the client socket: the largest
// UDP payload, because Rust and Unreal games send unsplit replies far
// beyond the spec's 1400 bytes.
const receiveBufferSize = 64 << 10

// socketBufferSize is the SO_RCVBUF asked for the client socket, so that
// bursts of replies from many servers are not dropped by the kernel.
const socketBufferSize = 4 << 20

// defaultReadBatch is how many datagrams one recvmmsg(2) call may return
// to a server loop; clientReadBatch, to the client's read loop, which
// takes the replies of many servers.
const (
	defaultReadBatch = 8
	clientReadBatch  = 32
)

// maxCachedChallenges bounds the per-server challenge cache.
const maxCachedChallenges = 1 << 16

// ErrClientClosed is returned by queries on a closed Client.
var ErrClientClosed = errors.New("a2s: client closed")

// Client queries game servers. It is safe for concurrent use: all queries
// share one UDP socket, read by one goroutine that hands each datagram to
// the query it answers (matched by source address and reply type; stray
// datagrams are dropped). Split replies are reassembled per server, several
// split IDs at a time. On Linux, replies are read with recvmmsg(2) and the
// requests of concurrent queries are sent together with sendmmsg(2): those
// of the queries woken by one batch of replies go out in one call. The
// zero value is ready to use; call Close to release the socket.
//
// Every query follows the challenge protocol whatever its type: an S2C_CHALLENGE
// ('A') reply makes the client resend the request with the echoed 4 bytes, at
// most MaxChallenges times per query. The reading goroutine resends it
// itself, without waking the query, and the resent request gets a whole
// Timeout. The challenge is remembered per server, so Players and Rules
// after Info need no extra round trip; a stale one just earns a new 'A'.
//
// Errors: a query that gets no answer fails with an error matching
// [ErrTimeout] and [os.ErrDeadlineExceeded] (and [context.DeadlineExceeded]
// when the context's deadline ended it); a malformed reply gives a
// [*ParseError]; a server that keeps answering 'A' gives
// [ErrTooManyChallenges]; a server that refuses with an 'l' reply gives a
// [*BannedError] at once.
type Client struct {
	// Timeout is how long one attempt waits for an answer (default 2s).
	// Attempt n (from 0) waits Timeout + n*Timeout/2: a linear backoff.
	Timeout time.Duration
	// Retries is how many times a request is resent after an attempt timed
	// out (default 2). Set it negative for no retry.
	Retries int
	// MaxChallenges bounds the 'A' replies accepted per query (default 3).
	MaxChallenges int
	// GoldSourceGrace is how long Info waits for a Source 'I' reply after
	// an obsolete GoldSource 'm' one, since some GoldSource servers send
	// both (default 50ms; negative disables the wait).
	GoldSourceGrace time.Duration
	// LegacyChallenge makes Players and Rules fetch a missing challenge
	// with A2S_SERVERQUERY_GETCHALLENGE ('W', 0x57) instead of a request
	// carrying -1. The 'W' request is padded with four bytes to the size of
	// the 'A' reply, so that a server refusing to amplify can answer it.
	LegacyChallenge bool
	// PadInfo pads A2S_INFO requests to PaddedInfoSize bytes, the
	// alternative to the challenge that Valve proposed in 2020: a server
	// that accepts it (see [Server.AcceptPaddedInfo]) answers at once, one
	// round trip sooner. Servers that insist on the challenge answer with
	// an 'A' reply as usual, and the resent request is padded too.
	PadInfo bool
	// PacketConn is the socket to use. If nil, the client opens a UDP
	// socket on first use. The Client owns it either way: Close closes it.
	PacketConn net.PacketConn
	// Debug, if set, is called with every datagram sent ("send") and
	// received ("recv"). It must not retain b. Received datagrams are
	// reported from the read loop, so Debug should be quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	initOnce sync.Once
	initErr  error
	conn     net.PacketConn
	udp      *net.UDPConn // conn, when it is one (allocation-free I/O)
	batch    *batchWriter // sends requests with sendmmsg, when available
	loopDone chan struct{}
	epoch    time.Time // origin of now()

	// Owned by the read loop: the requests it resends after 'A' replies,
	// whether it holds the batch writer until the end of a batch of
	// replies, and whether that batch woke a query (see flush).
	resends   []resend
	resendBuf []byte
	holding   bool
	woke      bool

	mu         sync.Mutex
	peers      map[netip.AddrPort]*peer
	freePeers  []*peer
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
	// Ping is the round-trip time of the request that was answered.
	Ping time.Duration
}

// queryKind is what a pending query waits for.
type queryKind uint8

const (
	kindInfo queryKind = iota
	kindPlayers
	kindRules
	kindPing
)

func (k queryKind) String() string {
	switch k {
	case kindInfo:
		return "info"
	case kindPlayers:
		return "players"
	case kindRules:
		return "rules"
	default:
		return "ping"
	}
}

// requestType is the request byte sent for the kind.
func (k queryKind) requestType() byte {
	switch k {
	case kindInfo:
		return TypeInfoRequest
	case kindPlayers:
		return TypePlayerRequest
	case kindRules:
		return TypeRulesRequest
	default:
		return TypePingRequest
	}
}

// kindOf is the kind of query a reply type answers.
func kindOf(replyType byte) (queryKind, bool) {
	switch replyType {
	case TypeInfoReply, TypeInfoReplyGoldSource:
		return kindInfo, true
	case TypePlayerReply:
		return kindPlayers, true
	case TypeRulesReply:
		return kindRules, true
	case TypePingReply:
		return kindPing, true
	}
	return 0, false
}

// peer is the state of a server with pending queries.
type peer struct {
	calls []*call
	reasm Reassembler
}

// event is what the read loop hands to a pending query: a reply, or the
// error that ends the query.
type event struct {
	// reply is a whole reply of the kind the query waits for, header
	// included; the query owns it, and the parsed result aliases it.
	reply []byte
	at    int64 // arrival time, from now() (Info and Ping replies only)
	err   error // when reply is nil
}

// call is one pending query. The read loop answers its 'A' replies itself:
// it resends the request with the new challenge without waking the
// querying goroutine, which only wakes for the reply, an error or its
// timer.
type call struct {
	kind  queryKind
	addr  netip.AddrPort
	ch    chan event
	timer *time.Timer
	req   []byte // the querying goroutine's request buffer

	// Guarded by Client.mu:
	// answered is set once the read loop has handed the query a reply it
	// returns (or an error): later replies of its kind go to others.
	answered bool
	// chal is the challenge of the latest request, if hasChal; 'A'
	// replies go to a query that has not sent theirs yet.
	chal    uint32
	hasChal bool
	// challenges counts the 'A' replies the read loop answered.
	challenges int

	// sentAt is when the latest request was sent, from now(): stamped by
	// the querying goroutine for Info and Ping (the round-trip time), and
	// by the read loop for every request it resends (which restarts the
	// attempt's timeout). Zero when not stamped.
	sentAt atomic.Int64
}

// resend is a request the read loop sends after an 'A' reply.
type resend struct {
	addr netip.AddrPort
	kind queryKind
	chal uint32
}

var callPool = sync.Pool{New: func() any { return newCall() }}

func newCall() *call {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &call{ch: make(chan event, 4), timer: t, req: make([]byte, 0, 64)}
}

func (c *Client) timeout(attempt int) time.Duration {
	t := c.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	return t + time.Duration(attempt)*t/2
}

func (c *Client) retries() int {
	switch {
	case c.Retries < 0:
		return 0
	case c.Retries == 0:
		return DefaultRetries
	}
	return c.Retries
}

func (c *Client) maxChallenges() int {
	if c.MaxChallenges <= 0 {
		return DefaultMaxChallenges
	}
	return c.MaxChallenges
}

func (c *Client) grace() time.Duration {
	switch {
	case c.GoldSourceGrace < 0:
		return 0
	case c.GoldSourceGrace == 0:
		return DefaultGoldSourceGrace
	}
	return c.GoldSourceGrace
}

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
			uc, err := net.ListenUDP("udp", nil)
			if err != nil {
				c.initErr = fmt.Errorf("a2s: open socket: %w", err)
				return
			}
			_ = uc.SetReadBuffer(socketBufferSize) // best effort
			conn = uc
		}
		c.conn = conn
		c.udp, _ = conn.(*net.UDPConn)
		if c.udp != nil {
			if c.batch = newBatchWriter(c.udp); c.batch != nil {
				c.batch.failed = c.sendFailed
			}
		}
		c.peers = make(map[netip.AddrPort]*peer)
		c.challenges = make(map[netip.AddrPort]uint32)
		c.loopDone = make(chan struct{})
		c.epoch = time.Now()
		go c.readLoop()
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

// Info sends A2S_INFO to addr and returns its answer. When the server sends
// both a GoldSource 'm' reply and a Source 'I' reply, Info waits
// GoldSourceGrace after the 'm' one for the 'I' one and returns both (a
// second reply that does not parse is ignored).
func (c *Client) Info(ctx context.Context, addr netip.AddrPort) (*InfoResult, error) {
	cl, ev, rtt, err := c.query(ctx, addr, kindInfo)
	if err != nil {
		return nil, err
	}
	defer c.finish(cl)
	// The result and its first Info come in one allocation.
	blk := &struct {
		res  InfoResult
		info infoBlock
	}{res: InfoResult{Ping: rtt}}
	res := &blk.res
	if err := res.add(ev.reply, &blk.info); err != nil {
		return nil, err
	}
	if res.Info.Format != TypeInfoReplyGoldSource {
		return res, nil
	}
	// A GoldSource 'm' reply: a Source 'I' one may follow.
	g := c.grace()
	if g <= 0 {
		return res, nil
	}
	cl.timer.Reset(g)
	defer cl.timer.Stop()
	for {
		select {
		case ev := <-cl.ch:
			if ev.reply == nil {
				return res, nil // closed: keep what we have
			}
			if err := res.add(ev.reply, nil); err == nil && res.Info.Format != TypeInfoReplyGoldSource {
				return res, nil
			}
		case <-cl.timer.C:
			return res, nil
		case <-ctx.Done():
			return res, nil
		}
	}
}

// add parses an INFO reply, which it takes over, into r; in blk if it is
// not nil.
func (r *InfoResult) add(reply []byte, blk *infoBlock) error {
	info, err := parseInfo(reply, true, blk)
	if err != nil {
		return err
	}
	if info.Format == TypeInfoReplyGoldSource {
		r.GoldSource = info
		if r.Info == nil {
			r.Info = info
		}
		return nil
	}
	r.Info = info
	return nil
}

// Players sends A2S_PLAYER to addr and returns its answer.
func (c *Client) Players(ctx context.Context, addr netip.AddrPort) (*Players, error) {
	cl, ev, _, err := c.query(ctx, addr, kindPlayers)
	if err != nil {
		return nil, err
	}
	c.finish(cl)
	return parsePlayers(ev.reply, true)
}

// Rules sends A2S_RULES to addr and returns its answer.
func (c *Client) Rules(ctx context.Context, addr netip.AddrPort) (*Rules, error) {
	cl, ev, _, err := c.query(ctx, addr, kindRules)
	if err != nil {
		return nil, err
	}
	c.finish(cl)
	return parseRules(ev.reply, true)
}

// Ping sends the deprecated A2A_PING to addr and returns the round-trip
// time. Modern Source servers do not answer it.
func (c *Client) Ping(ctx context.Context, addr netip.AddrPort) (time.Duration, error) {
	cl, ev, rtt, err := c.query(ctx, addr, kindPing)
	if err != nil {
		return 0, err
	}
	c.finish(cl)
	if _, err := ParsePing(ev.reply); err != nil {
		return 0, err
	}
	return rtt, nil
}

var (
	defaultClientOnce sync.Once
	defaultClient     *Client
)

// QueryInfo asks addr for A2S_INFO with a package-level Client that uses
// the defaults, and returns the preferred reply.
func QueryInfo(ctx context.Context, addr netip.AddrPort) (*Info, error) {
	defaultClientOnce.Do(func() { defaultClient = new(Client) })
	res, err := defaultClient.Info(ctx, addr)
	if err != nil {
		return nil, err
	}
	return res.Info, nil
}

// queryError is the error of a query that got no usable answer.
func queryError(kind queryKind, addr netip.AddrPort, err error) error {
	return fmt.Errorf("a2s: %s %s: %w", kind, addr, err)
}

// deadlineError is returned when no answer came before the attempts or the
// context's deadline ran out. It matches ErrTimeout, os.ErrDeadlineExceeded
// and, when ctx ended it, context.DeadlineExceeded.
type deadlineError struct {
	kind queryKind
	addr netip.AddrPort
	ctx  bool
}

func (e *deadlineError) Error() string {
	if e.ctx {
		return fmt.Sprintf("a2s: %s %s: no answer before the context deadline", e.kind, e.addr)
	}
	return fmt.Sprintf("a2s: %s %s: no answer (timeout)", e.kind, e.addr)
}

func (e *deadlineError) Is(target error) bool {
	return target == ErrTimeout || target == os.ErrDeadlineExceeded ||
		(e.ctx && target == context.DeadlineExceeded)
}

// Timeout reports true, as net.Error timeouts do.
func (e *deadlineError) Timeout() bool { return true }

// query runs the request/retry loop of one query and returns the first
// reply of the wanted kind. The read loop answers 'A' replies itself (see
// dispatch); a request it resent restarts the attempt's timeout. On
// success the call is still registered (the caller must finish it), so
// that Info can wait for a second reply.
func (c *Client) query(ctx context.Context, addr netip.AddrPort, kind queryKind) (*call, event, time.Duration, error) {
	if err := c.init(); err != nil {
		return nil, event{}, 0, err
	}
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	cl, chal, has, err := c.register(addr, kind)
	if err != nil {
		return nil, event{}, 0, err
	}
	legacy := c.LegacyChallenge && !has && (kind == kindPlayers || kind == kindRules)
	retries := c.retries()
	// Only Info and Ping report the round-trip time: the others skip the
	// clock.
	timed := kind == kindInfo || kind == kindPing
	fail := func(err error) (*call, event, time.Duration, error) {
		cl.timer.Stop()
		c.finish(cl)
		return nil, event{}, 0, err
	}
	for attempt := 0; ; attempt++ {
		// The clock starts before the write: the read loop may stamp the
		// reply before this goroutine runs again.
		if timed {
			cl.sentAt.Store(c.now())
		}
		if legacy {
			err = c.sendLegacyChallenge(cl)
		} else {
			err = c.send(cl, chal, has)
		}
		if err != nil {
			return fail(queryError(kind, addr, err))
		}
		timeout := c.timeout(attempt)
		cl.timer.Reset(timeout)
		for waiting := true; waiting; {
			select {
			case ev := <-cl.ch:
				if ev.reply == nil {
					return fail(queryError(kind, addr, ev.err))
				}
				cl.timer.Stop()
				var rtt time.Duration
				if timed {
					rtt = max(time.Duration(ev.at-cl.sentAt.Load()), 0)
				}
				return cl, ev, rtt, nil
			case <-cl.timer.C:
				// Each request the read loop resent after an 'A' reply
				// gets the whole timeout of the attempt.
				if left := timeout - time.Duration(c.now()-cl.sentAt.Load()); left > 0 {
					cl.timer.Reset(left)
					continue
				}
				waiting = false
			case <-ctx.Done():
				err := ctx.Err()
				if errors.Is(err, context.DeadlineExceeded) {
					err = &deadlineError{kind: kind, addr: addr, ctx: true}
				} else {
					err = queryError(kind, addr, err)
				}
				return fail(err)
			}
		}
		if attempt == retries {
			return fail(&deadlineError{kind: kind, addr: addr})
		}
		// Retry with the latest challenge, which the read loop may have
		// updated.
		c.mu.Lock()
		chal, has = cl.chal, cl.hasChal
		c.mu.Unlock()
		legacy = legacy && !has
	}
}

// now is the time since the client started, on the monotonic clock.
func (c *Client) now() int64 { return int64(time.Since(c.epoch)) }

// register adds a pending query for addr and returns the cached challenge.
func (c *Client) register(addr netip.AddrPort, kind queryKind) (cl *call, chal uint32, has bool, err error) {
	cl = callPool.Get().(*call)
	cl.kind, cl.addr = kind, addr
	cl.sentAt.Store(0)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.readErr != nil {
		callPool.Put(cl)
		return nil, 0, false, c.closedErrLocked()
	}
	p := c.peers[addr]
	if p == nil {
		if n := len(c.freePeers); n > 0 {
			p = c.freePeers[n-1]
			c.freePeers = c.freePeers[:n-1]
		} else {
			p = new(peer)
		}
		c.peers[addr] = p
	}
	p.calls = append(p.calls, cl)
	chal, has = c.challenges[addr]
	cl.answered, cl.chal, cl.hasChal, cl.challenges = false, chal, has, 0
	return cl, chal, has, nil
}

// closedErrLocked is why queries fail once the client is closed or its
// socket failed. c.mu is held.
func (c *Client) closedErrLocked() error {
	if c.readErr != nil {
		return c.readErr
	}
	return ErrClientClosed
}

// finish unregisters cl, drops what the read loop queued for it and
// recycles it.
func (c *Client) finish(cl *call) {
	c.mu.Lock()
	if p := c.peers[cl.addr]; p != nil {
		for i, x := range p.calls {
			if x == cl {
				last := len(p.calls) - 1
				p.calls[i] = p.calls[last]
				p.calls[last] = nil
				p.calls = p.calls[:last]
				break
			}
		}
		if len(p.calls) == 0 {
			delete(c.peers, cl.addr)
			p.reasm.Reset()
			if len(c.freePeers) < 1024 {
				c.freePeers = append(c.freePeers, p)
			}
		}
	}
	c.mu.Unlock()
	for {
		select {
		case <-cl.ch:
			continue
		default:
		}
		break
	}
	callPool.Put(cl)
}

// request is the request of a query of kind, padded if PadInfo asks.
func (c *Client) request(kind queryKind, chal uint32, has bool) Request {
	r := Request{Type: kind.requestType(), Challenge: chal, HasChallenge: has}
	if c.PadInfo && kind == kindInfo {
		r = r.PadTo(PaddedInfoSize)
	}
	return r
}

// send writes the request of cl, with the challenge if has.
func (c *Client) send(cl *call, chal uint32, has bool) error {
	b, err := c.request(cl.kind, chal, has).AppendBinary(cl.req[:0])
	if err != nil {
		return err
	}
	cl.req = b
	return c.write(cl.addr, b)
}

// sendLegacyChallenge writes A2S_SERVERQUERY_GETCHALLENGE, padded to the
// size of the 'A' reply so that servers that never amplify answer it.
func (c *Client) sendLegacyChallenge(cl *call) error {
	b, err := Request{Type: TypeChallengeRequestLegacy, Padding: 4}.AppendBinary(cl.req[:0])
	if err != nil {
		return err
	}
	cl.req = b
	return c.write(cl.addr, b)
}

// write sends b to addr, through the batch writer when there is one.
func (c *Client) write(addr netip.AddrPort, b []byte) error {
	if c.Debug != nil {
		c.Debug("send", addr, b)
	}
	if c.batch != nil {
		if err := c.batch.write(b, addr); err != errNotBatched {
			return err
		}
	}
	return c.writeDirect(addr, b)
}

func (c *Client) writeDirect(addr netip.AddrPort, b []byte) error {
	var err error
	if c.udp != nil {
		_, err = c.udp.WriteToUDPAddrPort(b, addr)
	} else {
		_, err = c.conn.WriteTo(b, net.UDPAddrFromAddrPort(addr))
	}
	return err
}

// readLoop reads every datagram of the socket and dispatches it.
func (c *Client) readLoop() {
	defer close(c.loopDone)
	c.fail(readBatches(c.conn, receiveBufferSize, clientReadBatch, c.received, c.flush))
}

// maxReadErrors is how many read errors in a row (other than a closed
// socket) end a read loop; a single one, such as ICMP feedback reported on
// some systems, is skipped.
const maxReadErrors = 16

// readDatagrams reads pc until it is closed or fails maxReadErrors times in
// a row, handing each datagram (up to size bytes) to fn. It uses recvmmsg
// where available.
func readDatagrams(pc net.PacketConn, size int, fn func(from netip.AddrPort, b []byte)) error {
	return readBatches(pc, size, defaultReadBatch, fn, nil)
}

// readBatches is readDatagrams reading up to batch datagrams per recvmmsg
// call, and calling end (if not nil) after each batch of datagrams.
func readBatches(pc net.PacketConn, size, batch int, fn func(from netip.AddrPort, b []byte), end func()) error {
	udp, _ := pc.(*net.UDPConn)
	var br *batchReader
	if udp != nil {
		br = newBatchReader(udp, size, batch)
	}
	var buf []byte
	if br == nil {
		buf = make([]byte, size)
	}
	for failures := 0; ; {
		var err error
		switch {
		case br != nil:
			err = br.run(func(from netip.AddrPort, b []byte) {
				failures = 0
				fn(from, b)
			}, end)
		case udp != nil:
			var n int
			var from netip.AddrPort
			if n, from, err = udp.ReadFromUDPAddrPort(buf); err == nil {
				fn(from, buf[:n])
			}
		default:
			var n int
			var a net.Addr
			if n, a, err = pc.ReadFrom(buf); err == nil {
				if ua, ok := a.(*net.UDPAddr); ok {
					fn(ua.AddrPort(), buf[:n])
				}
			}
		}
		if br == nil && end != nil {
			end()
		}
		switch {
		case err == nil:
			failures = 0
		case errors.Is(err, net.ErrClosed):
			return err
		default:
			if failures++; failures >= maxReadErrors {
				return err
			}
		}
	}
}

// received handles one datagram.
func (c *Client) received(from netip.AddrPort, b []byte) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	if c.Debug != nil {
		c.Debug("recv", from, b)
	}
	c.dispatch(from, b)
}

// flush sends the requests queued while the read loop held the batch
// writer, during a batch of datagrams: the requests it resent after 'A'
// replies and those of the queries it woke, in as few sendmmsg(2) calls as
// they fit in.
func (c *Client) flush() {
	woke := c.woke
	c.woke = false
	if !c.holding {
		return
	}
	c.holding = false
	if woke {
		// Let the queries this batch woke run first (on this P they wait
		// for the read loop to yield anyway): their next requests join
		// the queue, and one system call sends them all.
		runtime.Gosched()
	}
	_ = c.batch.flush() // failures go to sendFailed
}

// sendFailed fails the pending queries to addr after the kernel refused to
// send a datagram there.
func (c *Client) sendFailed(addr netip.AddrPort, err error) {
	addr = netip.AddrPortFrom(addr.Addr().Unmap(), addr.Port())
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.peers[addr]; p != nil {
		p.fail(err)
	}
}

// fail ends the pending queries after the socket failed or was closed.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed && c.readErr == nil {
		c.readErr = fmt.Errorf("a2s: read: %w", err)
	}
	ev := event{err: c.closedErrLocked()}
	for _, p := range c.peers {
		for _, cl := range p.calls {
			select {
			case cl.ch <- ev:
			default:
			}
		}
	}
}

// dispatch hands one datagram from addr to the pending queries it answers,
// and resends the requests its 'A' reply asks for.
func (c *Client) dispatch(from netip.AddrPort, b []byte) {
	if len(b) < 5 {
		return
	}
	c.mu.Lock()
	c.dispatchLocked(from, b)
	c.mu.Unlock()
	for _, r := range c.resends {
		c.resendRequest(r)
	}
	c.resends = c.resends[:0]
}

// dispatchLocked is dispatch with c.mu held.
func (c *Client) dispatchLocked(from netip.AddrPort, b []byte) {
	p := c.peers[from]
	if p == nil {
		return // nobody is waiting for this server
	}
	var payload []byte
	owned := false // payload is a fresh slice the client may keep
	switch hdr := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24; hdr {
	case HeaderSimple:
		payload = b
	case HeaderSplit:
		f, err := ParseFragment(b)
		if err != nil {
			return
		}
		whole, done, err := p.reasm.Add(f)
		if err != nil || !done {
			return
		}
		payload, owned = whole, true // it starts with the 0xFFFFFFFF header
	default:
		return
	}
	if !hasHeader(payload) {
		return
	}
	switch payload[4] {
	case TypeChallengeReply:
		c.challenged(p, from, payload)
	case TypeBannedReply:
		c.refused(p, payload)
	default:
		c.deliver(p, payload, owned)
	}
}

// refused ends every query waiting on p with the server's 'l' refusal:
// retrying would only be refused again. c.mu is held.
func (c *Client) refused(p *peer, payload []byte) {
	msg, err := ParseBanned(payload)
	if err != nil {
		return
	}
	p.fail(&BannedError{Message: msg})
}

// fail ends the unanswered queries of p with err. Client.mu is held.
func (p *peer) fail(err error) {
	for _, cl := range p.calls {
		if cl.answered {
			continue
		}
		cl.answered = true
		select {
		case cl.ch <- event{err: err}:
		default:
		}
	}
}

// challenged handles an 'A' reply from addr: it caches the challenge and
// queues the request of the query it answers for resending. c.mu is held.
func (c *Client) challenged(p *peer, from netip.AddrPort, payload []byte) {
	chal, err := ParseChallenge(payload)
	if err != nil {
		return
	}
	if _, ok := c.challenges[from]; !ok && len(c.challenges) >= maxCachedChallenges {
		for k := range c.challenges { // evict an arbitrary entry
			delete(c.challenges, k)
			break
		}
	}
	c.challenges[from] = chal
	// It answers the oldest unanswered query that has not sent this
	// challenge yet. When all have, it is a duplicate, or the 'A' of a
	// request whose query was answered meanwhile: drop it. (A server that
	// rejects a challenge sends a new one.) The query is marked as having
	// sent it right away, so that the next 'A' goes to the next query.
	for _, cl := range p.calls {
		if cl.answered || (cl.hasChal && cl.chal == chal) {
			continue
		}
		cl.chal, cl.hasChal = chal, true
		if cl.challenges++; cl.challenges > c.maxChallenges() {
			cl.answered = true
			select {
			case cl.ch <- event{err: ErrTooManyChallenges}:
			default:
			}
			return
		}
		cl.sentAt.Store(c.now())
		c.resends = append(c.resends, resend{addr: from, kind: cl.kind, chal: chal})
		return
	}
}

// resendRequest sends a request the read loop queued after an 'A' reply.
// With a batch writer, it is sent by flush at the end of the batch of
// datagrams being read, with the others (and with the requests of queries
// that start meanwhile).
func (c *Client) resendRequest(r resend) {
	b, err := c.request(r.kind, r.chal, true).AppendBinary(c.resendBuf[:0])
	if err != nil {
		return
	}
	c.resendBuf = b
	if c.Debug != nil {
		c.Debug("send", r.addr, b)
	}
	if c.batch != nil {
		switch held, err := c.batch.hold(b, r.addr); err {
		case nil:
			c.holding = c.holding || held
			return
		case errNotBatched:
		default:
			return
		}
	}
	_ = c.writeDirect(r.addr, b) // a lost request is retried on timeout
}

// deliver hands a whole reply to the queries of p waiting for it; an owned
// payload is handed over without a copy. c.mu is held.
func (c *Client) deliver(p *peer, payload []byte, owned bool) {
	kind, ok := kindOf(payload[4])
	if !ok {
		return
	}
	// Every query waiting for this kind gets the reply (any answer of the
	// server will do), except those already answered. A GoldSource 'm'
	// INFO reply does not count as the answer: an 'I' one may follow.
	final := payload[4] != TypeInfoReplyGoldSource
	var at int64 // arrival time, read for the queries that report it
	if kind == kindInfo || kind == kindPing {
		at = c.now()
	}
	for _, cl := range p.calls {
		if cl.kind != kind || cl.answered {
			continue
		}
		ev := event{at: at, reply: payload}
		if !owned {
			ev.reply = bytes.Clone(payload)
		}
		select {
		case cl.ch <- ev:
			owned = false // handed over: the next query gets a copy
			cl.answered = final
			if c.batch != nil {
				// Hold the writer until the end of the batch: see flush.
				c.holding = c.holding || c.batch.tryHold()
				c.woke = true
			}
		default:
		}
	}
}

// hasHeader reports whether b is a whole reply: the 0xFFFFFFFF header and a
// type byte.
func hasHeader(b []byte) bool {
	return len(b) >= 5 && b[0] == 0xFF && b[1] == 0xFF && b[2] == 0xFF && b[3] == 0xFF
}
