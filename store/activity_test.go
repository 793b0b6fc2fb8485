package store

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestHistoryMany: several servers' history at once is each one's
// History, across rolled-up hours, minutes and raw samples; an unknown
// name is left out.
func TestHistoryMany(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(t0)
		st := e.open(t, WithClock(clock.now))
		names := []string{"alpha", "beta", "gamma"}
		syncNames(t, st, names...)
		end := t0.Add(26 * time.Hour)
		simulate(t, st, clock, names, t0, end, time.Minute, 1)
		for _, q := range []struct {
			from, to time.Time
			step     time.Duration
		}{
			{end.Add(-24 * time.Hour), end, time.Hour},
			{end.Add(-3 * time.Hour), end, 5 * time.Minute},
			{end.Add(-10 * time.Minute), end, time.Minute},
		} {
			got, err := st.HistoryMany(ctx, []string{"gamma", "alpha", "nobody"}, q.from, q.to, q.step)
			must(t, err)
			if len(got) != 2 {
				t.Fatalf("HistoryMany of gamma, alpha and nobody: %d servers", len(got))
			}
			for _, name := range []string{"alpha", "gamma"} {
				want, err := st.History(ctx, name, q.from, q.to, q.step)
				must(t, err)
				comparePoints(t, got[name], want)
			}
		}
		if _, err := st.HistoryMany(ctx, names, t0, end, time.Second); err == nil {
			t.Error("HistoryMany of 3 servers by the second over a day: no error")
		}
	})
}

// TestDayAverages: each server's average players a day, polls down
// counting as none, from the day rollups; the day not rolled up yet is
// not read, and through says so.
func TestDayAverages(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(t0)
		st := e.open(t, WithClock(clock.now))
		names := []string{"alpha", "beta"}
		syncNames(t, st, names...)
		end := t0.Add(3*24*time.Hour + 5*time.Hour) // three days and five hours
		samples := simulate(t, st, clock, names, t0, end, 5*time.Minute, 2)
		got, through, err := st.DayAverages(ctx, t0.Add(-24*time.Hour), t0.Add(5*24*time.Hour))
		must(t, err)
		if !through.Equal(t0.Add(3 * 24 * time.Hour)) {
			t.Errorf("through %v, want the third day's end %v", through, t0.Add(3*24*time.Hour))
		}
		for _, name := range names {
			days := got[name]
			if len(days) != 6 || !math.IsNaN(days[0]) || !math.IsNaN(days[4]) {
				t.Fatalf("%s: %v, want 6 days, the first and the fifth without polls", name, days)
			}
			for d := range 3 {
				from, to := t0.Add(time.Duration(d)*24*time.Hour), t0.Add(time.Duration(d+1)*24*time.Hour)
				var sum, polls float64
				for _, s := range samples {
					if s.Server == name && !s.Time.Before(from) && s.Time.Before(to) {
						polls++
						if s.Up && s.Players > 0 {
							sum += float64(s.Players)
						}
					}
				}
				if math.Abs(days[d+1]-sum/polls) > 1e-9 {
					t.Errorf("%s day %d: %v, want %v", name, d, days[d+1], sum/polls)
				}
			}
		}
	})
}
