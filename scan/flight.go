package scan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/udpio"
	"github.com/gsq-project/gsq/result"
)

// flight is one target being queried. An A2S flight drives an
// a2s.Conversation datagram by datagram on the engine's shared sockets:
// it sends the requests the conversation has ready (as pacing and
// HostInterval allow), feeds it the server's datagrams and ICMP errors,
// and keeps one timer armed for the conversation's next timeout. An OGP
// flight runs its query on the engine's ogp.Client in a goroutine.
type flight struct {
	r    *run
	res  Result
	addr netip.AddrPort // the address queried, once known
	sock *socket
	// ipCounted is set while the flight holds one of its IP address's
	// MaxPerIP places; guarded by the engine's mu.
	ipCounted bool
	// resolving is the time its host name took to resolve, which counts
	// against the Deadline.
	resolving time.Duration

	mu       sync.Mutex
	conv     a2s.Conversation
	query    a2s.Query
	timer    *time.Timer
	armed    time.Time // when the timer is due; zero when it is not armed
	nextSend time.Time // HostInterval spacing
	buf      []byte    // the request being sent; reqBuf unless it grew (PadInfo)
	reqBuf   [32]byte  // room for every request but a padded A2S_INFO
	launched bool
	done     bool
	canceled bool
	sampled  bool // the round trip was taken (or found not clean)
	sent     int64
	resent   int64
	received int64

	wait waiter // the flight's place in the pacer's queues
}

func newFlight(r *run, t Target) *flight {
	f := &flight{r: r, addr: t.Addr}
	f.buf = f.reqBuf[:0]
	f.wait = waiter{prio: -1, owner: f}
	input := t.Input
	if input == "" {
		input = t.String()
	}
	f.res.Target = t
	f.res.Result = result.New(input, t.Addr, r.e.proto.resultProtocol())
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
func (f *flight) launch(out *udpio.Writer) {
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
	if e.blocking != nil {
		if e.pacer != nil && !e.pacer.take(now, prioNew) {
			e.pacer.wait(&f.wait, prioNew)
			return
		}
		go f.converse()
		return
	}
	f.query = e.query
	f.query.Deadline = f.deadline()
	f.query.Timeout = e.rtt.timeout()
	f.query.MaxTimeout = e.rtt.max
	if s := f.res.Target.Sections; s != 0 {
		f.query.Sections = s
	}
	chal, known := e.challenge(addr)
	f.conv.Start(&f.query, addr, chal, known)
	f.pump(now, out, false)
	f.settle(now)
}

// pump sends the requests the conversation has ready, as far as pacing
// and HostInterval allow; granted is set when the pacer has granted the
// first send already. Requests go into out when it is not nil.
func (f *flight) pump(now time.Time, out *udpio.Writer, granted bool) {
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
func (f *flight) transmit(now time.Time, out *udpio.Writer) {
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
	addr := f.addr
	if e.debug != nil {
		e.debug("send", addr, b)
	}
	if e.interval == 0 && out.Add(b, addr) {
		return // a failed batched send comes back through the writer
	}
	err := udpio.WriteTo(f.sock.conn, b, addr)
	if e.interval > 0 {
		f.nextSend = time.Now().Add(e.interval) // from the datagram's departure
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

// paced sends the request the pacer granted a slot to.
func (f *flight) paced(now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	if f.r.e.blocking != nil {
		go f.converse()
		return
	}
	f.pump(now, nil, true)
	f.settle(now)
}

// handle digests a datagram from the server; the requests it makes ready
// go into out.
func (f *flight) handle(b []byte, now time.Time, out *udpio.Writer) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done || !f.launched || f.r.e.blocking != nil {
		return // an OGP server's replies go to the ogp.Client's socket
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

// unreachable ends the flight after the network reported its server
// unreachable.
func (f *flight) unreachable(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done || !f.launched || f.r.e.blocking != nil {
		return
	}
	f.conv.Unreachable(err)
	f.settle(time.Now())
}

// sendFailed ends the flight after the kernel refused one of its
// datagrams.
func (f *flight) sendFailed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done || !f.launched || f.r.e.blocking != nil {
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
	if f.launched && f.r.e.blocking == nil {
		f.conv.Fail(err)
	}
	f.finish()
}

// converse runs an OGP query, once HostInterval allows.
func (f *flight) converse() {
	r := f.r
	if wait := time.Until(f.nextSend); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			f.cancel(r.ctx.Err())
			return
		}
	}
	ctx := r.ctx
	if d := f.deadline(); d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	f.mu.Lock()
	if f.done {
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	// The answer goes into a result of its own: a flight canceled
	// meanwhile has handed its result on.
	answer := result.New(f.res.Result.Target, f.addr, f.res.Result.Protocol)
	status, stats := r.e.blocking.query(ctx, f.addr, answer)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	f.sent, f.resent = int64(stats.Sent), int64(stats.Resent)
	f.nextSend = time.Now().Add(r.e.interval)
	f.res.Status = status
	f.res.Result = answer
	f.canceled = r.ctx.Err() != nil
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

// finish ends the flight and hands its result on; f.mu is held.
func (f *flight) finish() {
	f.done = true
	r, e := f.r, f.r.e
	if f.timer != nil {
		f.timer.Stop()
	}
	if e.pacer != nil {
		e.pacer.remove(&f.wait)
	}
	if f.launched && e.blocking == nil {
		res := f.conv.Result()
		f.res.Result.SetA2S(res)
		f.res.Status = a2sStatus(res, f.query.Sections)
		if c, ok := f.conv.Challenge(); ok {
			e.keepChallenge(f.addr, c)
		}
	}
	if f.canceled {
		f.res.Status = StatusCanceled
		if rr := f.res.Result; rr.Err == nil && len(rr.Errors) == 0 {
			// Not asked yet, or an OGP query cut short: no section says so.
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
