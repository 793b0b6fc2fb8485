package master

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/schedule"
)

// Defaults of [Options] (and of [Client]) for the fields left zero. A
// page waits 2 s for its reply (qstat's interval between master retries),
// 3 s and 4.5 s on the retries; a listing stops after 500 pages (115,500
// addresses in Valve's pages), 100,000 addresses or 2 minutes, whichever
// comes first.
const (
	DefaultTimeout      = 2 * time.Second
	DefaultRetries      = 2
	DefaultDeadline     = 2 * time.Minute
	DefaultMaxPages     = 500
	DefaultMaxAddresses = 100_000
	// StallPages is how many pages in a row may list nothing new before
	// a listing fails with ErrStalled.
	StallPages = 3
)

// Options say what a [Conversation] lists and how long it waits. They are
// only read, so one value may serve any number of conversations.
type Options struct {
	// Query is the first request: the region, the filter, and the seed
	// to start after (the zero value starts at the beginning).
	Query Query
	// Timeout is how long a page request waits for its reply; each
	// resend waits half as long again. 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxTimeout caps the wait of one send; 0 means no cap.
	MaxTimeout time.Duration
	// Retries is how many times an unanswered page request is sent
	// again: 0 means DefaultRetries, a negative value never.
	Retries int
	// Deadline bounds the whole listing from its first request: 0 means
	// DefaultDeadline, a negative value none.
	Deadline time.Duration
	// MaxPages bounds the replies read: 0 means DefaultMaxPages, a
	// negative value no bound.
	MaxPages int
	// MaxAddresses bounds the distinct addresses listed: 0 means
	// DefaultMaxAddresses, a negative value no bound (the set that drops
	// repeated addresses then grows with the list).
	MaxAddresses int
}

// schedule is the timing o asks for.
func (o *Options) schedule() schedule.Schedule {
	return schedule.Schedule{Timeout: o.Timeout, DefTimeout: DefaultTimeout, MaxTimeout: o.MaxTimeout,
		Retries: schedule.Retries(o.Retries, DefaultRetries), Deadline: max(0, cmp.Or(o.Deadline, DefaultDeadline))}
}

// Result is what a listing got, so far or in all.
type Result struct {
	// Pages counts the replies read; Addresses the distinct addresses
	// listed; Duplicates the addresses listed again, which were dropped;
	// Stale the replies that repeated the page before (see
	// [Conversation.Receive]), which were dropped whole.
	Pages, Addresses, Duplicates, Stale int
	// Complete reports a list that ended with the end marker.
	Complete bool
	// Next is the last address received (of a listing cut short by
	// MaxAddresses, the last one listed): a listing that stopped (a
	// limit, a timeout) resumes after it with Query.Seed = Next. The zero
	// value when nothing came.
	Next netip.AddrPort
	// RTT is the round-trip time of the first page.
	RTT   time.Duration
	Stats Stats
	// Err is nil when the list ended (Complete) or the driver stopped it
	// (Stop); else an [*OpError] "master: list <address>: <cause>".
	Err error
}

// Stats counts the requests a listing sent.
type Stats struct {
	Sent   int // every request datagram, resends included
	Resent int // requests sent again after a timeout
}

// Conversation is one listing of a master's servers as a state machine
// that does no I/O and reads no clock, with the surface of
// a2s.Conversation (udpclient.Conversation): its driver sends the
// requests it hands out, feeds it the master's datagrams, and calls Tick
// when the time it asks for comes. Each reply makes the next request due
// at once, seeded with the reply's last address; [Conversation.TakeNew]
// hands the driver the addresses that came since its last call, so a
// listing streams.
//
// Replies carry no id, so a driver must not run two listings of one
// master on one socket at once. A reply is told from a late one by its
// last address: a late reply to an earlier request (after a resend)
// ends with the seed of the request in the air, and is dropped (see
// Receive). A master that answers every request with the page before
// fails the listing with [ErrStalled] once the request's retries are
// spent, and one whose answers list nothing new StallPages times in a
// row fails it at once.
//
// The zero value is ready for Start; a Conversation may be started again
// once done, which reuses its storage.
type Conversation struct {
	o     *Options
	addr  netip.AddrPort
	q     Query
	sched schedule.Schedule

	heard, done      bool
	rttSet, rttClean bool
	stalled          int // answers in a row that listed nothing new
	stale            int // stale replies since the last answer

	seen  map[netip.AddrPort]struct{}
	fresh []netip.AddrPort
	page  []netip.AddrPort
	bad   error // the first datagram that was not a reply
	res   Result
}

// Start begins listing the master at addr as o says. o must not change
// while the conversation runs. Its signature is every UDP conversation's
// (internal/udpclient's template); the protocol has no challenge, so
// challenge and hasChallenge are not read.
func (c *Conversation) Start(o *Options, addr netip.AddrPort, challenge uint32, hasChallenge bool) {
	seen, fresh, page := c.seen, c.fresh[:0], c.page[:0]
	clear(seen)
	if seen == nil {
		seen = make(map[netip.AddrPort]struct{})
	}
	*c = Conversation{o: o, addr: addr, q: o.Query, sched: o.schedule(), seen: seen, fresh: fresh, page: page}
	c.sched.Start()
	c.q.Seed = c.q.seed()
	if _, err := c.q.AppendBinary(nil); err != nil {
		c.fail(err)
	}
}

// Done reports whether the listing is over.
func (c *Conversation) Done() bool { return c.done }

// Pending reports whether a request is ready to be sent.
func (c *Conversation) Pending() bool { return !c.done && c.sched.Due() }

// Heard reports whether the master has sent a reply.
func (c *Conversation) Heard() bool { return c.heard }

// Resending reports whether the next request is a resend after a
// timeout.
func (c *Conversation) Resending() bool { return c.sched.Resending() }

// RoundTrip returns the round-trip time of the first page, and whether it
// times the network (its request was a first send).
func (c *Conversation) RoundTrip() (time.Duration, bool) { return c.res.RTT, c.rttSet && c.rttClean }

// Challenge reports none: the protocol has no challenge.
func (c *Conversation) Challenge() (uint32, bool) { return 0, false }

// Result returns what the listing got so far; everything once Done. It
// points into the conversation: it is valid until the next Start.
func (c *Conversation) Result() *Result { return &c.res }

// TakeNew returns the addresses listed since the previous call, in the
// order they came, each once; the slice is valid until the next Receive.
func (c *Conversation) TakeNew() []netip.AddrPort {
	out := c.fresh
	c.fresh = c.fresh[:0]
	return out
}

// AppendRequest appends the next page request to b, ok false when none
// is ready. The request counts as sent at now.
func (c *Conversation) AppendRequest(b []byte, now time.Time) ([]byte, bool) {
	if !c.Pending() {
		return b, false
	}
	out, err := c.q.AppendBinary(b)
	if err != nil { // cannot happen: Start checked the query, seeds come from replies
		c.fail(err)
		return b, false
	}
	c.sched.Sent(now)
	c.res.Stats.Sent++
	return out, true
}

// Wake returns when the conversation next needs Tick: the timeout of the
// request in the air, or the Deadline; zero when neither runs.
func (c *Conversation) Wake() time.Time {
	if c.done {
		return time.Time{}
	}
	return c.sched.Wake()
}

// Tick handles the timers due at now: it sends an unanswered request
// again, or fails the listing when it has no retry left or the Deadline
// has passed.
func (c *Conversation) Tick(now time.Time) {
	if c.done {
		return
	}
	switch c.sched.Tick(now) {
	case schedule.Deadline:
		c.fail(c.silence(nil))
	case schedule.Expired:
		if !c.sched.Retry() {
			c.fail(c.silence(nil))
			return
		}
		c.res.Stats.Resent++
	}
}

// silence is the error of a page that got no reply: a timeout (ctxErr is
// the context's deadline, when that ended it), unless the master sent
// only what is not a reply.
func (c *Conversation) silence(ctxErr error) error {
	if c.bad != nil && !c.heard {
		return c.bad
	}
	if ctxErr == nil && c.stale > c.sched.Attempt() {
		return fmt.Errorf("%w: each of the %d requests for the page after %v was answered with the page before (the master ignores the seed)",
			ErrStalled, c.sched.Attempt()+1, c.q.Seed)
	}
	where := fmt.Sprintf("page %d", c.res.Pages+1)
	if ctxErr != nil {
		return fmt.Errorf("%w at %s (%w)", ErrTimeout, where, ctxErr)
	}
	n := c.sched.Attempt() + 1
	attempts := "attempts"
	if n == 1 {
		attempts = "attempt"
	}
	return fmt.Errorf("%w at %s after %d %s", ErrTimeout, where, n, attempts)
}

// Fail ends the listing with err: the driver gave up (a send failed, its
// context ended, it closed). A context's deadline ends it as the Deadline
// does, with a timeout that matches context.DeadlineExceeded too.
func (c *Conversation) Fail(err error) {
	if errors.Is(err, context.DeadlineExceeded) {
		err = c.silence(err)
	}
	c.fail(err)
}

// Stop ends the listing without an error: the driver has what it wants.
func (c *Conversation) Stop() {
	c.done = true
	c.sched.Stop()
}

// Unreachable ends the listing with [ErrUnreachable] and err, the
// network's report.
func (c *Conversation) Unreachable(err error) {
	c.fail(&neterr.Unreachable{Sentinel: ErrUnreachable, Err: err})
}

// Receive digests a datagram from the master. b is not retained.
//
// A reply whose last address is the seed of the request in the air
// answers an earlier request (the page before, sent again after a resend,
// or by a master that ignores the seed): it is stale, and the request
// waits on for its own answer. Any other reply answers the request in the
// air: its new addresses are listed, and the next request is due at once,
// seeded with its last address. A reply with no address ends the list,
// marker or not: nothing follows the seed.
func (c *Conversation) Receive(b []byte, now time.Time) {
	if c.done || c.sched.LastSend().IsZero() { // nothing asked yet
		return
	}
	page, end, err := ParseReply(b, c.page[:0])
	c.page = page
	if err != nil {
		if c.bad == nil {
			c.bad = &notMaster{err}
		}
		return
	}
	c.heard = true
	if !c.rttSet {
		c.rttSet, c.rttClean = true, !c.sched.Resent()
		c.res.RTT = max(now.Sub(c.sched.LastSend()), 1)
	}
	c.res.Pages++
	// Limits: zero is the default, negative none.
	maxPages := cmp.Or(c.o.MaxPages, DefaultMaxPages)
	maxAddrs := cmp.Or(c.o.MaxAddresses, DefaultMaxAddresses)
	if len(page) > 0 && !end && page[len(page)-1] == c.q.Seed && c.q.Seed != Seed {
		c.res.Stale++
		c.stale++
		if maxPages > 0 && c.res.Pages >= maxPages {
			c.fail(fmt.Errorf("%w: MaxPages %d reached with %d addresses", ErrLimit, c.res.Pages, c.res.Addresses))
		}
		return
	}
	added := 0
	for _, a := range page {
		if _, ok := c.seen[a]; ok {
			c.res.Duplicates++
			continue
		}
		if c.res.Addresses == maxAddrs {
			c.fail(fmt.Errorf("%w: MaxAddresses %d reached at page %d", ErrLimit, maxAddrs, c.res.Pages))
			return
		}
		c.seen[a] = struct{}{}
		c.fresh = append(c.fresh, a)
		c.res.Addresses++
		c.res.Next = a
		added++
	}
	if len(page) > 0 {
		c.res.Next = page[len(page)-1]
		c.q.Seed = c.res.Next
	}
	switch {
	case end || len(page) == 0:
		c.res.Complete = true
		c.Stop()
	case maxPages > 0 && c.res.Pages >= maxPages:
		c.fail(fmt.Errorf("%w: MaxPages %d reached with %d addresses", ErrLimit, c.res.Pages, c.res.Addresses))
	case added == 0 && c.stalled+1 >= StallPages:
		c.fail(fmt.Errorf("%w: %d pages in a row listed nothing new", ErrStalled, StallPages))
	default:
		if added == 0 {
			c.stalled++
		} else {
			c.stalled = 0
		}
		c.stale = 0
		c.sched.Next()
	}
}

// fail ends the listing with err.
func (c *Conversation) fail(err error) {
	if c.done {
		return
	}
	c.Stop()
	if err != nil {
		c.res.Err = &OpError{Pkg: "master", Op: "list", Addr: c.addr.String(), Err: err}
	}
}
