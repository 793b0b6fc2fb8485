package monitor

import (
	"cmp"
	"time"

	"github.com/gsq-project/gsq/result"
)

// HealthPolicy says when a server is down. Zero fields mean the defaults;
// a negative DownAfter or Grace means none, a negative Failures one.
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

// failures is the threshold; a negative Failures means one failure (a
// server down at its first failed poll), as none would.
func (p HealthPolicy) failures() int { return max(1, cmp.Or(p.Failures, DefaultFailures)) }

func (p HealthPolicy) downAfter() time.Duration { return max(0, cmp.Or(p.DownAfter, DefaultDownAfter)) }

func (p HealthPolicy) grace() time.Duration { return max(0, cmp.Or(p.Grace, DefaultGrace)) }

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
	policy HealthPolicy
	s      HealthState
}

// HealthState is what a [Health] knows, as plain data: a [Snapshot]
// carries it.
type HealthState struct {
	Started      time.Time // when the monitor started watching the server
	Status       Status
	Since        time.Time
	EverUp       bool
	Failures     int
	FirstFailure time.Time
	LastPoll     time.Time
	LastSuccess  time.Time
	LastError    *result.Error
}

// NewHealth returns the health of a server the monitor starts watching at
// start: pending.
func NewHealth(p HealthPolicy, start time.Time) *Health {
	return &Health{policy: p, s: HealthState{Started: start, Status: StatusPending, Since: start}}
}

// RestoreHealth returns a Health that carries on from s, as a Health
// whose State was s would.
func RestoreHealth(p HealthPolicy, s HealthState) *Health {
	h := &Health{policy: p, s: s}
	h.s.LastError = h.LastError() // a copy of its own
	return h
}

// State returns what the Health knows.
func (h *Health) State() HealthState {
	s := h.s
	s.LastError = h.LastError()
	return s
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
	h.s.LastPoll = at
	if err == nil {
		h.s.Failures = 0
		h.s.LastError = nil
		h.s.LastSuccess = at
		h.s.EverUp = true
		if h.s.Status != StatusUp {
			h.s.Status, h.s.Since = StatusUp, at
			return EventUp
		}
		return ""
	}
	e := *err
	h.s.LastError = &e
	h.s.Failures++
	if h.s.Failures == 1 {
		h.s.FirstFailure = at
	}
	if h.s.Status == StatusDown ||
		h.s.Failures < h.policy.failures() ||
		at.Sub(h.s.FirstFailure) < h.policy.downAfter() {
		return ""
	}
	if !h.s.EverUp && at.Sub(h.s.Started) < h.policy.grace() {
		return "" // still starting, perhaps
	}
	h.s.Status, h.s.Since = StatusDown, at
	return EventDown
}

// Status is the server's status now.
func (h *Health) Status() Status { return h.s.Status }

// Since is when the status last changed (the start, while pending).
func (h *Health) Since() time.Time { return h.s.Since }

// ConsecutiveFailures counts the failed polls since the last success.
func (h *Health) ConsecutiveFailures() int { return h.s.Failures }

// FailingSince is when the current run of failures began; zero after a
// success.
func (h *Health) FailingSince() time.Time {
	if h.s.Failures == 0 {
		return time.Time{}
	}
	return h.s.FirstFailure
}

// LastPoll is when the last poll ended; zero before the first.
func (h *Health) LastPoll() time.Time { return h.s.LastPoll }

// LastSuccess is when the last successful poll ended; zero if none.
func (h *Health) LastSuccess() time.Time { return h.s.LastSuccess }

// LastError is why the last poll failed; nil after a success.
func (h *Health) LastError() *result.Error {
	if h.s.LastError == nil {
		return nil
	}
	e := *h.s.LastError
	return &e
}
