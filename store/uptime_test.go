package store

import (
	"context"
	"testing"
)

// A server down only inside a maintenance incident keeps 100%: the
// incident's polls, down and up, are left out of Uptime and UptimeAll;
// an outage's are not.
func TestUptimeLeavesOutMaintenance(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t, WithClock(newClock(min_(100)).now))
		syncNames(t, st, "m", "o")
		for i := range 10 {
			must(t, st.Write(ctx, []Sample{up("m", min_(i), 1), up("o", min_(i), 1)}))
		}
		// Minutes 10-13 down: m's in maintenance, o's an outage; both
		// answer again at 14.
		mo := outage(down("m", min_(10)), min_(10), "timeout")
		mo.Outage.Maintenance = true
		must(t, st.Write(ctx, []Sample{mo, outage(down("o", min_(10)), min_(10), "timeout")}))
		for i := 11; i < 14; i++ {
			must(t, st.Write(ctx, []Sample{down("m", min_(i)), down("o", min_(i))}))
		}
		for i := 14; i < 20; i++ {
			s := []Sample{up("m", min_(i), 1), up("o", min_(i), 1)}
			if i == 14 {
				s = []Sample{recovered(s[0]), recovered(s[1])}
			}
			must(t, st.Write(ctx, s))
		}
		frac, polls, err := st.Uptime(ctx, "m", min_(0), min_(20))
		must(t, err)
		if frac != 1 || polls != 16 {
			t.Errorf("m: uptime %v over %d polls, want 1 over 16 (the 4 of maintenance left out)", frac, polls)
		}
		frac, polls, err = st.Uptime(ctx, "o", min_(0), min_(20))
		must(t, err)
		if frac != 16.0/20 || polls != 20 {
			t.Errorf("o: uptime %v over %d polls, want 0.8 over 20", frac, polls)
		}
		// A range that starts inside the incident leaves out its part.
		frac, polls, err = st.Uptime(ctx, "m", min_(12), min_(20))
		must(t, err)
		if frac != 1 || polls != 6 {
			t.Errorf("m from 12: uptime %v over %d polls, want 1 over 6", frac, polls)
		}
		all, err := st.UptimeAll(ctx, min_(0), min_(20))
		must(t, err)
		if got := all["m"]; got.Fraction != 1 || got.Polls != 16 {
			t.Errorf("UptimeAll m: %+v, want 1 over 16", got)
		}
		if got := all["o"]; got.Fraction != 0.8 || got.Polls != 20 {
			t.Errorf("UptimeAll o: %+v, want 0.8 over 20", got)
		}
		// An open maintenance incident leaves out its polls up to the end
		// of the range.
		mo = outage(down("m", min_(20)), min_(20), "timeout")
		mo.Outage.Maintenance = true
		must(t, st.Write(ctx, []Sample{mo}))
		must(t, st.Write(ctx, []Sample{down("m", min_(21))}))
		all, err = st.UptimeAll(ctx, min_(0), min_(22))
		must(t, err)
		if got := all["m"]; got.Fraction != 1 || got.Polls != 16 {
			t.Errorf("UptimeAll m, open incident: %+v, want 1 over 16", got)
		}
	})
}
