package store

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetention(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(t0)
		ret := Retention{Raw: 3 * time.Hour, Minute: 24 * time.Hour, Hour: 3 * 24 * time.Hour, Sessions: 24 * time.Hour, Maps: 3 * 24 * time.Hour}
		st := e.open(t, WithClock(clock.now), WithRetention(ret))
		syncNames(t, st, "s")
		end := t0.Add(8 * 24 * time.Hour)
		for at := t0; at.Before(end); at = at.Add(10 * time.Minute) {
			var round []Sample
			for m := time.Duration(0); m < 10*time.Minute; m += time.Minute {
				round = append(round, withPlayers("s", at.Add(m), "alice:1"))
			}
			if at == t0 {
				round[0] = changes(round[0], "+alice")
			}
			for i := range round {
				round[i].Map = "map-" + at.Format("2006-01-02T15")
			}
			if at.Hour() == 3 && at.Minute() == 0 {
				// Down: alice's session ends when she was last listed, and
				// a new one begins when the server is back.
				round[5] = down("s", at.Add(5*time.Minute))
				round[5].Sessions = []SessionChange{{Player: "alice", Left: true, Time: at.Add(4 * time.Minute)}}
				round[6] = down("s", at.Add(6*time.Minute))
				round[7] = down("s", at.Add(7*time.Minute))
				round[8] = down("s", at.Add(8*time.Minute))
				round[9] = changes(round[9], "+alice")
			}
			must(t, st.Write(ctx, round))
			clock.set(at.Add(10 * time.Minute))
			must(t, st.Maintain(ctx, at.Add(10*time.Minute)))
		}
		now := end.Unix()
		// PostgreSQL drops the raw samples a day's partition at a time:
		// those of the cut's day wait for the day.
		rawOldest := floorTo(now-3*hour, hour)
		if e.name == "postgres" {
			rawOldest = floorTo(now-3*hour, day)
		}
		for _, c := range []struct {
			table  string
			oldest int64
		}{
			{"samples", rawOldest},
			{"rollup_minute", floorTo(now-day, day)},
			{"rollup_hour", floorTo(now-3*day, day)},
			{"rollup_day", t0.Unix()},
		} {
			var oldest int64
			must(t, st.rdb.QueryRow("SELECT min(t) FROM "+c.table).Scan(&oldest))
			if oldest < c.oldest || oldest > c.oldest+day {
				t.Errorf("%s: oldest row %v, want %v (or up to a day after)", c.table, time.Unix(oldest, 0).UTC(), time.Unix(c.oldest, 0).UTC())
			}
		}
		if n := count(t, st, "SELECT count(*) FROM rollup_day"); n != 7 {
			t.Errorf("%d day rollups after 8 days (the eighth is today's), want 7", n)
		}
		// History from before the raw and minute retention comes from the
		// hour and day levels, whole.
		points, err := st.History(ctx, "s", t0, end, 24*time.Hour)
		must(t, err)
		for i, p := range points {
			if p.Samples != 1440 || p.Uptime > 1 || p.Uptime < 0.996 {
				t.Errorf("day %d: %+v", i, p)
			}
		}
		points, err = st.History(ctx, "s", end.Add(-3*24*time.Hour), end.Add(-2*24*time.Hour), time.Hour)
		must(t, err)
		for i, p := range points {
			if p.Samples != 60 {
				t.Errorf("hour %d of day 6: %d samples, want 60", i, p.Samples)
			}
		}
		// A step finer than what is kept: the old part is a gap.
		points, err = st.History(ctx, "s", t0, t0.Add(time.Hour), time.Minute)
		must(t, err)
		for _, p := range points {
			if p.Samples != 0 {
				t.Fatalf("a minute of day 1 kept past the minute retention: %+v", p)
			}
		}
		maps, err := st.Maps(ctx, "s", t0, end)
		must(t, err)
		if len(maps) == 0 || maps[0].Time.Before(time.Unix(floorTo(now-3*day, day), 0)) {
			t.Errorf("map changes kept from %v", maps[0].Time)
		}
		sessions, err := st.Sessions(ctx, SessionQuery{Server: "s", To: end})
		must(t, err)
		oldest := sessions[len(sessions)-1]
		if oldest.Left.Unix() < floorTo(now-day, day) {
			t.Errorf("a session that ended %v kept a day later", oldest.Left)
		}
		// Texts are kept as long as the map changes that use them (3
		// days) and two more, and deleted a day at a time.
		if n := count(t, st, "SELECT count(*) FROM strings"); n < 3*24 || n > 6*24+1 {
			t.Errorf("%d interned strings kept; the maps of 5 to 6 days and a version are 121 to 145", n)
		}
		if len(maps) != 3*24 {
			t.Errorf("%d map changes kept, want the 72 of 3 days", len(maps))
		}
		must(t, st.Check(ctx))
	})
}

func TestLateSamplesRolledUpAgain(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s")
		var samples []Sample
		for m := 0; m < 180; m += 2 {
			samples = append(samples, up("s", min_(m), 4))
		}
		must(t, st.Write(ctx, samples))
		must(t, st.Maintain(ctx, min_(180)))
		if st.w.marks.rolled[LevelHour] != min_(120).Unix() {
			t.Fatalf("hour rollups up to %v", st.w.marks.rolled[LevelHour])
		}
		// The odd minutes arrive late, after their rollup.
		var late []Sample
		for m := 1; m < 180; m += 2 {
			late = append(late, up("s", min_(m), 10))
		}
		must(t, st.Write(ctx, late))
		must(t, st.Maintain(ctx, min_(181)))
		points, err := st.History(ctx, "s", t0, min_(180), time.Hour)
		must(t, err)
		samples = append(samples, late...)
		comparePoints(t, points, reference(samples, "s", t0.Unix(), min_(180).Unix(), hour))
		if n := count(t, st, "SELECT sum(polls) FROM rollup_hour"); n != 120 {
			t.Errorf("hour rollups count %d polls, want 120", n)
		}
	})
}

func TestConcurrentReadersDuringWrites(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		names := []string{"a", "b", "c", "d"}
		syncNames(t, st, names...)
		const rounds = 300
		var written atomic.Int64
		done := make(chan struct{})
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		for r := range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for last := 0; ; {
					select {
					case <-done:
						return
					default:
					}
					// Read what was committed before the read began: a
					// consistent snapshot never shows fewer polls than that,
					// nor a round half written.
					before := int(written.Load())
					points, err := st.History(ctx, names[r], t0, t0.Add(time.Hour), time.Hour)
					if err != nil {
						errs <- err
						return
					}
					n := points[0].Samples
					if n < before || n < last {
						errs <- errors.New("history went back")
						return
					}
					last = n
					all, err := st.UptimeAll(ctx, t0, t0.Add(time.Hour))
					if err != nil {
						errs <- err
						return
					}
					if a, d := all["a"].Polls, all["d"].Polls; a != d {
						errs <- errors.New("a round seen half written")
						return
					}
				}
			}()
		}
		for i := range rounds {
			var round []Sample
			for _, n := range names {
				round = append(round, withPlayers(n, t0.Add(time.Duration(i)*10*time.Second), "p:1"))
			}
			if err := st.Write(ctx, round); err != nil {
				t.Error(err)
				break
			}
			written.Add(1)
			if i%100 == 99 {
				must(t, st.Maintain(ctx, t0.Add(time.Duration(i)*10*time.Second)))
			}
		}
		close(done)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func TestLateSampleAfterRetentionKeepsRollups(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t, WithRetention(Retention{Raw: 2 * time.Hour}))
		syncNames(t, st, "s")
		// Past a day, so that PostgreSQL drops the first day's partition.
		var samples []Sample
		for m := 0; m < 27*60; m++ {
			samples = append(samples, up("s", min_(m), 3))
		}
		must(t, st.Write(ctx, samples))
		must(t, st.Maintain(ctx, min_(27*60)))
		if st.w.marks.kept[LevelRaw] == 0 {
			t.Fatal("no raw samples deleted")
		}
		// A sample from the first minute, whose raw samples are gone.
		must(t, st.Write(ctx, []Sample{up("s", min_(0).Add(30*time.Second), 30)}))
		must(t, st.Maintain(ctx, min_(27*60+1)))
		points, err := st.History(ctx, "s", t0, min_(2), time.Minute)
		must(t, err)
		if points[0].Samples != 1 || points[0].MaxPlayers != 3 {
			t.Errorf("the first minute after a late sample past retention: %+v, want its 1 sample of 3 players kept", points[0])
		}
		must(t, st.Check(ctx))
	})
}
