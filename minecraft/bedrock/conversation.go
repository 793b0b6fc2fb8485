package bedrock

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/schedule"
	"github.com/gsq-project/gsq/minecraft/internal/mcerr"
)

// Defaults of a [Query] for the fields left zero.
const (
	DefaultTimeout  = time.Second
	DefaultRetries  = 2
	DefaultDeadline = 5 * time.Second
	DefaultPort     = 19132
)

// Query says how a [Conversation] pings and how long it waits. It is only
// read, so one may serve any number of conversations at once.
type Query struct {
	// Timeout is how long the first ping waits; each resend waits half as
	// long again. 0 means DefaultTimeout.
	Timeout time.Duration
	// Retries is how many times an unanswered ping is sent again: 0 means
	// DefaultRetries, negative never.
	Retries int
	// MaxTimeout caps the wait of a resend; 0 means no cap.
	MaxTimeout time.Duration
	// Deadline is the most time the conversation takes from its first
	// ping. 0 means DefaultDeadline, negative none.
	Deadline time.Duration
	// ClientGUID is the GUID the pings carry.
	ClientGUID int64
	// OpenConnections pings with id 0x02, which a server answers only
	// when it has open slots.
	OpenConnections bool
}

// schedule is the timing q asks for.
func (q *Query) schedule() schedule.Schedule {
	d := q.Deadline
	if d == 0 {
		d = DefaultDeadline
	}
	return schedule.Schedule{Timeout: q.Timeout, DefTimeout: DefaultTimeout, MaxTimeout: q.MaxTimeout, Retries: schedule.Retries(q.Retries, DefaultRetries), Deadline: d}
}

// Transport is how a status was asked.
type Transport uint8

const (
	// TransportRakNet is RakNet's unconnected ping and pong, which every
	// Bedrock server answered until BDS 1.26's NetherNet transport.
	TransportRakNet Transport = iota + 1
)

// String returns the transport's name.
func (t Transport) String() string {
	if t == TransportRakNet {
		return "raknet"
	}
	return "Transport(" + strconv.Itoa(int(t)) + ")"
}

// Result is what a conversation got: the status, or the error.
type Result struct {
	Status    *Status
	Pong      *Pong // the RakNet pong the status came in
	Transport Transport
	// Err is the error of a conversation that failed: an [*OpError].
	Err error
	// RTT is the round-trip time of the ping the pong answered.
	RTT time.Duration
}

// maxSends bounds the pings a conversation remembers to match pongs.
const maxSends = 16

type sent struct {
	time int64
	at   time.Time
}

// Conversation is the client side of one ping with one server, as a state
// machine that does no I/O and reads no clock, with a2s.Conversation's
// surface. Each ping carries a time of its own, and a pong is matched to
// its ping by the time it echoes: the round trip is that ping's, so it is
// clean even after resends. A pong echoing no time of the conversation is
// ignored; one that does and cannot be read fails it at once. An
// unanswered ping is sent again after its timeout, Retries times; the
// Deadline ends the whole conversation. Bedrock has no challenge:
// Challenge reports none. The zero value is ready for Start.
type Conversation struct {
	q    *Query
	addr netip.AddrPort

	sends    [maxSends]sent
	nsent    int
	lastTime int64

	sched       schedule.Schedule
	heard, done bool
	bad         error
	res         Result
}

// Start begins a conversation with addr about what q says; Bedrock has
// no challenge, so challenge and hasChallenge are ignored.
func (c *Conversation) Start(q *Query, addr netip.AddrPort, challenge uint32, hasChallenge bool) {
	*c = Conversation{q: q, addr: addr, sched: q.schedule()}
	c.sched.Start()
}

// Done reports whether the conversation is over.
func (c *Conversation) Done() bool { return c.done }

// Pending reports whether a ping is ready to be sent.
func (c *Conversation) Pending() bool { return !c.done && c.sched.Due() }

// Heard reports whether the server has sent a pong of this conversation.
func (c *Conversation) Heard() bool { return c.heard }

// Resending reports whether the next ping is a resend after a timeout.
func (c *Conversation) Resending() bool { return c.sched.Resending() }

// Challenge reports none: Bedrock has no challenge.
func (c *Conversation) Challenge() (challenge uint32, ok bool) { return 0, false }

// RoundTrip returns the round-trip time, and whether it times the
// network: always, once a pong came, as it names its ping.
func (c *Conversation) RoundTrip() (rtt time.Duration, clean bool) {
	return c.res.RTT, c.res.Status != nil
}

// Result returns what the conversation got; the whole answer once Done.
// It is valid until the next Start.
func (c *Conversation) Result() *Result { return &c.res }

// AppendRequest appends the next ping to b, and ok false when none is
// ready. The ping counts as sent at now, whose milliseconds it carries
// (one more than the previous ping's when they would be equal).
func (c *Conversation) AppendRequest(b []byte, now time.Time) (req []byte, ok bool) {
	if !c.Pending() {
		return b, false
	}
	t := now.UnixMilli()
	if c.nsent > 0 && t <= c.lastTime {
		t = c.lastTime + 1
	}
	c.lastTime = t
	c.sends[c.nsent%maxSends] = sent{time: t, at: now}
	c.nsent++
	out, _ := Ping{Time: t, ClientGUID: c.q.ClientGUID, OpenConnections: c.q.OpenConnections}.AppendBinary(b)
	c.sched.Sent(now)
	return out, true
}

// Wake returns when the conversation next needs Tick; zero when none.
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
		if !c.sched.Retry() {
			c.finish(c.silence())
		}
	}
}

func (c *Conversation) silence() error {
	if c.bad != nil {
		return c.bad
	}
	return mcerr.NoAnswer{Sentinel: ErrTimeout, What: "pong"}
}

// expire ends the conversation because the driver's context deadline
// passed: what was heard that was not the protocol, or a timeout.
func (c *Conversation) expire() {
	if c.bad != nil {
		c.finish(c.bad)
		return
	}
	c.finish(mcerr.NoAnswer{Sentinel: ErrTimeout, Ctx: true, What: "pong"})
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

// Unreachable ends the conversation with [ErrUnreachable] and err.
func (c *Conversation) Unreachable(err error) {
	c.finish(&neterr.Unreachable{Sentinel: ErrUnreachable, Err: err})
}

// Receive digests a datagram from the server. b is not retained: the
// result copies what it keeps.
func (c *Conversation) Receive(b []byte, now time.Time) {
	if c.done {
		return
	}
	t, ok := PongTime(b)
	if !ok {
		if c.bad == nil {
			_, err := ParsePong(b)
			c.bad = &notBedrock{err}
		}
		return
	}
	var at time.Time
	for i := range min(c.nsent, maxSends) {
		if c.sends[i].time == t {
			at = c.sends[i].at
		}
	}
	if at.IsZero() {
		return // not a pong to this conversation's pings
	}
	c.heard = true
	p, err := ParsePong(b)
	if err != nil {
		c.finish(err)
		return
	}
	p.Status = append(Text(nil), p.Status...)
	c.res.Pong, c.res.Status, c.res.Transport = &p, ParseStatus(p.Status), TransportRakNet
	c.res.RTT = max(now.Sub(at), 0)
	c.finish(nil)
}

func (c *Conversation) finish(err error) {
	if c.done {
		return
	}
	c.done = true
	c.sched.Stop()
	if err != nil {
		c.res.Err = &OpError{Pkg: "bedrock", Op: "status", Addr: c.addr.String(), Err: err}
	}
}
