package mcquery

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/schedule"
	"github.com/gsq-project/gsq/minecraft/internal/mcerr"
)

// Defaults of a [Query] for the fields left zero.
const (
	DefaultTimeout   = time.Second
	DefaultRetries   = 2
	DefaultDeadline  = 5 * time.Second
	DefaultSessionID = 0x01020304
	// DefaultMaxTokens bounds the new tokens one conversation accepts.
	DefaultMaxTokens = 3
)

// Query says what a [Conversation] asks and how long it waits. It is only
// read, so one may serve any number of conversations at once.
type Query struct {
	// Full asks for the full stat (every player, the plugins) rather than
	// the basic one.
	Full bool
	// Timeout is how long the first send of a request waits; each resend
	// waits half as long again. 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times an unanswered request is sent again: 0
	// means DefaultRetries, negative never. The handshake sent again after
	// a silent stat (a stale token) is not a retry.
	Retries int
	// MaxTimeout caps the wait of a resend; 0 means no cap.
	MaxTimeout time.Duration
	// Deadline is the most time the conversation takes from its first
	// request. 0 means DefaultDeadline, negative none.
	Deadline time.Duration
	// SessionID is the session id sent, masked with SessionMask; 0 means
	// DefaultSessionID.
	SessionID uint32
}

// schedule is the timing q asks for.
func (q *Query) schedule() schedule.Schedule {
	d := q.Deadline
	if d == 0 {
		d = DefaultDeadline
	}
	return schedule.Schedule{Timeout: q.Timeout, DefTimeout: DefaultTimeout, MaxTimeout: q.MaxTimeout, Retries: schedule.Retries(q.Retries, DefaultRetries), Deadline: d}
}

func (q *Query) sessionID() uint32 {
	if q.SessionID == 0 {
		return DefaultSessionID & SessionMask
	}
	return q.SessionID & SessionMask
}

// Result is what a conversation got: the stat asked for, or the error.
type Result struct {
	Basic *BasicStat // when the basic stat was asked and came
	Full  *FullStat  // when the full stat was asked and came
	// Err is the error of a conversation that failed: an [*OpError].
	Err error
	// RTT is the round-trip time of the stat: from its latest send to the
	// reply (of the handshake when the stat never came).
	RTT time.Duration
}

// Conversation is the client side of one Query exchange with one server,
// as a state machine that does no I/O and reads no clock, with
// a2s.Conversation's surface: its driver sends the requests it hands out,
// feeds it the server's datagrams and calls Tick when the time it asks for
// comes.
//
// Without a token it sends the handshake, then the stat request with the
// token of the reply. A stat that gets no answer in time is taken for a
// stale token, which the server drops without a word: the conversation
// handshakes again, once, and asks again with the new token. After that,
// and for the handshake, an unanswered request is sent again after its
// timeout, Retries times, and fails with a timeout; the Deadline ends the
// whole conversation. Datagrams of another session id are ignored; a
// reply that cannot be read fails the conversation at once.
//
// The zero value is ready for Start; a Conversation may be started again
// once done.
type Conversation struct {
	q    *Query
	addr netip.AddrPort
	sid  uint32

	stat      bool // the handshake is done: the stat is asked
	token     int32
	hasToken  bool
	newTokens int
	again     bool // the handshake was sent again after a silent stat

	sched            schedule.Schedule
	started          bool
	rttSet, rttClean bool
	heard            bool
	done             bool
	bad              error

	res Result
}

// Start begins a conversation with addr about what q says. challenge is
// the server's token when known (hasChallenge), from an earlier
// conversation: then the stat is asked at once.
func (c *Conversation) Start(q *Query, addr netip.AddrPort, challenge uint32, hasChallenge bool) {
	*c = Conversation{q: q, addr: addr, sid: q.sessionID(), token: int32(challenge), hasToken: hasChallenge, stat: hasChallenge, sched: q.schedule()}
	c.sched.Start()
}

// Done reports whether the conversation is over.
func (c *Conversation) Done() bool { return c.done }

// Pending reports whether a request is ready to be sent.
func (c *Conversation) Pending() bool { return !c.done && c.sched.Due() }

// Heard reports whether the server has sent something that reads as
// Query.
func (c *Conversation) Heard() bool { return c.heard }

// Resending reports whether the next request is a resend after a timeout.
func (c *Conversation) Resending() bool { return c.sched.Resending() }

// Challenge returns the server's token, when known, for the next
// conversation with the server.
func (c *Conversation) Challenge() (challenge uint32, ok bool) { return uint32(c.token), c.hasToken }

// RoundTrip returns the round-trip time, and whether it times the network
// (measured on a first send: Karn's rule).
func (c *Conversation) RoundTrip() (rtt time.Duration, clean bool) {
	return c.res.RTT, c.rttSet && c.rttClean
}

// Result returns what the conversation got; the whole answer once Done.
// It is valid until the next Start.
func (c *Conversation) Result() *Result { return &c.res }

// AppendRequest appends the next request to b, and ok false when none is
// ready. The request counts as sent at now.
func (c *Conversation) AppendRequest(b []byte, now time.Time) (req []byte, ok bool) {
	if !c.Pending() {
		return b, false
	}
	r := Request{Type: TypeHandshake, SessionID: c.sid}
	if c.stat {
		r = Request{Type: TypeStat, SessionID: c.sid, Token: c.token, Full: c.q.Full}
	}
	out, _ := r.AppendBinary(b) // known types: no error
	c.sched.Sent(now)
	c.started = true
	return out, true
}

// Wake returns when the conversation next needs Tick; zero when no timer
// is needed.
func (c *Conversation) Wake() time.Time {
	if c.done {
		return time.Time{}
	}
	return c.sched.Wake()
}

// Tick handles the timers due at now.
func (c *Conversation) Tick(now time.Time) {
	if c.done {
		return
	}
	switch c.sched.Tick(now) {
	case schedule.Deadline:
		c.finish(c.silence())
	case schedule.Expired:
		if c.stat && !c.again {
			// A silent stat: the token went stale. Handshake again, once.
			c.again, c.stat, c.hasToken = true, false, false
			c.sched.Next()
		} else if !c.sched.Retry() {
			c.finish(c.silence())
		}
	}
}

// silence is the cause of a conversation that got no answer.
func (c *Conversation) silence() error {
	if c.bad != nil {
		return c.bad
	}
	return mcerr.NoAnswer{Sentinel: ErrTimeout, What: "answer"}
}

// expire ends the conversation because the driver's context deadline
// passed: what was heard that was not the protocol, or a timeout.
func (c *Conversation) expire() {
	if c.bad != nil {
		c.finish(c.bad)
		return
	}
	c.finish(mcerr.NoAnswer{Sentinel: ErrTimeout, Ctx: true, What: "answer"})
}

// Fail ends the conversation with err: the driver gave up. A context's
// deadline (context.DeadlineExceeded) reads as the protocol's timeout,
// as its own deadline does.
func (c *Conversation) Fail(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		c.expire()
		return
	}
	c.finish(err)
}

// Unreachable ends the conversation with [ErrUnreachable] and err, the
// kernel's report of an ICMP error.
func (c *Conversation) Unreachable(err error) {
	c.finish(&neterr.Unreachable{Sentinel: ErrUnreachable, Err: err})
}

// Receive digests a datagram from the server. b is not retained.
func (c *Conversation) Receive(b []byte, now time.Time) {
	if c.done {
		return
	}
	if len(b) < 5 || (b[0] != TypeHandshake && b[0] != TypeStat) {
		if c.bad == nil {
			err := parseErr("reply", 0, detail(ErrUnexpectedType, "a datagram of %d bytes", len(b)))
			if len(b) >= 1 {
				err = parseErr("reply", 0, detail(ErrUnexpectedType, "type 0x%02x", b[0]))
			}
			c.bad = &notQuery{err}
		}
		return
	}
	if sid := uint32(b[1])<<24 | uint32(b[2])<<16 | uint32(b[3])<<8 | uint32(b[4]); sid != c.sid {
		return // another session's
	}
	switch b[0] {
	case TypeHandshake:
		_, token, err := ParseHandshakeReply(b)
		if err != nil {
			c.heardAt(now)
			c.finish(err)
			return
		}
		c.heardAt(now)
		if c.stat && c.hasToken && token == c.token {
			return // a copy
		}
		if c.newTokens++; c.newTokens > DefaultMaxTokens {
			c.finish(ErrTooManyTokens)
			return
		}
		c.token, c.hasToken, c.stat = token, true, true
		c.sched.Next()
		c.rttSet = false // time the stat, not the handshake
	case TypeStat:
		if !c.stat {
			return // a stat reply to no stat request of this conversation
		}
		c.heardAt(now)
		b = bytes.Clone(b) // the stat's values alias it, and b is the driver's
		if c.q.Full {
			_, s, err := ParseFullStat(b)
			c.res.Full = s
			c.finish(err)
			return
		}
		_, s, err := ParseBasicStat(b)
		c.res.Basic = s
		c.finish(err)
	}
}

// heardAt records a Query reply, and times the round trip on the first
// one since the latest request.
func (c *Conversation) heardAt(now time.Time) {
	c.heard = true
	if c.rttSet || !c.started {
		return
	}
	c.rttSet = true
	c.res.RTT = max(now.Sub(c.sched.LastSend()), 0)
	c.rttClean = !c.sched.Resent()
}

// finish ends the conversation with err (nil: answered).
func (c *Conversation) finish(err error) {
	if c.done {
		return
	}
	c.done = true
	c.sched.Stop()
	if err != nil {
		op := "basic-stat"
		if c.q.Full {
			op = "full-stat"
		}
		c.res.Err = &OpError{Pkg: "mcquery", Op: op, Addr: c.addr.String(), Err: err}
	}
}
