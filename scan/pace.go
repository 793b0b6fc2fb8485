package scan

import (
	"sync"
	"time"
)

// The pacer's queues, in the order they are served: the requests of
// servers that have answered, the first requests of new servers, and the
// resends to servers that have not answered. Under a rate limit a scan of
// a list with many dead entries still finishes its live servers first.
const (
	prioLive int8 = iota
	prioNew
	prioSilent
	numPrio
)

// pacer bounds the datagrams sent per second: a token bucket in its
// virtual-time form (GCRA). A flight that finds no token, or flights of
// its priority or a better one waiting, waits in its priority's queue;
// a timer serves the queues, best first, as tokens come.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration // 1/rate
	burst    time.Duration // how far ahead of schedule a burst may go
	tat      time.Time     // theoretical arrival time of the next datagram
	queues   [numPrio]struct{ head, tail *waiter }
	timer    *time.Timer
	armed    time.Time // when the timer is due; zero when it is not armed
}

// waiter is a place in the pacer's queues, which a flight embeds; its
// fields are guarded by the pacer's mu.
type waiter struct {
	prio       int8 // the queue it is in; -1 when in none
	prev, next *waiter
	owner      pacee
}

// pacee is what waits in a pacer's queue: a flight.
type pacee interface {
	// paced is called, without the pacer's lock, when a token was taken
	// for the pacee's next datagram.
	paced(now time.Time)
}

func newPacer(rate, burst int) *pacer {
	iv := time.Second / time.Duration(rate)
	if iv <= 0 {
		iv = 1
	}
	p := &pacer{interval: iv, burst: iv * time.Duration(max(burst, 1))}
	p.timer = time.AfterFunc(time.Hour, p.serve)
	p.timer.Stop()
	return p
}

// due is when the next token is free. p.mu is held.
func (p *pacer) due() time.Time { return p.tat.Add(-p.burst) }

// consume takes a token at now. p.mu is held.
func (p *pacer) consume(now time.Time) {
	if p.tat.Before(now) {
		p.tat = now
	}
	p.tat = p.tat.Add(p.interval)
}

// take takes a token for a datagram of priority prio, if one is free and
// no flight of that priority or a better one waits.
func (p *pacer) take(now time.Time, prio int8) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for q := int8(0); q <= prio; q++ {
		if p.queues[q].head != nil {
			return false
		}
	}
	if p.due().After(now) {
		return false
	}
	p.consume(now)
	return true
}

// wait queues w at priority prio (or moves it there, if it waits at a
// worse one); the pacer calls w.owner.paced when its turn comes.
func (p *pacer) wait(w *waiter, prio int8) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.prio >= 0 {
		if w.prio <= prio {
			return
		}
		p.unlink(w)
	}
	q := &p.queues[prio]
	w.prio, w.prev, w.next = prio, q.tail, nil
	if q.tail != nil {
		q.tail.next = w
	} else {
		q.head = w
	}
	q.tail = w
	at := p.due()
	if p.armed.IsZero() || at.Before(p.armed) {
		p.armed = at
		p.timer.Reset(time.Until(at))
	}
}

// remove takes w out of its queue, if it is in one.
func (p *pacer) remove(w *waiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.prio >= 0 {
		p.unlink(w)
	}
}

// unlink takes w out of its queue. p.mu is held.
func (p *pacer) unlink(w *waiter) {
	q := &p.queues[w.prio]
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prio, w.prev, w.next = -1, nil, nil
}

// serve hands the free tokens to the waiting flights, best queue first,
// and re-arms the timer for the next token while flights wait.
func (p *pacer) serve() {
	for {
		p.mu.Lock()
		p.armed = time.Time{}
		var w *waiter
		for q := range p.queues {
			if w = p.queues[q].head; w != nil {
				break
			}
		}
		if w == nil {
			p.mu.Unlock()
			return
		}
		now := time.Now()
		if at := p.due(); at.After(now) {
			p.armed = at
			p.timer.Reset(at.Sub(now))
			p.mu.Unlock()
			return
		}
		p.consume(now)
		p.unlink(w)
		p.mu.Unlock()
		w.owner.paced(now)
	}
}

// rttEstimator smooths round-trip samples the way TCP does (RFC 6298) and
// derives the retransmission timeout from them.
type rttEstimator struct {
	mu       sync.Mutex
	srtt     time.Duration
	rttvar   time.Duration
	samples  int
	min, max time.Duration // bounds of the timeout
	initial  time.Duration // the timeout before any sample
}

// sample records a round trip measured on a request sent once (Karn's
// rule: a resent request's answer cannot be matched to one send).
func (e *rttEstimator) sample(rtt time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.samples == 0 {
		e.srtt, e.rttvar = rtt, rtt/2
	} else {
		d := e.srtt - rtt
		if d < 0 {
			d = -d
		}
		e.rttvar = (3*e.rttvar + d) / 4
		e.srtt = (7*e.srtt + rtt) / 8
	}
	e.samples++
}

// timeout is how long to wait for the answer to a request's first send:
// the estimate within [min, max]. Each resend waits half as long again
// (see a2s.Options), up to max; backing off by 1.5 rather than TCP's 2 keeps
// the last retries of a lossy path from dominating a scan's duration.
func (e *rttEstimator) timeout() time.Duration {
	e.mu.Lock()
	rto := e.initial
	if e.samples > 0 {
		rto = e.srtt + 4*e.rttvar
	}
	e.mu.Unlock()
	return min(max(rto, e.min), e.max)
}
