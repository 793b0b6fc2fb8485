package monitor

import (
	"time"

	"github.com/gsq-project/gsq/result"
)

// HealthPolicy says when a server is down. Zero fields mean the defaults;
// a negative DownAfter or Grace means none.
type HealthPolicy struct {
	// Failures is how many consecutive polls must fail (default 3).
	Failures int
	// DownAfter is how long the failures must span at least, from the
	// first failed poll of the run to the last (default 60s). Together
	// with Failures it makes one lost datagram, or a server stalled for a
	// map change, no flap: the defaults are three polls 30 seconds apart,
	// a minute of silence, as LinuxGSM's monitor waits a minute (five
	// attempts 15 seconds apart) before it calls a server down.
	DownAfter time.Duration
	// Grace is how long after the monitor starts watching a server that
	// server stays pending, rather than down, while it has not answered
	// yet: a server started at the same time as the monitor may take
	// minutes to load its map (default 2m).
	Grace time.Duration
}

func (p HealthPolicy) failures() int { return orDefault(p.Failures, DefaultFailures) }

func (p HealthPolicy) downAfter() time.Duration {
	return max(0, zeroIsDefault(p.DownAfter, DefaultDownAfter))
}

func (p HealthPolicy) grace() time.Duration { return max(0, zeroIsDefault(p.Grace, DefaultGrace)) }

// orDefault is v, or def when v is zero or negative.
func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// zeroIsDefault is v, or def when v is zero: the options' convention,
// where zero is the default and a negative value none.
func zeroIsDefault[T int | time.Duration](v, def T) T {
	if v == 0 {
		return def
	}
	return v
}

// Health decides whether one server is pending, up or down, from the
// outcomes of its polls. It is a pure state machine: the time of each
// outcome is given to it (the clock is the caller's), it starts no
// goroutine and never sleeps. It is not safe for concurrent use; a
// server's polls are observed in order, by one goroutine.
//
// The rules:
//   - a server starts pending;
//   - the first successful poll makes it up, whatever came before;
//   - it goes down when Failures consecutive polls failed and the failures
//     span at least DownAfter; one success resets the count, so a server
//     that fails and answers by turns never goes down;
//   - within Grace of the start, a server that has never answered stays
//     pending instead of going down;
//   - a poll canceled by the monitor itself (KindCanceled, on shutdown or
//     reload) says nothing about the server and is ignored.
//
// Up needs one success, not several: a valid answer cannot be forged by a
// lost datagram the way a failure can, and the down rule already keeps a
// flapping server from going down, so waiting for more answers would only
// delay the "back up" news by an interval.
type Health struct {
	policy  HealthPolicy
	started time.Time

	status       Status
	since        time.Time
	everUp       bool
	failures     int
	firstFailure time.Time
	lastPoll     time.Time
	lastSuccess  time.Time
	lastErr      *result.Error
}

// NewHealth returns the health of a server the monitor starts watching at
// start: pending.
func NewHealth(p HealthPolicy, start time.Time) *Health {
	return &Health{policy: p, started: start, status: StatusPending, since: start}
}

// SetPolicy changes the policy, as a config reload does; the state is
// kept and the next outcome is judged by the new policy.
func (h *Health) SetPolicy(p HealthPolicy) { h.policy = p }

// Observe records the outcome of a poll that ended at the given time: err
// is nil for a success. It returns EventUp or EventDown when the status
// changed that way, and "" otherwise: each transition is reported once.
func (h *Health) Observe(at time.Time, err *result.Error) EventKind {
	if err != nil && err.Kind == result.KindCanceled {
		return ""
	}
	h.lastPoll = at
	if err == nil {
		h.failures = 0
		h.lastErr = nil
		h.lastSuccess = at
		h.everUp = true
		if h.status != StatusUp {
			h.status, h.since = StatusUp, at
			return EventUp
		}
		return ""
	}
	e := *err
	h.lastErr = &e
	h.failures++
	if h.failures == 1 {
		h.firstFailure = at
	}
	if h.status == StatusDown ||
		h.failures < h.policy.failures() ||
		at.Sub(h.firstFailure) < h.policy.downAfter() {
		return ""
	}
	if !h.everUp && at.Sub(h.started) < h.policy.grace() {
		return "" // still starting, perhaps
	}
	h.status, h.since = StatusDown, at
	return EventDown
}

// Status is the server's status now.
func (h *Health) Status() Status { return h.status }

// Since is when the status last changed (the start, while pending).
func (h *Health) Since() time.Time { return h.since }

// ConsecutiveFailures counts the failed polls since the last success.
func (h *Health) ConsecutiveFailures() int { return h.failures }

// FailingSince is when the current run of failures began; zero after a
// success.
func (h *Health) FailingSince() time.Time {
	if h.failures == 0 {
		return time.Time{}
	}
	return h.firstFailure
}

// LastPoll is when the last poll ended; zero before the first.
func (h *Health) LastPoll() time.Time { return h.lastPoll }

// LastSuccess is when the last successful poll ended; zero if none.
func (h *Health) LastSuccess() time.Time { return h.lastSuccess }

// LastError is why the last poll failed; nil after a success.
func (h *Health) LastError() *result.Error {
	if h.lastErr == nil {
		return nil
	}
	e := *h.lastErr
	return &e
}
