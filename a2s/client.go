package a2s

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// DefaultReadBuffer is the SO_RCVBUF a Client asks for its socket, so that
// bursts of replies from many servers are not dropped by the kernel.
const DefaultReadBuffer = udpclient.DefaultReadBuffer

// ErrClientClosed is returned by queries on a closed Client.
var ErrClientClosed = errors.New("a2s: client closed")

// Client queries game servers. It is safe for concurrent use: all queries
// share one UDP socket, read by one goroutine that hands each datagram to
// the queries of the server that sent it (the transport ogp.Client and
// the scan engine share too). Each query is a [Conversation]
// run by the calling goroutine: it sends the requests, parses the replies,
// reassembles and decompresses split ones, so a hostile server's
// decompression bomb costs its own query's goroutine and holds up no one
// else. The zero value is ready to use; call Close to release the socket.
//
// A query asks for the challenge first and then, with it, for every
// section left at once; the challenge is remembered per server, so the
// next query to it needs no extra round trip (a stale one just earns a new
// one). The client remembers 65,536 servers' challenges; past that, a new
// server takes the place of one not asked for a while. An unanswered request is sent again after Timeout, half as long
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
	// A2S_SERVERQUERY_GETCHALLENGE request (see [Options.LegacyChallenge]).
	LegacyChallenge bool
	// PadInfo pads A2S_INFO requests to PaddedInfoSize bytes, which a
	// server may answer without a challenge (see [Options.PadInfo]). Servers
	// that insist on the challenge answer with an 'A' reply as usual, and
	// the resent request is padded too.
	PadInfo bool
	// PacketConn is the socket to use. If nil, the client opens a UDP
	// socket on first use. The Client owns it either way: Close closes it.
	PacketConn net.PacketConn
	// LocalAddr is the address the client binds when it opens its own
	// socket; the zero value binds every interface on a free port.
	LocalAddr netip.AddrPort
	// ReadBuffer is the SO_RCVBUF asked for the socket: zero means
	// DefaultReadBuffer, 4 MB (the kernel caps it), a negative value the
	// system's default.
	ReadBuffer int
	// Debug, if set, is called with every datagram sent ("send") and
	// received ("recv"). It must not retain b. Received datagrams are
	// reported from the read loop, so Debug should be quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	initOnce   sync.Once
	initErr    error
	t          *udpclient.Transport
	challenges *udpclient.Challenges

	mu     sync.Mutex
	closed bool
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

// call is one query in progress, pooled: its conversation and the
// options it reads.
type call struct {
	opts Options
	conv Conversation
}

var callPool = sync.Pool{New: func() any { return new(call) }}

// init opens the transport once.
func (c *Client) init() error {
	c.initOnce.Do(func() {
		c.mu.Lock()
		closed := c.closed
		c.mu.Unlock()
		if closed {
			c.initErr = ErrClientClosed
			return
		}
		t, err := udpclient.Open(udpclient.Config{
			Conn: c.PacketConn, LocalAddr: c.LocalAddr, ReadBuffer: c.ReadBuffer,
			Name: "a2s", ErrClosed: ErrClientClosed, Debug: c.Debug,
		})
		if err != nil {
			c.initErr = err
			return
		}
		c.t, c.challenges = t, udpclient.NewChallenges(0)
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
	if c.t == nil {
		if c.PacketConn != nil {
			return c.PacketConn.Close()
		}
		return nil
	}
	return c.t.Close()
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
	release(cl)
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
	defer release(cl)
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
	defer release(cl)
	r := cl.conv.Result()
	return r.Players, r.PlayersErr
}

// Rules sends A2S_RULES to addr and returns its answer.
func (c *Client) Rules(ctx context.Context, addr netip.AddrPort) (*Rules, error) {
	cl, err := c.run(ctx, addr, SectionRules, nil)
	if err != nil {
		return nil, err
	}
	defer release(cl)
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
	defer release(cl)
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

// options are the Options of the client's fields, for sections.
func (c *Client) options(sections Sections) Options {
	return Options{
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
	cl.opts = c.options(sections)
	conv := &cl.conv
	chal, has := c.challenges.Get(addr)
	conv.Start(&cl.opts, addr, chal, has)
	var step func()
	if each != nil {
		var reported Sections
		step = func() {
			if ended := conv.Ended() &^ reported; ended != 0 {
				reported |= ended
				each(ended, conv.Result())
			}
		}
	}
	c.t.Exchange(ctx, addr, conv, step)
	if chal, ok := conv.Challenge(); ok {
		c.challenges.Put(addr, chal)
	}
	return cl, nil
}

// release recycles a call whose result has been read.
func release(cl *call) {
	cl.conv.res = Result{} // let go of the parsed replies
	callPool.Put(cl)
}
