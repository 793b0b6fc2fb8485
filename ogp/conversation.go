package ogp

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/udpclient"
)

// Defaults of [Options] (and of [Client]) for the fields left zero: the
// same waits as package a2s, so that a silent server fails after 1 s,
// 1.5 s and 2.25 s, 4.75 s, and never after more than 5 s.
const (
	DefaultTimeout       = time.Second
	DefaultRetries       = 2
	DefaultDeadline      = 5 * time.Second
	DefaultMaxChallenges = 3 // error 3 answers accepted by one conversation
	DefaultMaxAnswerSize = 1 << 20
)

// Options say what a [Conversation] asks a server and how long it waits.
// Options are only read by the conversations that use them, so one value
// may serve any number of them, at the same time too.
type Options struct {
	// Dialect is the wire layout; V091 by default.
	Dialect Dialect
	// Ping asks a Ping (whose answer tells the round trip and the
	// current challenge) instead of a Default Query.
	Ping bool
	// Query is what a Default Query asks: the sections and their fields;
	// nil asks everything this package knows (QueryAll).
	Query *Query
	// Timeout is how long to wait for the answer to the first send of the
	// request; each resend waits half as long again as the one before. 0
	// means DefaultTimeout.
	Timeout time.Duration
	// MaxTimeout caps the wait of one send; 0 means no cap.
	MaxTimeout time.Duration
	// Retries is how many times an unanswered request is sent again: 0
	// means DefaultRetries, a negative value never. Sends with a new
	// challenge after an error 3 answer are not retries.
	Retries int
	// Deadline is the most time the conversation takes from its first
	// request, whatever the retries. 0 means DefaultDeadline, a negative
	// value no deadline (the retries bound the wait).
	Deadline time.Duration
	// MaxChallenges bounds the error 3 answers (invalid challenge) the
	// conversation accepts; one more fails it with ErrTooManyChallenges.
	// 0 means DefaultMaxChallenges.
	MaxChallenges int
	// MaxBytesPerPacket is the split size asked for (500..1500); 0 means
	// DefaultPacketSize.
	MaxBytesPerPacket uint16
	// MaxAnswerSize caps a reassembled split answer; 0 means
	// DefaultMaxAnswerSize.
	MaxAnswerSize int
}

func (o *Options) timeout(attempt int) time.Duration {
	return udpclient.Backoff(cmp.Or(max(o.Timeout, 0), DefaultTimeout), o.MaxTimeout, attempt)
}

func (o *Options) retries() int {
	switch {
	case o.Retries < 0:
		return 0
	case o.Retries == 0:
		return DefaultRetries
	}
	return min(o.Retries, math.MaxUint16)
}

func (o *Options) deadline() time.Duration { return cmp.Or(o.Deadline, DefaultDeadline) }

func (o *Options) maxChallenges() int { return cmp.Or(max(o.MaxChallenges, 0), DefaultMaxChallenges) }

func (o *Options) maxAnswer() int { return cmp.Or(max(o.MaxAnswerSize, 0), DefaultMaxAnswerSize) }

func (o *Options) packetSize() uint16 { return cmp.Or(o.MaxBytesPerPacket, DefaultPacketSize) }

// query is the Default Query asked: Query, or everything.
func (o *Options) query() Query {
	if o.Query != nil {
		return *o.Query
	}
	return QueryAll(o.Dialect)
}

// Result is what an OGP conversation got from its server.
type Result struct {
	// Answer is the Default Query's answer; nil for a Ping, and when the
	// conversation failed, unless the answer was cut short by a field
	// this package does not know (Err wraps ErrUnknownField): then it
	// holds the sections before it.
	Answer *Answer
	Header Header // the header of the (first) answer datagram
	// RTT is the round-trip time: from the latest request sent to the
	// first datagram of the server's answer. Zero when nothing came.
	RTT   time.Duration
	Stats Stats // what the conversation sent
	// Err is nil when the server answered, else an [*OpError] naming the
	// operation ("query" or "ping") and the server, whose cause is a
	// [*CallError].
	Err error
}

// Stats counts the request datagrams one conversation sent.
type Stats struct {
	// Sent is every request datagram sent: the first, the resends and
	// the re-challenges. It is 1 + Resent + Rechallenged once anything
	// was sent.
	Sent int
	// Resent counts the requests sent again because the previous one was
	// not answered in time.
	Resent int
	// Rechallenged counts the requests sent again with a new challenge
	// after an error 3 answer.
	Rechallenged int
}

// Conversation is the client side of one OGP exchange with one server (a
// Ping or a Default Query), as a state machine that does no I/O and reads
// no clock, with the surface of a2s.Conversation: its driver sends the
// requests it hands out, feeds it the server's datagrams and calls Tick
// when the time it asks for comes. [Client] drives one per call on its
// shared socket, and the scan engine thousands at once.
//
// The request always carries the challenge flag (the challenge given to
// Start, or 0) and a random non-zero RequestID; a Default Query asks for
// split answers of MaxBytesPerPacket bytes. The conversation reads only
// answers that carry its RequestID, of its request's type or errors:
// several conversations with one server can share a socket. An error 3
// answer (invalid challenge) makes it send the request again at once with
// the new challenge, MaxChallenges times at most (an error 3 carrying the
// challenge in use already answers an earlier send, and is ignored);
// other error answers
// end it with a [*ServerError]. Split answers are reassembled up to
// MaxAnswerSize. An unanswered request is sent again after its timeout,
// Retries times, and the Deadline ends the whole conversation; one that
// ends without an answer fails with [ErrTimeout], with [ErrIncomplete]
// too when part of a split answer came, or with [ErrNotOGP] when the
// server sent only datagrams that are not OGP. When the answer parses
// only in the other dialect, or the server rejects with error 4 a query
// whose layout differs between the dialects, the error wraps a
// [*DialectError].
//
// The zero value is ready for Start; a Conversation may be started again
// once done, which reuses its storage.
type Conversation struct {
	o       *Options
	addr    netip.AddrPort
	typ     Type
	id      uint32
	body    []byte
	bodyBuf [48]byte

	chal    uint32
	hasChal bool

	due      bool // the request is to be sent
	air      bool // the request is sent and not answered
	resent   bool // the request due or in the air is a resend after a timeout
	attempt  int
	expiry   time.Time
	started  bool
	deadline time.Time // zero: none
	lastSend time.Time
	heard    bool
	rttSet   bool
	rttClean bool
	done     bool

	bad error // the first datagram that was not OGP
	asm reassembly
	res Result
}

// Start begins a conversation with addr about what o says. challenge is
// the server's challenge when known (hasChallenge), from an earlier
// conversation; else the request carries 0, and the server's error 3
// answer gives it. o must not change while the conversation runs.
func (c *Conversation) Start(o *Options, addr netip.AddrPort, challenge uint32, hasChallenge bool) {
	*c = Conversation{o: o, addr: addr, chal: challenge, hasChal: hasChallenge, id: newRequestID(), due: true, body: c.body[:0]}
	if c.body == nil {
		c.body = c.bodyBuf[:0]
	}
	c.typ = TypePing
	if !o.Ping {
		c.typ = TypeDefault
		q := o.query()
		body, err := q.Append(c.body, o.Dialect)
		if err != nil {
			c.fail(err)
			return
		}
		c.body = body
	}
}

// newRequestID returns a random non-zero request id.
func newRequestID() uint32 {
	for {
		if id := rand.Uint32(); id != 0 {
			return id
		}
	}
}

// Done reports whether the conversation is over: answered or failed.
func (c *Conversation) Done() bool { return c.done }

// Pending reports whether the request is ready to be sent.
func (c *Conversation) Pending() bool { return c.due && !c.done }

// Heard reports whether the server has answered this conversation's
// request with something that reads as OGP (an error answer included).
func (c *Conversation) Heard() bool { return c.heard }

// Resending reports whether the next request is a resend after a
// timeout.
func (c *Conversation) Resending() bool { return c.due && c.resent }

// Challenge returns the server's challenge, when known: the driver keeps
// it for the next conversation with the server.
func (c *Conversation) Challenge() (challenge uint32, ok bool) { return c.chal, c.hasChal }

// RoundTrip returns the conversation's round-trip time, and whether it
// times the network: measured while the request in the air was a first
// send (Karn's rule).
func (c *Conversation) RoundTrip() (rtt time.Duration, clean bool) {
	return c.res.RTT, c.rttSet && c.rttClean
}

// Result returns what the conversation got: the whole answer once Done.
// It points into the conversation: it is valid until the next Start.
func (c *Conversation) Result() *Result { return &c.res }

// AppendRequest appends the request to b and returns it, and ok false
// when none is ready (see Pending). The request counts as sent at now:
// its timeout starts, and the first one starts the Deadline.
func (c *Conversation) AppendRequest(b []byte, now time.Time) (req []byte, ok bool) {
	if !c.Pending() {
		return b, false
	}
	h := Header{Type: c.typ, Flags: FlagChallenge | FlagRequestID, Challenge: c.chal, RequestID: c.id}
	if c.typ == TypeDefault {
		h.Flags |= FlagSplit
		h.MaxBytesPerPacket = c.o.packetSize()
	}
	if c.o.Dialect == V1 {
		h.Flags |= FlagUTF8
	}
	out, err := h.AppendBinary(b)
	if err != nil { // cannot happen: the header is the package's own
		c.fail(err)
		return b, false
	}
	c.due, c.air = false, true
	c.expiry = now.Add(c.o.timeout(c.attempt))
	c.lastSend = now
	c.res.Stats.Sent++
	if !c.started {
		c.started = true
		if d := c.o.deadline(); d > 0 {
			c.deadline = now.Add(d)
		}
	}
	return append(out, c.body...), true
}

// Wake returns when the conversation next needs Tick: the timeout of the
// request in the air, or the Deadline. It is zero when no timer is
// needed.
func (c *Conversation) Wake() time.Time {
	if c.done {
		return time.Time{}
	}
	t := c.deadline
	if c.air && (t.IsZero() || c.expiry.Before(t)) {
		t = c.expiry
	}
	return t
}

// Tick handles the timers due at now: it makes the unanswered request due
// again, or fails the conversation when it has no retry left or the
// Deadline has passed.
func (c *Conversation) Tick(now time.Time) {
	if c.done {
		return
	}
	if !c.deadline.IsZero() && !now.Before(c.deadline) {
		c.fail(c.silence(nil))
		return
	}
	if !c.air || now.Before(c.expiry) {
		return
	}
	c.air = false
	if c.attempt >= c.o.retries() {
		c.fail(c.silence(nil))
		return
	}
	c.attempt++
	c.due, c.resent = true, true
	c.res.Stats.Resent++
}

// silence is the error of a conversation that got no answer: a timeout
// (ctxErr is the context's deadline, when that ended it), unless the
// server sent what is not OGP.
func (c *Conversation) silence(ctxErr error) error {
	if c.bad != nil {
		return c.bad
	}
	var err error
	if ctxErr != nil {
		err = fmt.Errorf("%w (%w)%s", ErrTimeout, ctxErr, c.asm.progress())
	} else {
		sent := c.res.Stats.Sent
		err = fmt.Errorf("%w after %d %s%s", ErrTimeout, sent, plural(sent, "attempt"), c.asm.progress())
	}
	if c.asm.got > 0 {
		return incomplete{err}
	}
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Fail ends the conversation with err: the driver gave up (a send failed,
// its context ended, it closed). A context's deadline (err matches
// context.DeadlineExceeded) ends it as the Deadline does: with a timeout
// that matches context.DeadlineExceeded too, unless the server sent what
// is not OGP.
func (c *Conversation) Fail(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		err = c.silence(err)
	}
	c.fail(err)
}

// Unreachable ends the conversation with [ErrUnreachable] and err, the
// kernel's report: the network says the server cannot be reached (an
// ICMP port unreachable, for a closed port).
func (c *Conversation) Unreachable(err error) {
	c.fail(&neterr.Unreachable{Sentinel: ErrUnreachable, Err: err})
}

// Receive digests a datagram from the server. b is not retained.
func (c *Conversation) Receive(b []byte, now time.Time) {
	if c.done {
		return
	}
	h, body, err := ParseHeader(b)
	if err != nil {
		if c.bad == nil {
			c.bad = &notOGP{err}
		}
		return
	}
	if h.Flags&FlagAnswer == 0 || h.Flags&FlagRequestID == 0 || h.RequestID != c.id || !c.started {
		return // not an answer to this conversation's request
	}
	if h.Type != TypeError && h.Type != c.typ {
		return
	}
	c.heard = true
	if !c.rttSet {
		c.rttSet = true
		c.res.RTT = max(now.Sub(c.lastSend), 1)
		c.rttClean = !c.resent
	}
	if h.Flags&FlagChallenge != 0 && h.Type != TypeError {
		c.chal, c.hasChal = h.Challenge, true
	}
	if h.Type == TypeError {
		c.errorAnswer(h, body)
		return
	}
	if h.Flags&FlagSplit == 0 {
		c.answer(h, bytes.Clone(body))
		return
	}
	first, whole, err := c.asm.add(h, body, c.o.maxAnswer())
	switch {
	case err != nil:
		c.fail(err)
	case whole != nil:
		c.answer(first, whole)
	}
}

// errorAnswer handles an error answer: error 3 sends the request again
// with the new challenge, unless it is the challenge in use (the answer to
// an earlier send); any other ends the conversation.
func (c *Conversation) errorAnswer(h Header, body []byte) {
	e, err := ParseErrorAnswer(body)
	if err != nil {
		c.fail(err)
		return
	}
	if e.Code != ErrorInvalidChallenge {
		var err error = &ServerError{Code: e.Code}
		if e.Code == ErrorInvalidQuery && c.typ == TypeDefault {
			if q := c.o.query(); q.differs(c.o.Dialect) {
				err = &DialectError{Client: c.o.Dialect, Server: c.o.Dialect.other(), Err: err}
			}
		}
		c.fail(err)
		return
	}
	chal, ok := h.Challenge, h.Flags&FlagChallenge != 0
	if !ok {
		chal, ok = e.Challenge()
	}
	if !ok {
		c.fail(fmt.Errorf("%w without a new challenge", &ServerError{Code: e.Code}))
		return
	}
	if c.hasChal && chal == c.chal {
		// The challenge the request in the air carries already: this
		// rejects an earlier send (a resend crossed the re-challenge).
		return
	}
	if c.res.Stats.Rechallenged == c.o.maxChallenges() {
		c.fail(ErrTooManyChallenges)
		return
	}
	c.res.Stats.Rechallenged++
	c.chal, c.hasChal = chal, true
	c.asm = reassembly{}
	c.air, c.due, c.resent = false, true, false
}

// answer ends the conversation with the answer body of header h, which it
// may keep.
func (c *Conversation) answer(h Header, body []byte) {
	c.res.Header = h
	if c.typ == TypePing {
		c.fail(nil)
		return
	}
	d := c.o.Dialect
	a, rest, err := parseAnswer(body, d)
	if err != nil || rest > 0 {
		if _, left, berr := parseAnswer(body, d.other()); berr == nil && left == 0 {
			if err == nil {
				err = fmt.Errorf("%d bytes left after the answer", rest)
			}
			c.fail(&DialectError{Client: d, Server: d.other(), Sure: true, Err: err})
			return
		}
	}
	c.res.Answer = a
	c.fail(err)
}

// fail ends the conversation with err (nil: answered).
func (c *Conversation) fail(err error) {
	if c.done {
		return
	}
	c.done, c.due, c.air = true, false, false
	c.asm = reassembly{} // let go of the fragments
	if err != nil {
		op := "query"
		if c.typ == TypePing {
			op = "ping"
		}
		c.res.Err = &OpError{Pkg: "ogp", Op: op, Addr: c.addr.String(), Err: &CallError{Err: err, Stats: c.res.Stats}}
	}
}
