package schedule

import (
	"testing"
	"time"
)

// A schedule's waits grow half again with each resend up to the cap, its
// retries run out, and its deadline comes first when it is nearer.
func TestSchedule(t *testing.T) {
	t.Parallel()
	s := Schedule{DefTimeout: time.Second, MaxTimeout: 2 * time.Second, Retries: Retries(0, 3), Deadline: 10 * time.Second}
	s.Start()
	now := time.Unix(100, 0)
	var waits []time.Duration
	for s.Due() {
		s.Sent(now)
		wake := s.Wake()
		waits = append(waits, wake.Sub(now))
		now = wake
		if s.Tick(now) != Expired {
			t.Fatalf("no expiry at %v", now)
		}
		if !s.Retry() {
			break
		}
		if !s.Resending() || s.Attempt() == 0 {
			t.Fatal("a retry is not a resend")
		}
	}
	want := []time.Duration{time.Second, 1500 * time.Millisecond, 2 * time.Second, 2 * time.Second}
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	s.Start()
	s.Timeout, s.MaxTimeout = time.Minute, 0
	s.Sent(now)
	if w := s.Wake(); w.Sub(now) != 10*time.Second || s.Tick(w) != Deadline {
		t.Errorf("the deadline does not come first: wake in %v", w.Sub(now))
	}
	s.Next()
	if !s.Due() || s.Resent() || s.Attempt() != 0 {
		t.Error("Next is not a first send")
	}
	s.Stop()
	if s.Due() || s.Tick(now.Add(time.Second)) != Nothing {
		t.Error("a stopped schedule has something due")
	}
	for n, want := range map[int]int{0: 7, -1: 0, 4: 4} {
		if got := Retries(n, 7); got != want {
			t.Errorf("Retries(%d, 7) = %d, want %d", n, got, want)
		}
	}
}
