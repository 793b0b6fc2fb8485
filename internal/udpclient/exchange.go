package udpclient

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Conversation is the client side of one query with one server, as a
// state machine that does no I/O and reads no clock: its driver sends the
// requests it hands out, feeds it the server's datagrams and the
// network's reports, and calls Tick when the time it asks for comes.
// a2s.Conversation and ogp.Conversation are ones; [Transport.Exchange]
// drives one on the calling goroutine, and the scan engine thousands at
// once. The protocol's own Start begins it.
type Conversation interface {
	// Pending reports whether a request is ready: AppendRequest will
	// hand it out.
	Pending() bool
	// AppendRequest appends the next request to b, ok false when none is
	// ready. The request counts as sent at now.
	AppendRequest(b []byte, now time.Time) (req []byte, ok bool)
	// Receive digests a datagram from the server, read at now. b is not
	// retained.
	Receive(b []byte, now time.Time)
	// Wake returns when the conversation next needs Tick; zero when no
	// timer is needed.
	Wake() time.Time
	// Tick handles the timers due at now: resends, timeouts, deadline.
	Tick(now time.Time)
	// Done reports whether the conversation is over.
	Done() bool
	// Heard reports whether the server has sent something that reads as
	// the protocol: a driver that paces its sends serves live servers
	// first.
	Heard() bool
	// Resending reports whether the next request is a resend after a
	// timeout.
	Resending() bool
	// RoundTrip returns the round-trip time, and whether it times the
	// network (measured while every request in the air was a first send).
	RoundTrip() (rtt time.Duration, clean bool)
	// Challenge returns the server's challenge, when known, for the next
	// conversation with the server.
	Challenge() (challenge uint32, ok bool)
	// Fail ends what is left of the conversation with err: the driver
	// gave up (a send failed, it closed, its context ended: a context's
	// deadline reads as the protocol's timeout).
	Fail(err error)
	// Unreachable ends what is left with the protocol's unreachable
	// error and err, the network's report (an ICMP error).
	Unreachable(err error)
}

// Backoff is the wait for the answer to the attempt-th send of a request
// (from 0): timeout, half as long again on each resend, capped by max (0:
// no cap).
func Backoff(timeout, max time.Duration, attempt int) time.Duration {
	t := timeout
	for range attempt {
		if max > 0 && t >= max || t > 1<<50 {
			break // capped, or a day and more: stop before it overflows
		}
		t += t / 2
	}
	if max > 0 {
		t = min(t, max)
	}
	return t
}

// exchangeQueue is how many datagrams the read loop queues for one
// Exchange before it drops the next ones: a conversation that is busy
// (decompressing, say) holds up no one else.
const exchangeQueue = 64

// exchange is one Exchange in progress: the Peer the read loop hands the
// server's datagrams to, queued for the goroutine that runs the
// conversation. Each Transport pools its own (their channels and timers
// belong to the goroutines that use the Transport, which matters to
// testing/synctest): mu guards addr against a late delivery meant for the
// exchange's previous server.
type exchange struct {
	link  Link
	ch    chan event
	timer *time.Timer
	req   []byte

	mu   sync.Mutex
	addr netip.AddrPort
}

// event is a datagram from the server (in a pooled buffer the
// conversation reads and hands back), or an ICMP report about it.
type event struct {
	buf *[]byte
	at  time.Time
	err error
}

// newExchange makes an exchange for a Transport's pool.
func newExchange() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &exchange{ch: make(chan event, exchangeQueue), timer: t, req: make([]byte, 0, 64)}
}

// datagramPool recycles the copies of datagrams an Exchange queues: a
// conversation does not retain what it receives.
var datagramPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 2048)
	return &b
}}

func (x *exchange) HandleDatagram(from netip.AddrPort, b []byte, now time.Time, _ *Batch) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if from != x.addr {
		return // meant for the server of an earlier Exchange
	}
	buf := datagramPool.Get().(*[]byte)
	*buf = append((*buf)[:0], b...)
	select {
	case x.ch <- event{buf: buf, at: now}:
	default:
		datagramPool.Put(buf) // the conversation is flooded
	}
}

func (x *exchange) HandleUnreachable(from netip.AddrPort, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if from != x.addr {
		return
	}
	select {
	case x.ch <- event{err: err}:
	default:
	}
}

// HandleSendError is never called: an Exchange sends at once.
func (x *exchange) HandleSendError(netip.AddrPort, error) {}

// Exchange runs conv, already started, with the server at addr until it
// is done, on the calling goroutine: it sends the requests conv has
// ready, feeds it the server's datagrams and ICMP reports, and ticks its
// timers. ctx bounds it: when ctx ends, conv fails with ctx.Err(). step,
// when not nil, is called after each step of the conversation (it may
// read conv, which is idle meanwhile). When the Transport is closed or
// its read loop ends, conv fails with Err.
func (t *Transport) Exchange(ctx context.Context, addr netip.AddrPort, conv Conversation, step func()) {
	x := t.exchanges.Get().(*exchange)
	x.mu.Lock()
	x.addr = addr
	x.mu.Unlock()
	defer t.exchanges.Put(x)
	err := ctx.Err() // nothing is sent once ctx has ended
	if err == nil {
		err = t.Attach(&x.link, addr, x)
	}
	if err != nil {
		conv.Fail(err)
		if step != nil {
			step()
		}
		return
	}
	for {
		now := time.Now()
		t.sendPending(x, addr, conv, now)
		if step != nil {
			step()
		}
		if conv.Done() {
			break
		}
		wait := x.timer.C
		if wake := conv.Wake(); !wake.IsZero() {
			x.timer.Reset(wake.Sub(now))
		} else {
			wait = nil
		}
		select {
		case ev := <-x.ch:
			x.handle(conv, ev)
			for more := true; more && !conv.Done(); {
				select {
				case ev := <-x.ch:
					x.handle(conv, ev)
				default:
					more = false
				}
			}
		case <-wait:
			conv.Tick(time.Now())
		case <-ctx.Done():
			conv.Fail(ctx.Err())
		case <-t.done:
			conv.Fail(t.Err())
		}
		x.timer.Stop()
	}
	x.timer.Stop()
	t.Detach(&x.link)
	x.mu.Lock()
	x.addr = netip.AddrPort{}
	x.mu.Unlock()
	for {
		select {
		case ev := <-x.ch:
			if ev.buf != nil {
				datagramPool.Put(ev.buf)
			}
			continue
		default:
		}
		break
	}
}

// handle hands an event of the read loop to conv.
func (x *exchange) handle(conv Conversation, ev event) {
	if ev.err != nil {
		conv.Unreachable(ev.err)
		return
	}
	conv.Receive(*ev.buf, ev.at)
	datagramPool.Put(ev.buf)
}

// sendPending sends the requests conv has ready.
func (t *Transport) sendPending(x *exchange, addr netip.AddrPort, conv Conversation, now time.Time) {
	for {
		b, ok := conv.AppendRequest(x.req[:0], now)
		if !ok {
			return
		}
		x.req = b
		if err := t.Send(b, addr); err != nil {
			if errors.Is(err, net.ErrClosed) {
				if cerr := t.Err(); cerr != nil {
					err = cerr // closed while the request went out
				}
			}
			conv.Fail(err)
			return
		}
	}
}
