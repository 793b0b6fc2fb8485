package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store/storetest"
	"github.com/jackc/pgx/v5"
)

// keyedRow is a raw sample as the table keeps it, for comparisons.
type keyedRow struct {
	t, server, up                            int64
	players, maxPlayers, bots, mp, ver, ping *int64
	vantage                                  string
}

func (r keyedRow) String() string {
	n := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	return fmt.Sprintf("{%d %d %d %s %s %s %s %s %s %q}", r.t, r.server, r.up, n(r.players), n(r.maxPlayers), n(r.bots), n(r.mp), n(r.ver), n(r.ping), r.vantage)
}

// rawRows reads every raw sample, by key; a NULL vantage (of the schema
// before the key) as the empty string.
func rawRows(t *testing.T, s *db) []string {
	t.Helper()
	var out []string
	err := eachRow(context.Background(), s.rdb, "SELECT t, server, up, players, max_players, bots, map, version, ping, COALESCE(vantage, '') FROM samples ORDER BY t, server, vantage", nil,
		func(r *sql.Rows) error {
			var k keyedRow
			if err := r.Scan(&k.t, &k.server, &k.up, &k.players, &k.maxPlayers, &k.bots, &k.mp, &k.ver, &k.ping, &k.vantage); err != nil {
				return err
			}
			out = append(out, k.String())
			return nil
		})
	must(t, err)
	return out
}

// slotted is a sample of a fleet's slot at, polled from a vantage a
// little after the slot began.
func slotted(server string, at time.Time, vantage string, players int) Sample {
	smp := up(server, at.Add(1700*time.Millisecond), players)
	smp.Slot, smp.Vantage = at, vantage
	return smp
}

// TestSampleKey: a sample is keyed (t, server, vantage), t its slot: a
// batch written twice, or with another sample of a key, keeps the first
// row of each key; two vantages of a slot keep a row each.
func TestSampleKey(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a", "b")
		var batch []Sample
		for i := range 3 {
			slot := t0.Add(time.Duration(i) * 10 * time.Second)
			batch = append(batch, slotted("a", slot, "eu", 10+i), slotted("b", slot, "eu", 20+i))
		}
		must(t, st.Write(ctx, batch))
		first := rawRows(t, st)
		if len(first) != 6 {
			t.Fatalf("%d rows after 6 samples: %v", len(first), first)
		}
		if n := count(t, st, "SELECT count(*) FROM samples WHERE t = ?", t0.Unix()); n != 2 {
			t.Errorf("%d rows at the first slot (stored at the slot, not the poll's end), want 2", n)
		}
		// Retried, and again with other figures (a new owner's poll of
		// the same slots): the first rows stay.
		must(t, st.Write(ctx, batch))
		changed := slices.Clone(batch)
		for i := range changed {
			changed[i].Players += 100
			changed[i].Time = changed[i].Time.Add(3 * time.Second)
		}
		must(t, st.Write(ctx, changed))
		if got := rawRows(t, st); !slices.Equal(got, first) {
			t.Errorf("after writing the batch again:\n%v\nwant\n%v", got, first)
		}
		// One batch with two samples of a key: the first stays.
		dup := []Sample{slotted("a", t0.Add(time.Minute), "eu", 1), slotted("a", t0.Add(time.Minute), "eu", 2)}
		must(t, st.Write(ctx, dup))
		if n := count(t, st, "SELECT players FROM samples WHERE t = ? AND server = (SELECT id FROM servers WHERE name = 'a')", t0.Add(time.Minute).Unix()); n != 1 {
			t.Errorf("two samples of a key in one batch: players %d kept, want the first's, 1", n)
		}
		// Another vantage of the same slots: a row of its own each.
		us := slices.Clone(batch)
		for i := range us {
			us[i].Vantage = "us"
			us[i].Up, us[i].Players, us[i].Map, us[i].Ping = false, -1, "", -1
		}
		must(t, st.Write(ctx, us))
		if n := count(t, st, "SELECT count(*) FROM samples WHERE t = ?", t0.Unix()); n != 4 {
			t.Errorf("%d rows at the first slot after a second vantage, want 4", n)
		}
		var got []string
		must(t, st.EachSample(ctx, Span{Server: "a", To: t0.Add(30 * time.Second)}, func(smp Sample) error {
			got = append(got, fmt.Sprintf("%d %s %v %d", smp.Time.Unix()-t0.Unix(), smp.Vantage, smp.Up, smp.Players))
			return nil
		}))
		want := []string{"0 eu true 10", "0 us false -1", "10 eu true 11", "10 us false -1", "20 eu true 12", "20 us false -1"}
		if !slices.Equal(got, want) {
			t.Errorf("samples of a:\n%q\nwant\n%q", got, want)
		}
		// A sample without a slot is keyed by its time, vantage ''.
		must(t, st.Write(ctx, []Sample{up("a", t0.Add(time.Hour), 5), up("a", t0.Add(time.Hour), 6)}))
		if n := count(t, st, "SELECT players FROM samples WHERE t = ? AND vantage = ''", t0.Add(time.Hour).Unix()); n != 5 {
			t.Errorf("a single process's sample written twice: players %d kept, want 5", n)
		}
		// The rollups count every vantage's poll.
		must(t, st.Maintain(ctx, t0.Add(2*time.Hour)))
		points, err := st.History(ctx, "a", t0, t0.Add(time.Minute), time.Minute)
		must(t, err)
		if len(points) != 1 || points[0].Samples != 6 || points[0].Uptime != 0.5 {
			t.Errorf("the first minute of a from its rollup: %+v, want 6 polls, half of them up", points)
		}
		must(t, st.Check(ctx))
	})
}

// TestFencedWrite: a batch with a sample polled under a stale lease
// after the takeover writes nothing and returns a *FencedError naming
// the stale fences and when their shards were taken; the rest, written
// again, is kept, and so is a sample the stale lease polled before the
// takeover. SQLite refuses fenced samples.
func TestFencedWrite(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "a", "b", "c")
		eu1, eu2 := Fence{Region: "eu", Shard: 1, Epoch: 5}, Fence{Region: "eu", Shard: 2, Epoch: 3}
		fenced := func(smp Sample, f Fence) Sample { smp.Fence = f; return smp }
		if e.name == "sqlite" {
			err := st.Write(ctx, []Sample{fenced(slotted("a", t0, "eu", 1), eu1)})
			if !errors.Is(err, ErrNotShared) {
				t.Errorf("a fenced sample on SQLite: %v, want ErrNotShared", err)
			}
			if n := count(t, st, "SELECT count(*) FROM samples"); n != 0 {
				t.Errorf("%d rows written", n)
			}
			return
		}
		c, err := ClusterOf(st)
		must(t, err)
		must(t, c.TakeShard(ctx, eu1))
		must(t, c.TakeShard(ctx, eu2))
		must(t, st.Write(ctx, []Sample{fenced(slotted("a", t0, "eu", 1), eu1), fenced(slotted("b", t0, "eu", 2), eu2), slotted("c", t0, "eu", 3)}))
		if n := count(t, st, "SELECT count(*) FROM samples"); n != 3 {
			t.Fatalf("%d rows under fresh fences, want 3", n)
		}
		// Another worker takes shard 1, now.
		took := time.Now()
		must(t, c.TakeShard(ctx, Fence{Region: "eu", Shard: 1, Epoch: 6}))
		// What the old owner polled before the takeover is its owner's,
		// written late: kept.
		must(t, st.Write(ctx, []Sample{fenced(slotted("a", t0.Add(10*time.Second), "eu", 1), eu1)}))
		if n := count(t, st, "SELECT count(*) FROM samples"); n != 4 {
			t.Fatalf("%d rows after a sample polled before the takeover, want 4", n)
		}
		// What it polled after is not.
		never := Fence{Region: "us", Shard: 9, Epoch: 1}
		slot := took.Add(time.Minute).Truncate(time.Second)
		batch := []Sample{fenced(slotted("a", slot, "eu", 1), eu1), fenced(slotted("b", slot, "eu", 2), eu2),
			fenced(slotted("b", slot, "us", 2), never), slotted("c", slot, "eu", 3)}
		err = st.Write(ctx, batch)
		var fe *FencedError
		if !errors.Is(err, ErrFenced) || !errors.As(err, &fe) {
			t.Fatalf("a write under a stale fence: %v, want a *FencedError", err)
		}
		if want := []Fence{eu1, never}; !slices.Equal(fe.Stale, want) {
			t.Errorf("stale fences %+v, want %+v", fe.Stale, want)
		}
		if since, ok := fe.Since[eu1]; !ok || since.Before(took.Add(-time.Minute)) || since.After(took.Add(time.Minute)) {
			t.Errorf("shard 1 taken over at %v (ok %v), want about %v", since, ok, took)
		}
		if _, ok := fe.Since[never]; ok {
			t.Errorf("a shard never taken has a takeover time")
		}
		for i, want := range []bool{true, false, true, false} {
			if got := fe.Refuses(&batch[i]); got != want {
				t.Errorf("Refuses(sample %d) = %v, want %v", i, got, want)
			}
		}
		if n := count(t, st, "SELECT count(*) FROM samples"); n != 4 {
			t.Errorf("%d rows after a fenced write, want the 4 of before", n)
		}
		// The caller drops the stale samples and writes the rest again.
		must(t, st.Write(ctx, []Sample{batch[1], batch[3]}))
		if n := count(t, st, "SELECT count(*) FROM samples WHERE t = ?", slot.Unix()); n != 2 {
			t.Errorf("%d rows of the slot written again without the stale samples, want 2", n)
		}
		// A slot polled a moment before the takeover, in the same second:
		// its owner's, kept (the line is drawn to the microsecond).
		polled := time.Now()
		must(t, c.TakeShard(ctx, Fence{Region: "eu", Shard: 2, Epoch: 4}))
		if err := st.Write(ctx, []Sample{fenced(slotted("b", polled, "eu", 2), eu2)}); err != nil {
			t.Errorf("a slot polled %v before the takeover was refused: %v", time.Since(polled), err)
		}
	})
}

// TestSampleKeyMigration: a database of the version before keeps every
// raw sample through the migration, a NULL vantage made empty; PostgreSQL's
// samples move into the partitions of their days.
func TestSampleKeyMigration(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		key := slices.IndexFunc(migrations, func(m migration) bool { return m.run != nil })
		before := migrations[:key]
		if before[len(before)-1].run != nil || len(before[len(before)-1].stmts) != 1 || !strings.Contains(before[len(before)-1].stmts[0], "vantage") {
			t.Fatal("the version before is not the one that added the vantage column")
		}
		st := e.open(t, withMigrations(before))
		syncNames(t, st, "a", "b")
		ids, err := column[int64](ctx, st.rdb, "SELECT id FROM servers ORDER BY name")
		must(t, err)
		var mapID int64
		must(t, st.wdb.QueryRow("INSERT INTO strings (value, seen) VALUES ('de_dust2', 0) RETURNING id").Scan(&mapID))
		var vantages = []any{nil, "eu", "us"}
		for i := range 90 {
			// Three days, down samples among them, three vantages (a
			// NULL one) on different seconds, as the old key wanted.
			at := t0.Unix() + int64(i)*day/30
			var players, mp, ping any = int64(i), mapID, int64(1000 + i)
			upv := 1
			if i%7 == 0 {
				players, mp, ping, upv = nil, nil, nil, 0
			}
			_, err := st.wdb.Exec(st.q(`INSERT INTO samples (t, server, up, players, max_players, bots, map, version, ping, vantage)
				VALUES (?, ?, ?, ?, 32, NULL, ?, NULL, ?, ?)`), at, ids[i%2], upv, players, mp, ping, vantages[i%3])
			must(t, err)
		}
		old := rawRows(t, st)
		must(t, st.Close())

		st = e.open(t)
		got := rawRows(t, st)
		if !slices.Equal(got, old) {
			t.Errorf("after migrating:\n%v\nwant\n%v", got, old)
		}
		if n := count(t, st, "SELECT count(*) FROM samples WHERE vantage = ''"); n != 30 {
			t.Errorf("%d samples of vantage '', want the 30 of NULL", n)
		}
		if e.name == "postgres" {
			want := []string{"samples_20260302", "samples_20260303", "samples_20260304"}
			if got := partitions(t, st); !slices.Equal(got, want) {
				t.Errorf("partitions %v, want %v", got, want)
			}
		} else {
			var ddl string
			must(t, st.rdb.QueryRow("SELECT sql FROM sqlite_schema WHERE name = 'samples'").Scan(&ddl))
			if !strings.Contains(ddl, "WITHOUT ROWID") || !strings.Contains(ddl, "PRIMARY KEY (t, server, vantage)") {
				t.Errorf("samples after migrating: %s", ddl)
			}
		}
		must(t, st.Check(ctx))
		// The new key holds: a second vantage of a stored second is kept.
		must(t, st.Write(ctx, []Sample{slotted("a", t0, "asia", 4)}))
		if n := count(t, st, "SELECT count(*) FROM samples WHERE t = ?", t0.Unix()); n != 2 {
			t.Errorf("%d rows at t0, want the old one and asia's", n)
		}
	})
}

// partitions lists the partitions of PostgreSQL's samples table, sorted.
func partitions(t *testing.T, s *db) []string {
	t.Helper()
	list, err := samplePartitions(context.Background(), s.rdb)
	must(t, err)
	return list
}

// TestSamplePartitions: PostgreSQL's samples are partitioned by day, a
// write creating its day's partition; Maintain creates today's and
// tomorrow's, and raw retention drops the partitions of the days wholly
// past the cut and keeps the rest, the cut's day whole.
func TestSamplePartitions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := storetest.Postgres(t)
	st0, err := Open(ctx, dsn, WithRetention(Retention{Raw: 24 * time.Hour}))
	must(t, err)
	t.Cleanup(func() { st0.Close() })
	st := st0.(*db)
	if got := partitions(t, st); len(got) != 0 {
		t.Fatalf("a new database has partitions %v", got)
	}
	syncNames(t, st, "s")
	dayAt := func(d int, h time.Duration) time.Time { return t0.Add(time.Duration(d)*24*time.Hour + h) }
	for d := range 3 {
		var batch []Sample
		for h := range 24 {
			batch = append(batch, up("s", dayAt(d, time.Duration(h)*time.Hour), h))
		}
		must(t, st.Write(ctx, batch))
	}
	want := []string{"samples_20260302", "samples_20260303", "samples_20260304"}
	if got := partitions(t, st); !slices.Equal(got, want) {
		t.Fatalf("partitions after three days of samples: %v, want %v", got, want)
	}
	// The first write of a new day creates its partition.
	must(t, st.Write(ctx, []Sample{up("s", dayAt(3, time.Hour), 1), up("s", dayAt(3, 2*time.Hour), 1)}))
	want = append(want, "samples_20260305")
	if got := partitions(t, st); !slices.Equal(got, want) {
		t.Fatalf("partitions after the first write of day 4: %v, want %v", got, want)
	}
	// Retention of a day at noon of day 4: the cut is noon of day 3,
	// whose samples wait for their day; days 1 and 2 are dropped.
	must(t, st.Maintain(ctx, dayAt(3, 12*time.Hour)))
	want = []string{"samples_20260304", "samples_20260305", "samples_20260306"}
	if got := partitions(t, st); !slices.Equal(got, want) {
		t.Errorf("partitions after retention: %v, want %v (day 4's of tomorrow made ahead)", got, want)
	}
	if n := count(t, st, "SELECT count(*) FROM samples"); n != 26 {
		t.Errorf("%d samples after retention, want day 3's 24 and day 4's 2", n)
	}
	if n := count(t, st, "SELECT min(t) FROM samples"); int64(n) != dayAt(2, 0).Unix() {
		t.Errorf("oldest sample at %v, want %v", time.Unix(int64(n), 0).UTC(), dayAt(2, 0))
	}
	// The day's history is whole: from the rollups before the cut.
	points, err := st.History(ctx, "s", t0, dayAt(2, 0), 24*time.Hour)
	must(t, err)
	if len(points) != 2 || points[0].Samples != 24 || points[1].Samples != 24 {
		t.Errorf("history of the dropped days: %+v", points)
	}
	must(t, st.Check(ctx))

	// Another worker knows day 3's partition, which retention then
	// drops: its late sample of day 3 makes the partition again.
	other, err := Open(ctx, dsn)
	must(t, err)
	t.Cleanup(func() { other.Close() })
	must(t, other.Write(ctx, []Sample{up("s", dayAt(2, 90*time.Minute), 1)}))
	must(t, st.Maintain(ctx, dayAt(4, 12*time.Hour)))
	if got := partitions(t, st); slices.Contains(got, "samples_20260304") {
		t.Fatalf("day 3's partition not dropped: %v", got)
	}
	late := dayAt(2, 150*time.Minute)
	must(t, other.Write(ctx, []Sample{up("s", late, 7)}))
	if n := count(t, st, "SELECT players FROM samples WHERE t = ?", late.Unix()); n != 7 {
		t.Errorf("the late sample of a dropped day: players %d, want 7", n)
	}
}

// FuzzPartitionName: a day's partition name reads back as the day, a
// name read as a day is that day's, and the bounds of a day a sample's
// time can fall in are a day apart (MINVALUE and MAXVALUE past what a
// BIGINT holds). The seed of a day below those is the crasher of a
// check that took every day.
func FuzzPartitionName(f *testing.F) {
	for _, d := range []int64{0, -1, firstDatedDay, lastDatedDay, lastDatedDay + 1, math.MaxInt64 / day, math.MinInt64 / day, math.MinInt64, math.MaxInt64} {
		f.Add(d, samplePartition(d))
	}
	f.Add(int64(20513), "samples_20260230")
	f.Add(int64(1), "samples_dm0")
	f.Fuzz(func(t *testing.T, d int64, name string) {
		if got, ok := partitionDay(samplePartition(d)); !ok || got != d {
			t.Fatalf("day %d: name %q reads back as %d, %v", d, samplePartition(d), got, ok)
		}
		if d >= floorDiv(math.MinInt64, day) && d <= floorDiv(math.MaxInt64, day) {
			lo, hi := dayBound(d), dayBound(d+1)
			l, errL := strconv.ParseInt(lo, 10, 64)
			h, errH := strconv.ParseInt(hi, 10, 64)
			if errL == nil && errH == nil && h-l != day || errL != nil && lo != "MINVALUE" || errH != nil && hi != "MAXVALUE" || lo == hi {
				t.Fatalf("day %d: bounds %s, %s", d, lo, hi)
			}
		}
		if got, ok := partitionDay(name); ok && samplePartition(got) != name {
			t.Fatalf("%q read as day %d, whose name is %q", name, got, samplePartition(got))
		}
	})
}

// TestCheckAmcheck: Check runs amcheck, installed in another schema
// than the store's, over the indexes of the partitioned samples (their
// partitions' indexes: a partitioned index has no pages). It needs a
// database of its own: an extension is installed per database, and the
// shared one's tests would all run it.
func TestCheckAmcheck(t *testing.T) {
	t.Parallel()
	base := storetest.Postgres(t)
	ctx := testutil.Context(t)
	name := fmt.Sprintf("gsq_amcheck_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	admin, err := pgx.Connect(ctx, os.Getenv("GSQ_TEST_POSTGRES"))
	must(t, err)
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Skipf("cannot create a database of the test's own: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Bound)
		defer cancel()
		conn, err := pgx.Connect(ctx, os.Getenv("GSQ_TEST_POSTGRES"))
		if err == nil {
			_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			conn.Close(ctx)
		}
		if err != nil {
			t.Errorf("dropping database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	must(t, err)
	u.Path = "/" + name
	ext, err := pgx.Connect(ctx, u.String())
	must(t, err)
	_, err = ext.Exec(ctx, "CREATE EXTENSION amcheck SCHEMA public")
	ext.Close(ctx)
	if err != nil {
		t.Skipf("amcheck is not available: %v", err)
	}
	st0, err := Open(ctx, u.String())
	must(t, err)
	defer st0.Close()
	st := st0.(*db)
	syncNames(t, st, "s")
	must(t, st.Write(ctx, []Sample{up("s", t0, 1), up("s", t0.Add(24*time.Hour), 2)}))
	if n := count(t, st, "SELECT count(*) FROM pg_extension WHERE extname = 'amcheck'"); n != 1 {
		t.Fatal("amcheck not installed")
	}
	must(t, st.Check(ctx))
}

// TestTwoOwnersOneSlot: two workers of a PostgreSQL store, an old and a
// new owner around a hand-over, write the same slots of the same servers
// at once, with texts new to both: every write commits, and each (slot,
// server, vantage) has one row.
func TestTwoOwnersOneSlot(t *testing.T) {
	t.Parallel()
	ctx := testutil.Context(t)
	dsn := storetest.Postgres(t)
	var workers [2]Store
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprint("s", i))
	}
	for i := range workers {
		st, err := Open(ctx, dsn)
		must(t, err)
		t.Cleanup(func() { st.Close() })
		syncNames(t, st, names...)
		workers[i] = st
	}
	const rounds = 10
	errs := make(chan error, len(workers)*rounds)
	var wg sync.WaitGroup
	for w, st := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				slot := t0.Add(time.Duration(r) * 10 * time.Second)
				var batch []Sample
				for i, n := range names {
					smp := slotted(n, slot, "eu", 10*w+i)
					smp.Map = fmt.Sprintf("map-%d-%d", i, r)
					batch = append(batch, smp)
				}
				errs <- st.Write(ctx, batch)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	s := workers[0].(*db)
	if n := count(t, s, "SELECT count(*) FROM samples"); n != rounds*len(names) {
		t.Errorf("%d rows, want %d: one per slot and server", n, rounds*len(names))
	}
	if n := count(t, s, "SELECT count(*) FROM (SELECT t, server, vantage FROM samples GROUP BY 1, 2, 3 HAVING count(*) > 1) d"); n != 0 {
		t.Errorf("%d keys with more than one row", n)
	}
}
