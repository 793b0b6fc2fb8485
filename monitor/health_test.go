package monitor

import (
	"testing"
	"time"

	"github.com/gsq-project/gsq/result"
)

var t0 = time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)

var errTimeout = &result.Error{Kind: result.KindTimeout, Message: "no answer"}

// runHealth plays polls, one per interval from t0, on a fresh Health:
// '+' a success, '-' a timeout, 'c' a poll the monitor canceled. It
// returns the events, one character per poll: '.' none, 'U' EventUp, 'D'
// EventDown.
func runHealth(t *testing.T, h *Health, interval time.Duration, polls string) string {
	t.Helper()
	out := make([]byte, len(polls))
	for i := range len(polls) {
		at := t0.Add(time.Duration(i) * interval)
		var err *result.Error
		switch polls[i] {
		case '-':
			err = errTimeout
		case 'c':
			err = &result.Error{Kind: result.KindCanceled}
		}
		switch ev := h.Observe(at, err); ev {
		case "":
			out[i] = '.'
		case EventUp:
			out[i] = 'U'
		case EventDown:
			out[i] = 'D'
		default:
			t.Fatalf("poll %d: event %q", i, ev)
		}
	}
	return string(out)
}

func TestHealth(t *testing.T) {
	t.Parallel()
	defaults := HealthPolicy{}
	tests := []struct {
		name     string
		policy   HealthPolicy
		interval time.Duration
		polls    string
		want     string
		status   Status
	}{
		{"up on the first answer", defaults, 30 * time.Second, "+++", "U..", StatusUp},
		{"one lost datagram is no flap", defaults, 30 * time.Second, "++-++", "U....", StatusUp},
		{"two failures are not enough", defaults, 30 * time.Second, "+--+--+", "U......", StatusUp},
		{"three failures over a minute: down, then up", defaults, 30 * time.Second, "+---+", "U..DU", StatusUp},
		{"down is reported once", defaults, 30 * time.Second, "+-------", "U..D....", StatusDown},
		{"up is reported once", defaults, 30 * time.Second, "+---+++", "U..DU..", StatusUp},
		// Polls 10s apart: three failures span 20s, not the minute;
		// the seventh failure, 60s after the first, makes it down.
		{"three quick failures wait for the minute", defaults, 10 * time.Second, "+-------", "U......D", StatusDown},
		{"flapping never goes down", defaults, 30 * time.Second, "+-+-+-+-+-+-+-+-", "U...............", StatusUp},
		// A map change stalls a server for a minute: 2 polls lost at 30s.
		{"a map change stall is no flap", defaults, 30 * time.Second, "++--++--++", "U.........", StatusUp},
		// Failing from the start: within the 2m grace, pending; down at
		// the first failure after it.
		{"grace keeps a starting server pending", defaults, 30 * time.Second, "-----", "....D", StatusDown},
		{"a success during grace: up", defaults, 30 * time.Second, "--+", "..U", StatusUp},
		{"grace ends with the first answer", defaults, 30 * time.Second, "-+---", ".U..D", StatusDown},
		{"pending within grace stays pending", defaults, 30 * time.Second, "---", "...", StatusPending},
		{"no grace", HealthPolicy{Grace: -1}, 30 * time.Second, "---", "..D", StatusDown},
		{"canceled polls say nothing", defaults, 30 * time.Second, "+-c-c-+", "U....DU", StatusUp},
		{"canceled polls do not reset the count", defaults, 30 * time.Second, "+-c-c", "U....", StatusUp},
		{"count only", HealthPolicy{DownAfter: -1, Grace: -1}, time.Second, "+---+", "U..DU", StatusUp},
		{"one failure is down", HealthPolicy{Failures: 1, DownAfter: -1}, time.Second, "+-+", "UDU", StatusUp},
		// LinuxGSM's monitor: five attempts 15s apart.
		{"five attempts 15s apart", HealthPolicy{Failures: 5, DownAfter: time.Minute}, 15 * time.Second, "+-----+", "U....DU", StatusUp},
		{"five attempts, the fourth answers", HealthPolicy{Failures: 5, DownAfter: time.Minute}, 15 * time.Second, "+---+----", "U........", StatusUp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := NewHealth(tt.policy, t0)
			if got := runHealth(t, h, tt.interval, tt.polls); got != tt.want {
				t.Errorf("polls %s: events %s, want %s", tt.polls, got, tt.want)
			}
			if h.Status() != tt.status {
				t.Errorf("status %s, want %s", h.Status(), tt.status)
			}
		})
	}
}

func TestHealthState(t *testing.T) {
	t.Parallel()
	h := NewHealth(HealthPolicy{}, t0)
	if h.Status() != StatusPending || !h.Since().Equal(t0) || !h.LastPoll().IsZero() {
		t.Fatalf("new: %s since %v, last poll %v", h.Status(), h.Since(), h.LastPoll())
	}
	runHealth(t, h, 30*time.Second, "+---")
	if h.Status() != StatusDown || !h.Since().Equal(t0.Add(90*time.Second)) {
		t.Errorf("down since %v, want %v", h.Since(), t0.Add(90*time.Second))
	}
	if h.ConsecutiveFailures() != 3 || !h.FailingSince().Equal(t0.Add(30*time.Second)) {
		t.Errorf("failures %d since %v", h.ConsecutiveFailures(), h.FailingSince())
	}
	if !h.LastSuccess().Equal(t0) || !h.LastPoll().Equal(t0.Add(90*time.Second)) {
		t.Errorf("last success %v, last poll %v", h.LastSuccess(), h.LastPoll())
	}
	if e := h.LastError(); e == nil || e.Kind != result.KindTimeout {
		t.Errorf("last error %v", e)
	} else {
		e.Kind = "changed"
		if h.LastError().Kind != result.KindTimeout {
			t.Error("LastError hands out the Health's own error")
		}
	}
	h.Observe(t0.Add(120*time.Second), nil)
	if h.LastError() != nil || h.ConsecutiveFailures() != 0 || !h.FailingSince().IsZero() {
		t.Errorf("after a success: error %v, failures %d", h.LastError(), h.ConsecutiveFailures())
	}
}

// TestHealthSetPolicy checks that a reload's new policy judges the next
// poll, with the count kept.
func TestHealthSetPolicy(t *testing.T) {
	t.Parallel()
	h := NewHealth(HealthPolicy{Failures: 10}, t0)
	if got := runHealth(t, h, 30*time.Second, "+---"); got != "U..." {
		t.Fatalf("events %s", got)
	}
	h.SetPolicy(HealthPolicy{Failures: 4})
	if ev := h.Observe(t0.Add(4*30*time.Second), errTimeout); ev != EventDown {
		t.Errorf("fourth failure under the new policy: %q, want down", ev)
	}
}
