package satisfactory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/schedule"
)

// Defaults of [Options] (and of [Client]) for the fields left zero: a
// poll waits 1 s, 1.5 s and 2.25 s, and a server that stays silent fails
// within 5 s: a dead server is not polled for long.
const (
	DefaultTimeout  = time.Second
	DefaultRetries  = 2
	DefaultDeadline = 5 * time.Second
)

// Options say how long a [Conversation] waits. They are only read, so
// one value may serve any number of conversations.
type Options struct {
	// Timeout is how long a poll waits for its reply; each resend waits
	// half as long again, up to MaxTimeout (0: no cap). 0 means
	// DefaultTimeout.
	Timeout, MaxTimeout time.Duration
	// Retries is how many times an unanswered poll is sent again: 0
	// means DefaultRetries, a negative value never.
	Retries int
	// Deadline bounds the conversation from its first poll: 0 means
	// DefaultDeadline, a negative value none.
	Deadline time.Duration
}

// Result is what a conversation got.
type Result struct {
	// State is the server's reply, nil when none came.
	State *ServerState
	// RTT is the round-trip time of the poll the reply answered.
	RTT time.Duration
	// Err is nil when a reply came; else an [*OpError]
	// "satisfactory: state <address>: <cause>".
	Err error
}

// maxPolls is how many polls a conversation remembers, to match a reply
// to the poll it answers: more than the retries any caller sets.
const maxPolls = 16

// poll is a poll sent: its cookie and when.
type poll struct {
	cookie uint64
	at     time.Time
}

// cookies makes each poll's cookie distinct within the process, and
// unlike another process's (it starts from the clock).
var cookies atomic.Uint64

// Conversation is one poll of a server, as a state machine that does no
// I/O and reads no clock, with the surface of a2s.Conversation
// (udpclient.Conversation): its driver sends the polls it hands out,
// feeds it the server's datagrams, and calls Tick when the time it asks
// for comes. Every poll carries a new cookie, which the reply echoes: a
// reply is matched to its poll (the round trip is that poll's), and a
// datagram that echoes none of the conversation's cookies is not its
// answer. The zero value is ready for Start.
type Conversation struct {
	o     *Options
	addr  netip.AddrPort
	sched schedule.Schedule
	polls [maxPolls]poll
	n     int // polls sent

	heard, done bool
	bad         error
	res         Result
}

// Start begins a poll of the server at addr, waiting as o says. Its
// signature is every UDP conversation's (internal/udpclient's template);
// the protocol has no challenge, so challenge and hasChallenge are not
// read.
func (c *Conversation) Start(o *Options, addr netip.AddrPort, challenge uint32, hasChallenge bool) {
	*c = Conversation{o: o, addr: addr, sched: schedule.Schedule{
		Timeout: o.Timeout, DefTimeout: DefaultTimeout, MaxTimeout: o.MaxTimeout,
		Retries: schedule.Retries(o.Retries, DefaultRetries), Deadline: max(0, cmp.Or(o.Deadline, DefaultDeadline)),
	}}
	c.sched.Start()
}

// Done reports whether the conversation is over.
func (c *Conversation) Done() bool { return c.done }

// Pending reports whether a poll is ready to be sent.
func (c *Conversation) Pending() bool { return !c.done && c.sched.Due() }

// Heard reports whether the server has replied to a poll of this
// conversation.
func (c *Conversation) Heard() bool { return c.heard }

// Resending reports whether the next poll is a resend after a timeout.
func (c *Conversation) Resending() bool { return c.sched.Resending() }

// Challenge reports none: the protocol has no challenge.
func (c *Conversation) Challenge() (uint32, bool) { return 0, false }

// RoundTrip returns the round-trip time, and whether it times the
// network: always, once a reply came, as it names its poll.
func (c *Conversation) RoundTrip() (time.Duration, bool) { return c.res.RTT, c.res.State != nil }

// Result returns what the conversation got; all of it once Done. It is
// valid until the next Start.
func (c *Conversation) Result() *Result { return &c.res }

// AppendRequest appends the next poll to b, ok false when none is ready.
// The poll counts as sent at now.
func (c *Conversation) AppendRequest(b []byte, now time.Time) ([]byte, bool) {
	if !c.Pending() {
		return b, false
	}
	cookie := uint64(now.UnixNano()) + cookies.Add(1)*0x9E3779B97F4A7C15
	c.polls[c.n%maxPolls] = poll{cookie: cookie, at: now}
	c.n++
	c.sched.Sent(now)
	out, _ := Poll{Cookie: cookie}.AppendBinary(b)
	return out, true
}

// Wake returns when the conversation next needs Tick; zero when none.
func (c *Conversation) Wake() time.Time {
	if c.done {
		return time.Time{}
	}
	return c.sched.Wake()
}

// Tick handles the timers due at now: it makes an unanswered poll due
// again, or fails the conversation when it has no retry left or the
// Deadline has passed.
func (c *Conversation) Tick(now time.Time) {
	if c.done {
		return
	}
	switch c.sched.Tick(now) {
	case schedule.Deadline:
		c.finish(c.silence(nil))
	case schedule.Expired:
		if !c.sched.Retry() {
			c.finish(c.silence(nil))
		}
	}
}

// silence is the error of a poll that got no reply: a timeout (ctxErr
// is the context's deadline, when that ended it), unless the server sent
// only what is not a reply.
func (c *Conversation) silence(ctxErr error) error {
	if c.bad != nil {
		return c.bad
	}
	if ctxErr != nil {
		return fmt.Errorf("%w: no reply to %d polls (%w)", ErrTimeout, c.n, ctxErr)
	}
	return fmt.Errorf("%w: no reply to %d polls", ErrTimeout, c.n)
}

// Fail ends the conversation with err: the driver gave up. A context's
// deadline ends it as the Deadline does, with a timeout that matches
// context.DeadlineExceeded too.
func (c *Conversation) Fail(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		err = c.silence(err)
	}
	c.finish(err)
}

// Unreachable ends the conversation with [ErrUnreachable] and err, the
// network's report.
func (c *Conversation) Unreachable(err error) {
	c.finish(&neterr.Unreachable{Sentinel: ErrUnreachable, Err: err})
}

// Receive digests a datagram from the server, read at now. b is not
// retained: the result copies what it keeps.
func (c *Conversation) Receive(b []byte, now time.Time) {
	if c.done || c.n == 0 {
		return
	}
	cookie, ok := ReplyCookie(b)
	if !ok {
		if c.bad == nil {
			_, err := ParseServerState(b)
			c.bad = &notSatisfactory{err}
		}
		return
	}
	var at time.Time
	for _, p := range c.polls[:min(c.n, maxPolls)] {
		if p.cookie == cookie {
			at = p.at
		}
	}
	if at.IsZero() {
		return // a reply to someone else's poll
	}
	c.heard = true
	s, err := ParseServerState(b)
	if err != nil {
		c.finish(err)
		return
	}
	c.res.State, c.res.RTT = s, max(now.Sub(at), 0)
	c.finish(nil)
}

// finish ends the conversation with err (nil: answered).
func (c *Conversation) finish(err error) {
	if c.done {
		return
	}
	c.done = true
	c.sched.Stop()
	if err != nil {
		c.res.Err = &OpError{Pkg: "satisfactory", Op: "state", Addr: c.addr.String(), Err: err}
	}
}
