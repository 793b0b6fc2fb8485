package scan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// flight is one target being queried. A flight of a UDP protocol drives
// its conversation datagram by datagram on the engine's shared sockets:
// it sends the requests the conversation has ready (as pacing and
// HostInterval allow), is handed the server's datagrams and ICMP errors
// by the socket's transport (it is the server's udpclient.Peer), and
// keeps one timer armed for the conversation's next timeout. A flight of
// a TCP or HTTP protocol runs its query's Do on a goroutine, holding one
// of the engine's connections.
type flight struct {
	r     *run
	res   Outcome
	query protocol.Query
	addr  netip.AddrPort // the address queried, once known
	sock  *socket
	link  udpclient.Link
	// ipCounted is set while the flight holds one of its IP address's
	// MaxPerIP places; guarded by the engine's mu.
	ipCounted bool
	// resolving is the time its host name took to resolve, which counts
	// against the Deadline.
	resolving time.Duration

	mu         sync.Mutex
	conv       protocol.Conversation // a UDP flight's, once launched
	challenges *udpclient.Challenges // its protocol's, nil when none are kept
	timer      *time.Timer
	armed      time.Time // when the timer is due; zero when it is not armed
	nextSend   time.Time // HostInterval spacing
	buf        []byte    // the request being sent; reqBuf unless it grew
	reqBuf     [48]byte  // room for every request but a padded A2S_INFO
	launched   bool
	done       bool
	canceled   bool
	sampled    bool // the round trip was taken (or found not clean)
	sent       int64
	resent     int64
	received   int64
	stop       context.CancelFunc // a stream flight's: ends its query

	wait waiter // the flight's place in the pacer's queues
}

func newFlight(r *run, t Target) *flight {
	q := t.Query
	if q == nil {
		q = r.e.query
	}
	f := &flight{r: r, addr: t.Addr, query: q}
	f.buf = f.reqBuf[:0]
	f.wait = waiter{prio: -1, owner: f}
	input := t.Input
	if input == "" {
		input = t.String()
	}
	f.res.Target = t
	f.res.Result = q.NewResult(input, t.Addr)
	return f
}

// fail ends f before any query with err, whose kind is kind, and status.
func (f *flight) fail(status Status, kind result.Kind, err error) {
	f.res.Status = status
	f.res.Result.Err = &result.Error{Kind: kind, Message: err.Error(), Err: err}
	f.r.deliver(&f.res)
}

// launch starts the conversation with the server. The first requests go
// into out when it is not nil (the dispatcher's batch).
func (f *flight) launch(out *udpclient.Batch) {
	e := f.r.e
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return // canceled while it waited for its turn
	}
	if f.r.ctx.Err() != nil {
		f.canceled = true
		f.finish()
		return
	}
	f.launched = true
	addr := f.addr
	if e.interval > 0 {
		f.nextSend = e.nextSendTo(addr)
	}
	now := time.Now()
	uq, ok := f.query.(protocol.UDPQuery)
	if !ok {
		if e.pacer != nil && !e.pacer.take(now, prioNew) {
			e.pacer.wait(&f.wait, prioNew)
			return
		}
		f.startStream()
		return
	}
	f.challenges = e.challenges(f.query.Protocol().Name)
	chal, known := f.challenges.Get(addr)
	f.conv = uq.Start(f.waits(), addr, chal, known)
	if err := f.sock.t.Attach(&f.link, addr, f); err != nil {
		f.conv.Fail(err)
	}
	f.pump(now, out, false)
	f.settle(now)
}

// waits are what the flight's conversation waits: the adaptive timeout,
// capped by the Scanner's, its retries and what is left of its Deadline.
func (f *flight) waits() protocol.Waits {
	e := f.r.e
	return protocol.Waits{
		Timeout: e.rtt.timeout(), MaxTimeout: e.rtt.max, Retries: e.retries,
		Deadline: f.deadline(), Serial: e.interval > 0,
	}
}

// pump sends the requests the conversation has ready, as far as pacing
// and HostInterval allow; granted is set when the pacer has granted the
// first send already. Requests go into out when it is not nil.
func (f *flight) pump(now time.Time, out *udpclient.Batch, granted bool) {
	e := f.r.e
	for !f.conv.Done() && f.conv.Pending() {
		if e.interval > 0 && now.Before(f.nextSend) {
			return // settle arms the timer for nextSend
		}
		if e.pacer != nil && !granted {
			prio := f.priority()
			if !e.pacer.take(now, prio) {
				e.pacer.wait(&f.wait, prio)
				return
			}
		}
		granted = false
		f.transmit(now, out)
	}
}

// priority is the pacer queue of the flight's next request: the requests
// of a server that has answered go before the first requests of new
// servers, which go before the resends to silent ones.
func (f *flight) priority() int8 {
	switch {
	case f.conv.Heard():
		return prioLive
	case f.conv.Resending():
		return prioSilent
	}
	return prioNew
}

// transmit sends the conversation's next request.
func (f *flight) transmit(now time.Time, out *udpclient.Batch) {
	e := f.r.e
	resend := f.conv.Resending()
	b, ok := f.conv.AppendRequest(f.buf[:0], now)
	if !ok {
		return
	}
	f.buf = b
	f.sent++
	if resend {
		f.resent++
	}
	var err error
	switch {
	case e.interval == 0 && out != nil:
		err = out.Send(b, f.addr) // a failed batched send comes back through the transport
	default:
		err = f.sock.t.Send(b, f.addr)
		if e.interval > 0 {
			f.nextSend = time.Now().Add(e.interval) // from the datagram's departure
		}
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		f.conv.Fail(err)
	}
}

// settle ends the flight if its conversation is over, else arms the
// timer for the conversation's next timeout, or for the next send
// HostInterval allows.
func (f *flight) settle(now time.Time) {
	if f.conv.Done() {
		f.finish()
		return
	}
	next := f.conv.Wake()
	if f.r.e.interval > 0 && f.conv.Pending() && f.nextSend.After(now) && (next.IsZero() || f.nextSend.Before(next)) {
		next = f.nextSend
	}
	if next.IsZero() || !f.armed.IsZero() && !next.Before(f.armed) {
		return
	}
	f.armed = next
	if f.timer == nil {
		f.timer = time.AfterFunc(next.Sub(now), f.onTimer)
	} else {
		f.timer.Reset(next.Sub(now))
	}
}

// onTimer handles the conversation's timeouts and sends what they, or
// HostInterval, make ready.
func (f *flight) onTimer() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.done || f.armed.IsZero() || now.Before(f.armed) {
		return // finished, or re-armed since this firing was scheduled
	}
	f.armed = time.Time{}
	f.conv.Tick(now)
	f.pump(now, nil, false)
	f.settle(now)
}

// paced sends the request the pacer granted a slot to, or starts a
// stream flight's query.
func (f *flight) paced(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	if f.conv == nil {
		f.startStream()
		return
	}
	f.pump(now, nil, true)
	f.settle(now)
}

// HandleDatagram digests a datagram from the server, on the socket's
// read loop; the requests it makes ready go into out.
func (f *flight) HandleDatagram(_ netip.AddrPort, b []byte, now time.Time, out *udpclient.Batch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.received++
	f.conv.Receive(b, now)
	if !f.sampled && f.conv.Heard() {
		f.sampled = true
		if rtt, clean := f.conv.RoundTrip(); clean {
			f.r.e.rtt.sample(rtt)
		}
	}
	f.pump(now, out, false)
	f.settle(now)
}

// HandleUnreachable ends the flight after the network reported its server
// unreachable.
func (f *flight) HandleUnreachable(_ netip.AddrPort, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.conv.Unreachable(err)
	f.settle(time.Now())
}

// HandleSendError ends the flight after the kernel refused one of its
// datagrams.
func (f *flight) HandleSendError(_ netip.AddrPort, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.conv.Fail(err)
	f.settle(time.Now())
}

// cancel ends the flight with StatusCanceled, its scan being canceled.
func (f *flight) cancel(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.canceled = true
	switch {
	case f.conv != nil:
		f.conv.Fail(err)
	case f.stop != nil:
		f.stop() // the query ends, and reports its own result
		return
	}
	f.finish()
}

// startStream starts a TCP or HTTP flight's query, once HostInterval and
// a connection allow; f.mu is held.
func (f *flight) startStream() {
	ctx, stop := context.WithCancel(f.r.ctx)
	f.stop = stop
	go f.converse(ctx)
}

// converse runs a TCP or HTTP query.
func (f *flight) converse(ctx context.Context) {
	e := f.r.e
	defer f.stop()
	if wait := time.Until(f.nextSend); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	select {
	case e.conns <- struct{}{}:
		defer func() { <-e.conns }()
	case <-ctx.Done():
	}
	if d := f.deadline(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	// The answer goes into a result of its own: the flight's is handed
	// on when it ends.
	answer := f.query.NewResult(f.res.Result.Target, f.addr)
	asked := ctx.Err() == nil
	if asked {
		f.query.(protocol.StreamQuery).Do(protocol.WithResolver(ctx, e.resolver), f.addr, f.waits(), answer)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	if asked {
		f.sent++ // a connection, or a request
	}
	f.nextSend = time.Now().Add(e.interval)
	f.res.Result = answer
	f.canceled = f.canceled || f.r.ctx.Err() != nil
	f.finish()
}

// deadline is what is left of the Deadline for the query, once the host
// name is resolved; negative for none.
func (f *flight) deadline() time.Duration {
	d := f.r.e.deadline
	if d > 0 && f.resolving > 0 {
		d = max(d-f.resolving, time.Millisecond)
	}
	return d
}

// finish ends the flight and hands its outcome on; f.mu is held.
func (f *flight) finish() {
	f.done = true
	r, e := f.r, f.r.e
	if f.timer != nil {
		f.timer.Stop()
	}
	if e.pacer != nil {
		e.pacer.remove(&f.wait)
	}
	if f.conv != nil {
		f.sock.t.Detach(&f.link)
		f.query.(protocol.UDPQuery).Record(f.conv, f.res.Result)
		if c, ok := f.conv.Challenge(); ok {
			f.challenges.Put(f.addr, c)
		}
	}
	if f.launched {
		f.res.Status = status(f.res.Result, f.query.Sections())
	}
	if f.canceled {
		f.res.Status = StatusCanceled
		if rr := f.res.Result; rr.Err == nil && len(rr.Errors) == 0 {
			// Not asked yet, or a query cut short: no section says so.
			when := "before it was queried"
			if f.launched {
				when = "before it answered"
			}
			err := fmt.Errorf("scan: %s: canceled %s: %w", rr.Target, when, r.ctx.Err())
			rr.Err = &result.Error{Kind: result.KindCanceled, Message: err.Error(), Err: err}
		}
	}
	r.sent.Add(f.sent)
	r.resent.Add(f.resent)
	r.received.Add(f.received)
	e.release(f)
	r.deliver(&f.res)
}

// status classifies r, the result of a query that asked sections. A
// result that failed as a whole, with no section saying why, is
// classified by its error.
func status(r *result.Result, asked []result.Section) Status {
	if r.Err != nil && len(r.Errors) == 0 {
		switch r.Err.Kind {
		case result.KindTimeout:
			return StatusTimedOut
		case result.KindUnreachable:
			return StatusUnreachable
		}
		return StatusFailed
	}
	var ok, timeouts, unreachable, failures int
	for _, s := range asked {
		switch e := r.SectionErr(s); {
		case e == nil:
			ok++
		case e.Kind == result.KindUnreachable:
			unreachable++
		case e.Kind == result.KindTimeout:
			timeouts++
		default:
			failures++
		}
	}
	switch {
	case failures+timeouts+unreachable == 0:
		return StatusAnswered
	case ok > 0:
		return StatusPartial
	case unreachable > 0:
		return StatusUnreachable
	case failures == 0:
		return StatusTimedOut
	}
	return StatusFailed
}
