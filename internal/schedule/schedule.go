// Package schedule holds the timing that gsq's UDP conversations of one
// request in the air share (mcquery's, bedrock's, master's and
// satisfactory's): a timeout that grows half again with each resend, up
// to a cap, a number of retries, and a deadline for the whole
// conversation, with the conventions of docs/conventions.md (zero is the
// default, a negative count or duration none). It does no I/O and reads
// no clock. It uses the standard library and internal/udpclient's
// Backoff only.
package schedule

import (
	"cmp"
	"math"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
)

// Retries is n resends: def for 0, none for a negative n.
func Retries(n, def int) int {
	switch {
	case n < 0:
		return 0
	case n == 0:
		return def
	}
	return min(n, math.MaxUint16)
}

// Event is what Tick finds due.
type Event uint8

const (
	// Nothing is due.
	Nothing Event = iota
	// Deadline: the conversation's time is up.
	Deadline
	// Expired: the request in the air went unanswered in time. The
	// conversation calls Retry, or moves on.
	Expired
)

// Schedule is the timing of one conversation. The zero value has nothing
// due; Start makes the first request due.
type Schedule struct {
	Timeout, DefTimeout time.Duration // the request's base timeout (when positive) and its default
	MaxTimeout          time.Duration // caps the timeout of a resend; none when not positive
	Retries             int           // resends allowed, resolved (see the function Retries)
	Deadline            time.Duration // the conversation's, from its first send; none when not positive

	due, air, resent bool
	attempt          int
	expiry, deadline time.Time
	started          bool
	lastSend         time.Time
}

// Start makes the first request due, forgetting any earlier run.
func (s *Schedule) Start() {
	*s = Schedule{Timeout: s.Timeout, DefTimeout: s.DefTimeout, MaxTimeout: s.MaxTimeout, Retries: s.Retries, Deadline: s.Deadline, due: true}
}

// Due reports whether a request is ready to be sent.
func (s *Schedule) Due() bool { return s.due }

// Resending reports whether the request due is a resend after a timeout.
func (s *Schedule) Resending() bool { return s.due && s.resent }

// Resent reports whether the request in the air, or due, is a resend.
func (s *Schedule) Resent() bool { return s.resent }

// Attempt is the number of resends of the request in the air, or due.
func (s *Schedule) Attempt() int { return s.attempt }

// LastSend is when the latest request went out.
func (s *Schedule) LastSend() time.Time { return s.lastSend }

// Sent records the request due as sent at now: its timeout starts, and the
// first one starts the deadline.
func (s *Schedule) Sent(now time.Time) {
	s.due, s.air = false, true
	s.expiry = now.Add(udpclient.Backoff(cmp.Or(max(s.Timeout, 0), s.DefTimeout), max(s.MaxTimeout, 0), s.attempt))
	s.lastSend = now
	if !s.started {
		s.started = true
		if s.Deadline > 0 {
			s.deadline = now.Add(s.Deadline)
		}
	}
}

// Next makes a new request due (the next step of the conversation), as a
// first send: its retries start afresh.
func (s *Schedule) Next() { s.due, s.air, s.resent, s.attempt = true, false, false, 0 }

// Stop ends the schedule: nothing is due or in the air.
func (s *Schedule) Stop() { s.due, s.air = false, false }

// Wake returns when Tick is next needed: the timeout of the request in the
// air or the deadline, whichever comes first; zero when neither runs.
func (s *Schedule) Wake() time.Time {
	t := s.deadline
	if s.air && (t.IsZero() || s.expiry.Before(t)) {
		t = s.expiry
	}
	return t
}

// Tick returns what is due at now.
func (s *Schedule) Tick(now time.Time) Event {
	if !s.deadline.IsZero() && !now.Before(s.deadline) {
		return Deadline
	}
	if !s.air || now.Before(s.expiry) {
		return Nothing
	}
	s.air = false
	return Expired
}

// Retry makes the request that expired due again, as a resend, and
// reports whether it had a retry left.
func (s *Schedule) Retry() bool {
	if s.attempt >= s.Retries {
		return false
	}
	s.attempt++
	s.due, s.resent = true, true
	return true
}
