package store

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

func TestOpenSyncServers(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		list, err := st.Servers(ctx)
		must(t, err)
		if len(list) != 0 {
			t.Fatalf("new store lists %v", list)
		}
		must(t, st.SyncServers(ctx, []Server{
			{Name: "b", Target: "10.0.0.2:27015", Protocol: "a2s", Labels: map[string]string{"game": "cs2", "region": "eu"}},
			{Name: "a", Target: "10.0.0.1:27015", Protocol: "ogp"},
		}))
		// Update one, add one, leave one out: it keeps its history.
		must(t, st.SyncServers(ctx, []Server{
			{Name: "a", Target: "10.0.0.1:27016", Protocol: "a2s"},
			{Name: "c", Target: "10.0.0.3:27015", Protocol: "a2s"},
		}))
		must(t, st.Write(ctx, []Sample{up("a", t0, 3)}))
		st.Close()
		st = e.open(t)
		list, err = st.Servers(ctx)
		must(t, err)
		want := []Server{
			{Name: "a", Target: "10.0.0.1:27016", Protocol: "a2s", Announced: "a server"},
			{Name: "b", Target: "10.0.0.2:27015", Protocol: "a2s", Labels: map[string]string{"game": "cs2", "region": "eu"}},
			{Name: "c", Target: "10.0.0.3:27015", Protocol: "a2s"},
		}
		if len(list) != len(want) {
			t.Fatalf("Servers = %+v, want %+v", list, want)
		}
		for i := range want {
			if list[i].Name != want[i].Name || list[i].Target != want[i].Target || list[i].Protocol != want[i].Protocol ||
				list[i].Announced != want[i].Announced || len(list[i].Labels) != len(want[i].Labels) ||
				list[i].Labels["region"] != want[i].Labels["region"] {
				t.Errorf("Servers[%d] = %+v, want %+v", i, list[i], want[i])
			}
		}
		must(t, st.Check(ctx))
	})
}

func TestWriteUnknownServerWritesNothing(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a")
		err := st.Write(ctx, []Sample{up("a", t0, 1), up("nope", t0, 1)})
		if !errors.Is(err, ErrUnknownServer) {
			t.Fatalf("Write with an unknown server: %v, want ErrUnknownServer", err)
		}
		if n := count(t, st, "SELECT count(*) FROM samples"); n != 0 {
			t.Errorf("%d samples written by a failed Write", n)
		}
		if _, err := st.History(ctx, "nope", t0, t0.Add(time.Hour), time.Minute); !errors.Is(err, ErrUnknownServer) {
			t.Errorf("History of an unknown server: %v", err)
		}
		if _, err := st.Records(ctx, "nope"); !errors.Is(err, ErrUnknownServer) {
			t.Errorf("Records of an unknown server: %v", err)
		}
	})
}

func TestHistoryBucketsAndGaps(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s")
		unknown := up("s", t0.Add(150*time.Second), -1)
		unknown.MaxPlayers = -1
		for _, smp := range []Sample{
			up("s", t0.Add(0), 4),
			up("s", t0.Add(30*time.Second), 6),
			down("s", t0.Add(60*time.Second)),
			down("s", t0.Add(90*time.Second)),
			// 120-150: no poll at all
			unknown, // up without a player count
			up("s", t0.Add(180*time.Second), 10),
			up("s", t0.Add(210*time.Second), 0),
		} {
			must(t, st.Write(ctx, []Sample{smp}))
		}
		points, err := st.History(ctx, "s", t0, t0.Add(4*time.Minute), time.Minute)
		must(t, err)
		want := []Point{
			{Time: t0, Samples: 2, Uptime: 1, MinPlayers: 4, AvgPlayers: 5, MaxPlayers: 6, Capacity: 32, Up: true},
			{Time: t0.Add(time.Minute), Samples: 2, Uptime: 0},
			{Time: t0.Add(2 * time.Minute), Samples: 1, Uptime: 1, MinPlayers: -1, AvgPlayers: -1, MaxPlayers: -1, Capacity: -1, Up: true},
			{Time: t0.Add(3 * time.Minute), Samples: 2, Uptime: 1, MinPlayers: 0, AvgPlayers: 5, MaxPlayers: 10, Capacity: 32, Up: true},
		}
		comparePoints(t, points, want)
		// A step of 30 s shows the bucket with no poll as a gap.
		points, err = st.History(ctx, "s", t0.Add(2*time.Minute), t0.Add(3*time.Minute), 30*time.Second)
		must(t, err)
		comparePoints(t, points, []Point{
			{Time: t0.Add(2 * time.Minute)},
			{Time: t0.Add(150 * time.Second), Samples: 1, Uptime: 1, MinPlayers: -1, AvgPlayers: -1, MaxPlayers: -1, Capacity: -1, Up: true},
		})
		// from is rounded down to the step; to is exclusive.
		points, err = st.History(ctx, "s", t0.Add(40*time.Second), t0.Add(2*time.Minute), 2*time.Minute)
		must(t, err)
		comparePoints(t, points, []Point{
			{Time: t0, Samples: 4, Uptime: 0.5, MinPlayers: 4, AvgPlayers: 5, MaxPlayers: 6, Capacity: 32, Up: true},
		})
		frac, polls, err := st.Uptime(ctx, "s", t0, t0.Add(4*time.Minute))
		must(t, err)
		if polls != 7 || math.Abs(frac-5.0/7) > 1e-9 {
			t.Errorf("Uptime = %v over %d polls, want 5/7 over 7", frac, polls)
		}
		if _, err := st.History(ctx, "s", t0, t0.Add(time.Hour), 1500*time.Millisecond); err == nil {
			t.Error("History with a step of 1.5 s: no error")
		}
		if _, err := st.History(ctx, "s", t0, t0.Add(365*24*time.Hour), time.Second); err == nil {
			t.Error("History of a year by the second: no error")
		}
	})
}

func comparePoints(t *testing.T, got, want []Point) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d points, want %d:\n got %+v\nwant %+v", len(got), len(want), got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		if !g.Time.Equal(w.Time) || g.Samples != w.Samples || math.Abs(g.Uptime-w.Uptime) > 1e-9 || g.Up != w.Up ||
			g.MinPlayers != w.MinPlayers || g.MaxPlayers != w.MaxPlayers || math.Abs(g.AvgPlayers-w.AvgPlayers) > 1e-9 ||
			g.Capacity != w.Capacity {
			t.Errorf("point %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

// reference computes History's points from the samples themselves.
func reference(samples []Sample, server string, start, end, step int64) []Point {
	n := (end - start + step - 1) / step
	type acc struct {
		polls, up, counted, sum int
		min, max, capacity      int
	}
	accs := make([]acc, n)
	for i := range accs {
		accs[i].min, accs[i].max, accs[i].capacity = math.MaxInt, -1, -1
	}
	for _, s := range samples {
		ts := s.Time.Unix()
		if s.Server != server || ts < start || ts >= end {
			continue
		}
		a := &accs[(ts-start)/step]
		a.polls++
		if !s.Up {
			continue
		}
		a.up++
		if s.Players >= 0 {
			a.counted++
			a.sum += s.Players
			a.min = min(a.min, s.Players)
			a.max = max(a.max, s.Players)
		}
		a.capacity = max(a.capacity, s.MaxPlayers)
	}
	points := make([]Point, n)
	for i, a := range accs {
		p := Point{Time: time.Unix(start+int64(i)*step, 0).UTC(), Samples: a.polls}
		if a.polls > 0 {
			p.Uptime = float64(a.up) / float64(a.polls)
		}
		if a.up > 0 {
			p.Up = true
			p.MinPlayers, p.MaxPlayers, p.AvgPlayers, p.Capacity = -1, -1, -1, a.capacity
			if a.counted > 0 {
				p.MinPlayers, p.MaxPlayers = a.min, a.max
				p.AvgPlayers = float64(a.sum) / float64(a.counted)
			}
		}
		points[i] = p
	}
	return points
}

// simulate writes polls of servers every interval over [from, to), with
// outages, missed polls and players coming and going, calling Maintain
// as the monitor would, and returns the samples.
func simulate(t *testing.T, st Store, clock *simClock, names []string, from, to time.Time, interval time.Duration, seed uint64) []Sample {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 1))
	var all []Sample
	players := make(map[string]int)
	downUntil := make(map[string]time.Time)
	var round []Sample
	lastMaintain := from
	for at := from; at.Before(to); at = at.Add(interval) {
		for i, name := range names {
			ts := at.Add(time.Duration(i) * time.Second)
			switch r := rng.IntN(1000); {
			case r < 5:
				continue // a poll that never happened
			case r < 8:
				downUntil[name] = ts.Add(time.Duration(rng.IntN(90)) * time.Minute)
			}
			if ts.Before(downUntil[name]) {
				round = append(round, down(name, ts))
				continue
			}
			players[name] = max(0, min(32, players[name]+rng.IntN(5)-2))
			smp := up(name, ts, players[name])
			if rng.IntN(500) == 0 {
				smp.Players = -1
			}
			round = append(round, smp)
		}
		if len(round) >= 20*len(names) || !at.Add(interval).Before(to) {
			must(t, st.Write(ctx, round))
			all = append(all, round...)
			round = round[:0]
		}
		if now := at.Add(interval); now.Sub(lastMaintain) >= 10*time.Minute && len(round) == 0 {
			clock.set(now)
			must(t, st.Maintain(ctx, now))
			lastMaintain = now
		}
	}
	return all
}

func TestRollupsMatchSamples(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(t0)
		st := e.open(t, WithClock(clock.now))
		names := []string{"alpha", "beta", "gamma"}
		syncNames(t, st, names...)
		end := t0.Add(50 * time.Hour)
		samples := simulate(t, st, clock, names, t0, end, time.Minute, 1)
		m := st.w.marks
		if m.rolled[LevelMinute] == 0 || m.rolled[LevelHour] == 0 || m.rolled[LevelDay] != t0.Add(48*time.Hour).Unix() {
			t.Fatalf("rollup marks %+v after 50 h", m)
		}
		if m.kept[LevelRaw] == 0 {
			t.Fatalf("no raw samples deleted after 50 h (marks %+v)", m)
		}
		for _, q := range []struct {
			from, to time.Time
			step     time.Duration
		}{
			{t0, end, 24 * time.Hour},
			{t0, end, 6 * time.Hour},
			{t0.Add(90 * time.Minute), end, time.Hour},
			{t0.Add(30 * time.Hour), end, 5 * time.Minute},
			{end.Add(-3 * time.Hour), end, time.Minute},
			{end.Add(-40 * time.Minute), end, 2 * time.Minute},
			{end.Add(-90 * time.Minute), end.Add(-20 * time.Minute), 30 * time.Second},
			{t0.Add(7 * time.Hour), t0.Add(9 * time.Hour), 20 * time.Minute},
		} {
			got, err := st.History(ctx, "beta", q.from, q.to, q.step)
			must(t, err)
			size := int64(q.step / time.Second)
			want := reference(samples, "beta", floorTo(q.from.Unix(), size), q.to.Unix(), size)
			t.Logf("History %v..%v by %v: %d points", q.from.Sub(t0), q.to.Sub(t0), q.step, len(got))
			comparePoints(t, got, want)
		}
		// Uptime and UptimeAll over stretches that cut across buckets.
		for _, r := range [][2]time.Time{{t0, end}, {t0.Add(61 * time.Minute), end.Add(-7 * time.Minute)}, {end.Add(-5 * time.Hour), end}} {
			all, err := st.UptimeAll(ctx, r[0], r[1])
			must(t, err)
			for _, name := range names {
				frac, polls, err := st.Uptime(ctx, name, r[0], r[1])
				must(t, err)
				want := reference(samples, name, r[0].Unix(), r[1].Unix(), r[1].Unix()-r[0].Unix())[0]
				if polls != want.Samples || math.Abs(frac-want.Uptime) > 1e-9 {
					t.Errorf("Uptime(%s, %v..%v) = %v/%d, want %v/%d", name, r[0].Sub(t0), r[1].Sub(t0), frac, polls, want.Uptime, want.Samples)
				}
				if a := all[name]; a.Polls != polls || a.Fraction != frac {
					t.Errorf("UptimeAll[%s] = %+v, Uptime says %v/%d", name, a, frac, polls)
				}
			}
		}
		must(t, st.Check(ctx))
	})
}

// TestUptimeOfServerWithoutRollups: the uptime of a server with no rows
// in a level that is rolled up (added late, or silent) is no polls, not
// an error: the sum of no rows is NULL.
func TestUptimeOfServerWithoutRollups(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a", "b")
		var samples []Sample
		for i := range 20 {
			samples = append(samples, up("a", t0.Add(time.Duration(i)*30*time.Second), 3))
		}
		must(t, st.Write(ctx, samples))
		must(t, st.Maintain(ctx, t0.Add(30*time.Minute)))
		if n := count(t, st, "SELECT count(*) FROM rollup_minute"); n == 0 {
			t.Fatal("nothing rolled up: the test tests nothing")
		}
		f, polls, err := st.Uptime(ctx, "b", t0.Add(-time.Hour), t0.Add(30*time.Minute))
		if err != nil || polls != 0 || f != 0 {
			t.Errorf("b: uptime %v over %d polls, %v; want none", f, polls, err)
		}
		if _, polls, err := st.Uptime(ctx, "a", t0.Add(-time.Hour), t0.Add(30*time.Minute)); err != nil || polls != 20 {
			t.Errorf("a: %d polls, %v; want 20", polls, err)
		}
	})
}
