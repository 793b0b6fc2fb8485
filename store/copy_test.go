package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gsq-project/gsq/store/storetest"
)

// TestCopyTablesAreTheSchema: every table of a SQLite store is copied:
// a table added to the schema and not to copyTables fails here.
func TestCopyTablesAreTheSchema(t *testing.T) {
	t.Parallel()
	st := engine{dsn: filepath.Join(t.TempDir(), "monitor.db")}.open(t)
	var tables []string
	must(t, eachRow(context.Background(), st.rdb, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name", nil, func(r *sql.Rows) error {
		var name string
		if err := r.Scan(&name); err != nil {
			return err
		}
		tables = append(tables, name)
		return nil
	}))
	want := append(slices.Clone(copyTables), "meta")
	slices.Sort(want)
	if !slices.Equal(tables, want) {
		t.Errorf("the SQLite schema's tables are %v; Copy copies %v", tables, want)
	}
}

// copyFixture fills a SQLite store through the store's API: 50 hours of
// polls of three servers with outages, Maintain every 10 minutes (so
// rollups exist at every level and retention deleted the oldest raw
// samples), then a server with sessions, map changes, an open and an
// ended incident, a maintenance window and the alert journal.
func copyFixture(t *testing.T, clock *simClock) *db {
	t.Helper()
	ctx := context.Background()
	src := engine{dsn: filepath.Join(t.TempDir(), "monitor.db")}.open(t, WithClock(clock.now))
	names := []string{"alpha", "beta", "gamma"}
	syncNames(t, src, append(names, "d")...)
	end := t0.Add(50 * time.Hour)
	simulate(t, src, clock, names, t0, end, time.Minute, 7)

	m := int(end.Sub(t0) / time.Minute)
	at := func(i int) time.Time { return min_(m + i) }
	withMap := func(smp Sample, name string) Sample { smp.Map = name; return smp }
	must(t, src.Write(ctx, []Sample{changes(withPlayers("d", at(0), "alice:1", "bob:2"), "+alice", "+bob")}))
	must(t, src.Write(ctx, []Sample{withMap(changes(withPlayers("d", at(1), "alice:5"), "-bob"), "de_nuke")}))
	must(t, src.Write(ctx, []Sample{outage(down("d", at(2)), at(2), "timeout")}))
	must(t, src.Write(ctx, []Sample{recovered(changes(withPlayers("d", at(3), "alice:6", "carol:1"), "+carol"))}))
	must(t, src.Write(ctx, []Sample{withMap(withPlayers("d", at(4), "alice:7", "carol:2"), "de_inferno")}))
	must(t, src.Write(ctx, []Sample{outage(down("alpha", at(4)), at(4), "unreachable")}))
	_, err := src.AddWindow(ctx, `{"server":"beta","every":"day"}`)
	must(t, err)
	_, err = src.SaveAlerts(ctx, map[string][]byte{"alpha": []byte(`{"down":true}`)},
		[]OutboxAlert{{Webhook: "ops", Time: at(4), Alert: []byte(`{"kind":"down"}`)}}, nil)
	must(t, err)
	clock.set(at(5))
	must(t, src.Maintain(ctx, at(5)))
	return src
}

// readAll reads a store through its public API: what the page, the API
// and an export show.
func readAll(t *testing.T, st Store, clock *simClock) map[string]any {
	t.Helper()
	ctx := context.Background()
	now := clock.now()
	got := map[string]any{}
	add := func(what string, v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got[what] = v
	}
	servers, err := st.Servers(ctx)
	add("servers", servers, err)
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	for _, name := range names {
		for _, step := range []time.Duration{time.Minute, 5 * time.Minute, time.Hour, 24 * time.Hour} {
			from := now.Add(-time.Duration(min(600, 2000*int(step/time.Minute))) * time.Minute)
			h, err := st.History(ctx, name, from, now, step)
			add(fmt.Sprintf("history %s %v", name, step), h, err)
		}
		frac, polls, err := st.Uptime(ctx, name, t0, now)
		add("uptime "+name, fmt.Sprint(frac, polls), err)
		rec, err := st.Records(ctx, name)
		add("records "+name, rec, err)
		maps, err := st.Maps(ctx, name, t0, now)
		add("maps "+name, maps, err)
		regs, err := st.Regulars(ctx, name, t0, now, 10)
		add("regulars "+name, regs, err)
	}
	many, err := st.HistoryMany(ctx, names, now.Add(-3*time.Hour), now, 10*time.Minute)
	add("history many", many, err)
	all, err := st.UptimeAll(ctx, t0, now)
	add("uptime all", all, err)
	days, through, err := st.DayAverages(ctx, t0, now)
	add("day averages", fmt.Sprint(days, through), err)
	sessions, err := st.Sessions(ctx, SessionQuery{})
	add("sessions", sessions, err)
	present, err := st.Present(ctx)
	add("present", present, err)
	player, err := st.Player(ctx, "alice", nil, t0)
	add("player", player, err)
	matches, err := st.SearchPlayers(ctx, "o", nil, 10)
	add("search", matches, err)
	incidents, err := st.Incidents(ctx, IncidentQuery{From: t0})
	add("incidents", incidents, err)
	windows, err := st.Windows(ctx)
	add("windows", windows, err)
	alerts, err := st.LoadAlerts(ctx)
	add("alerts", alerts, err)
	var samples []Sample
	add("samples", &samples, st.EachSample(ctx, Span{}, func(s Sample) error { samples = append(samples, s); return nil }))
	var hours []string
	add("hours", &hours, st.EachPoint(ctx, LevelHour, Span{}, func(server string, p Point) error {
		hours = append(hours, fmt.Sprint(server, p))
		return nil
	}))
	return got
}

func TestCopy(t *testing.T) {
	t.Parallel()
	clock := newClock(t0)
	src := copyFixture(t, clock)
	ctx := context.Background()
	want := readAll(t, src, clock)
	if n := len(*want["samples"].(*[]Sample)); n <= 1000 {
		t.Fatalf("%d raw samples: the fixture should need more than one chunk", n)
	}
	if len(want["incidents"].([]Incident)) < 2 || len(want["sessions"].([]Session)) != 3 {
		t.Fatalf("fixture: incidents %+v, sessions %+v", want["incidents"], want["sessions"])
	}

	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			e := engine{name: name, dsn: filepath.Join(t.TempDir(), "copy.db")}
			if name == "postgres" {
				e.dsn = storetest.Postgres(t)
			}
			dst := e.open(t, WithClock(clock.now))
			// A copy interrupted half-way (Ctrl-C) leaves the target
			// as it was, and a copy again goes through.
			cctx, cancel := context.WithCancel(ctx)
			_, err := Copy(cctx, dst, src, func(p CopyProgress) {
				if p.Table == "samples" && p.Rows >= 2000 {
					cancel()
				}
			})
			cancel()
			if err == nil {
				t.Fatal("a copy cancelled half-way went through")
			}
			t.Logf("cancelled: %v", err)
			for _, table := range []string{"servers", "samples", "strings"} {
				if n := count(t, dst, "SELECT count(*) FROM "+table); n != 0 {
					t.Errorf("the cancelled copy left %d rows in %s", n, table)
				}
			}
			var chunks []CopyProgress
			report, err := Copy(ctx, dst, src, func(p CopyProgress) { chunks = append(chunks, p) })
			must(t, err)
			t.Logf("copied in %v: %+v", report.Elapsed, report.Tables)
			rows := map[string]int64{}
			for _, c := range report.Tables {
				rows[c.Table] = c.Rows
			}
			for _, table := range append(slices.Clone(copyTables), "meta") {
				if _, ok := rows[table]; !ok {
					t.Errorf("the report has no table %s", table)
				}
			}
			for _, table := range copyTables {
				if n := int64(count(t, src, "SELECT count(*) FROM "+table)); n != rows[table] || n != int64(count(t, dst, "SELECT count(*) FROM "+table)) {
					t.Errorf("%s: %d rows in the source, %d copied", table, n, rows[table])
				}
			}
			var sampleChunks int
			for _, p := range chunks {
				if p.Table == "samples" && !p.Done {
					sampleChunks++
				}
			}
			if sampleChunks < 2 || rows["meta"] == 0 {
				t.Errorf("%d chunks of samples, %d meta keys", sampleChunks, rows["meta"])
			}
			must(t, dst.Check(ctx))
			got := readAll(t, dst, clock)
			for what, w := range want {
				if !reflect.DeepEqual(got[what], w) {
					t.Errorf("%s differs after the copy:\n got %+v\nwant %+v", what, got[what], w)
				}
			}

			// The copy is a store like any other: new rows get new ids,
			// and the writer carries on the copied open sessions.
			next := clock.now().Add(time.Minute)
			must(t, dst.Write(ctx, []Sample{changes(withPlayers("d", next, "carol:3", "dave:1"), "-alice", "+dave")}))
			id, err := dst.AddWindow(ctx, `{"server":"gamma"}`)
			must(t, err)
			if ws := want["windows"].([]StoredWindow); id <= ws[len(ws)-1].ID {
				t.Errorf("a new window got id %d, the copied one has %d", id, ws[len(ws)-1].ID)
			}
			ids, err := dst.SaveAlerts(ctx, nil, []OutboxAlert{{Webhook: "ops", Time: next, Alert: []byte(`{}`)}}, nil)
			must(t, err)
			if out := want["alerts"].(AlertLog).Outbox; ids[0] <= out[len(out)-1].ID {
				t.Errorf("a new alert got id %d, the copied one has %d", ids[0], out[len(out)-1].ID)
			}
			present, err := dst.Present(ctx)
			must(t, err)
			if p := present["d"].Players; !slices.Equal(p, []string{"carol", "dave"}) {
				t.Errorf("online on d after a write to the copy: %v", p)
			}
			must(t, dst.Check(ctx))

			// A second copy into the same target is refused, and changes
			// nothing.
			samples := count(t, dst, "SELECT count(*) FROM samples")
			if _, err := Copy(ctx, dst, src, nil); !errors.Is(err, ErrNotEmpty) {
				t.Errorf("a second copy: %v, want ErrNotEmpty", err)
			}
			if n := count(t, dst, "SELECT count(*) FROM samples"); n != samples {
				t.Errorf("the refused copy changed the samples: %d, then %d", samples, n)
			}
		})
	}
}

// TestCopyRefusesATargetWithServers: a target that knows a server, and
// no samples yet, is refused whole; so is a copy of a store onto itself.
func TestCopyRefusesATargetWithServers(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(t0)
		src := engine{dsn: filepath.Join(t.TempDir(), "src.db")}.open(t, WithClock(clock.now))
		syncNames(t, src, "a")
		must(t, src.Write(ctx, []Sample{up("a", t0, 3)}))

		dst := e.open(t)
		syncNames(t, dst, "other")
		_, err := Copy(ctx, dst, src, nil)
		if !errors.Is(err, ErrNotEmpty) {
			t.Fatalf("copy into a store with a server: %v, want ErrNotEmpty", err)
		}
		t.Log(err)
		if n := count(t, dst, "SELECT count(*) FROM samples"); n != 0 {
			t.Errorf("the refused copy wrote %d samples", n)
		}
		if _, err := Copy(ctx, src, src, nil); err == nil {
			t.Error("a store copied onto itself")
		}
	})
}

// BenchmarkCopy copies a SQLite store of 1,000 servers and 200 poll
// rounds (200,000 raw samples) into a new database of each engine, and
// reports the rows copied a second.
func BenchmarkCopy(b *testing.B) {
	ctx := context.Background()
	src, names := benchStore(b, engine{dsn: filepath.Join(b.TempDir(), "src.db")}, 1000)
	for i := range 200 {
		if err := src.Write(ctx, benchRound(names, i, 0)); err != nil {
			b.Fatal(err)
		}
	}
	for _, name := range benchEngines() {
		b.Run(name, func(b *testing.B) {
			var rows int64
			for b.Loop() {
				b.StopTimer()
				dst, err := Open(ctx, newDatabase(b, name).dsn)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				report, err := Copy(ctx, dst, src, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				dst.Close()
				b.StartTimer()
				for _, t := range report.Tables {
					rows += t.Rows
				}
			}
			b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
