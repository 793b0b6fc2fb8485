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
	queues   [numPrio]struct{ head, tail *flight }
	timer    *time.Timer
	armed    time.Time // when the timer is due; zero when it is not armed
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

// wait queues f at priority prio (or moves it there, if it waits at a
// worse one); the pacer calls f.paced when its turn comes. f.mu is held.
func (p *pacer) wait(f *flight, prio int8) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.prio >= 0 {
		if f.prio <= prio {
			return
		}
		p.unlink(f)
	}
	q := &p.queues[prio]
	f.prio, f.qprev, f.qnext = prio, q.tail, nil
	if q.tail != nil {
		q.tail.qnext = f
	} else {
		q.head = f
	}
	q.tail = f
	at := p.due()
	if p.armed.IsZero() || at.Before(p.armed) {
		p.armed = at
		p.timer.Reset(time.Until(at))
	}
}

// remove takes f out of its queue, if it is in one. f.mu is held.
func (p *pacer) remove(f *flight) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.prio >= 0 {
		p.unlink(f)
	}
}

// unlink takes f out of its queue. p.mu is held.
func (p *pacer) unlink(f *flight) {
	q := &p.queues[f.prio]
	if f.qprev != nil {
		f.qprev.qnext = f.qnext
	} else {
		q.head = f.qnext
	}
	if f.qnext != nil {
		f.qnext.qprev = f.qprev
	} else {
		q.tail = f.qprev
	}
	f.prio, f.qprev, f.qnext = -1, nil, nil
}

// serve hands the free tokens to the waiting flights, best queue first,
// and re-arms the timer for the next token while flights wait.
func (p *pacer) serve() {
	for {
		p.mu.Lock()
		p.armed = time.Time{}
		var f *flight
		for q := range p.queues {
			if f = p.queues[q].head; f != nil {
				break
			}
		}
		if f == nil {
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
		p.unlink(f)
		p.mu.Unlock()
		f.paced(now)
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
// (see a2s.Query), up to max; backing off by 1.5 rather than TCP's 2 keeps
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
