package scan

import (
	"sync"
	"time"
)

// pacer is a token bucket in its virtual-time form (GCRA): each datagram
// reserves the next free send slot, so nobody ever blocks waiting for a
// token; a datagram whose slot is in the future is sent by a timer.
type pacer struct {
	mu       sync.Mutex
	interval time.Duration // 1/rate; 0 = unpaced
	burst    time.Duration // how far ahead of schedule a burst may go
	tat      time.Time     // theoretical arrival time of the next datagram
}

func newPacer(rate, burst int) *pacer {
	if rate <= 0 {
		return &pacer{}
	}
	iv := time.Second / time.Duration(rate)
	if iv <= 0 {
		iv = 1
	}
	return &pacer{interval: iv, burst: iv * time.Duration(max(burst, 1))}
}

// reserve takes the next send slot and returns how long to wait for it.
func (p *pacer) reserve(now time.Time) time.Duration {
	if p.interval == 0 {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.tat
	if t.Before(now) {
		t = now
	}
	p.tat = t.Add(p.interval)
	return max(t.Sub(now)-p.burst, 0)
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

// timeout is how long to wait for an answer to the attempt-th send of a
// request (0 for the first): the estimate, half as long again on each
// retry, within [min, max]. Backing off by 1.5 rather than TCP's 2 keeps
// the last retries of a lossy path from dominating a scan's duration.
func (e *rttEstimator) timeout(attempt int) time.Duration {
	e.mu.Lock()
	rto := e.initial
	if e.samples > 0 {
		rto = e.srtt + 4*e.rttvar
	}
	e.mu.Unlock()
	rto = max(rto, e.min)
	for range min(attempt, 32) {
		if rto >= e.max {
			break
		}
		rto += rto / 2
	}
	return min(rto, e.max)
}
