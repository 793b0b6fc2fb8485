package web

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// benchServers is the fleet of the activity benchmarks.
const benchServers = 10000

// BenchmarkActivityAPI10k times the API calls of the server page's
// "when people play" cards and the list's sparklines, through the
// handler, over 10,000 servers with a year of history, on SQLite and,
// when GSQ_TEST_POSTGRES names a database, PostgreSQL:
//
//	go test -run '^$' -bench ActivityAPI10k -benchtime 20x ./web/
//
// The history is what the monitor's rollups would hold, written straight
// in SQL (simulating a year of 10,000 servers' polls would take days):
// every server has a year of days, 30 days of hours, the minutes of the
// hour under way and the raw polls of the last minutes; the ten servers
// the calls ask about also have a year of hours, 14 days of minutes and
// a map change every 20 minutes for 30 days. "rank-cold" reads every
// server's days (Handler.WarmRanks does it at start and once a day, off
// the requests' path; a request waits for it only when it comes before
// the first read ends); "rank" is every other request.
func BenchmarkActivityAPI10k(b *testing.B) {
	engines := []string{"sqlite"}
	if os.Getenv("GSQ_TEST_POSTGRES") != "" {
		engines = append(engines, "postgres")
	}
	names50 := make([]string, 50)
	for i := range names50 {
		names50[i] = "server=" + benchName(i*97)
	}
	names200 := make([]string, 200)
	for i := range names200 {
		names200[i] = "server=" + benchName(i*41)
	}
	cases := []struct{ name, path string }{
		{"heatmap-28d", "/api/v1/servers/" + benchName(1) + "/heatmap"},
		{"heatmap-91d", "/api/v1/servers/" + benchName(2) + "/heatmap?days=91"},
		{"map-stats-7d", "/api/v1/servers/" + benchName(3) + "/map-stats"},
		{"map-stats-30d", "/api/v1/servers/" + benchName(4) + "/map-stats?from=-30d"},
		{"rank-cold", "/api/v1/servers/" + benchName(5) + "/rank"},
		{"rank", "/api/v1/servers/" + benchName(6) + "/rank"},
		{"sparklines-50", "/api/v1/sparklines?" + strings.Join(names50, "&")},
		{"sparklines-200", "/api/v1/sparklines?" + strings.Join(names200, "&")},
		{"history-24h", "/api/v1/servers/" + benchName(7) + "/history?from=-24h"},
	}
	for _, engine := range engines {
		b.Run(engine, func(b *testing.B) {
			h := activityBenchHandler(b, engine)
			for _, c := range cases {
				b.Run(c.name, func(b *testing.B) {
					req := httptest.NewRequest(http.MethodGet, c.path, nil)
					serve := func() int {
						if c.name == "rank-cold" {
							h.ranks.mu.Lock()
							h.ranks.avgs = nil
							h.ranks.mu.Unlock()
						}
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, req)
						if rec.Code != http.StatusOK {
							b.Fatalf("%s: %d %s", c.path, rec.Code, rec.Body)
						}
						return rec.Body.Len()
					}
					b.ReportMetric(float64(serve()), "bytes/response")
					b.ReportAllocs()
					b.ResetTimer()
					for b.Loop() {
						serve()
					}
				})
			}
		})
	}
}

func benchName(i int) string { return fmt.Sprintf("server-%05d", i%benchServers) }

// activityBenchHandler opens a store of the engine with the benchmark's
// history and returns a handler over it and a live fleet of four games.
func activityBenchHandler(b *testing.B, engine string) *Handler {
	ctx := context.Background()
	var dsn string
	if engine == "postgres" {
		dsn = benchPostgresSchema(b)
	} else {
		dsn = filepath.Join(b.TempDir(), "monitor.db")
	}
	st, err := store.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	servers := make([]store.Server, benchServers)
	states := make([]monitor.ServerState, benchServers)
	for i := range servers {
		servers[i] = store.Server{Name: benchName(i), Target: "127.0.0.1:27015", Protocol: "a2s"}
		states[i] = upState(benchName(i), i%33, 64, "de_dust2")
		states[i].Summary.Game = ptr([]string{"Counter-Strike 2", "Rust", "Team Fortress", "Garry's Mod"}[i%4])
	}
	if err := st.SyncServers(ctx, servers); err != nil {
		b.Fatal(err)
	}
	began := time.Now()
	seedYear(b, engine, dsn, time.Now())
	b.Logf("%s: seeded in %v", engine, time.Since(began).Round(time.Second))
	live := newTestLive()
	live.states = states
	// rank-cold reads every server's days: more than the 10 s a request has
	// when the machine is busy.
	return New(st, live, Options{TimeZone: time.UTC, RequestTimeout: 5 * time.Minute})
}

// seedYear writes the history the benchmark reads, as of now.
func seedYear(b *testing.B, engine, dsn string, now time.Time) {
	driver := "sqlite"
	if engine == "postgres" {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if engine == "sqlite" {
		// One connection, with a cache that holds the tables' pages while
		// they grow.
		db.SetMaxOpenConns(1)
		if _, err := db.Exec("PRAGMA cache_size = -400000"); err != nil {
			b.Fatal(err)
		}
	}
	D := now.UTC().Truncate(24 * time.Hour).Unix()
	H := now.Truncate(time.Hour).Unix()
	M := now.Truncate(10 * time.Minute).Unix()
	n := now.Unix()
	few := "s.id <= 10" // the servers asked about: server-00000 to 00009 have ids 1 to 10
	// An hour's players follow the day, a server's its id.
	players := "((id * 37) % 30 + ((t / 3600) % 24) / 2)"
	rollup := func(table string, polls int, cond, t0 string, count int, step int) string {
		return fmt.Sprintf(`WITH RECURSIVE k(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM k WHERE x < %d),
			rows AS (SELECT s.id AS id, %s + k.x * %d AS t FROM servers s, k WHERE %s)
			INSERT INTO %s (server, t, polls, down, nocount, min_players, max_players, sum_players, capacity)
			SELECT id, t, %d, CASE WHEN (id * 7 + t / %d) %% 97 = 0 THEN %d ELSE 0 END, 0, 0, 64,
				%s * (%d - CASE WHEN (id * 7 + t / %d) %% 97 = 0 THEN %d ELSE 0 END), 64
			FROM rows ORDER BY 1, 2`,
			count-1, t0, step, cond, table, polls, step, polls/2, players, polls, step, polls/2)
	}
	stmts := []string{
		// A year of days, every server.
		rollup("rollup_day", 2880, "1 = 1", fmt.Sprint(D-365*86400), 365, 86400),
		// 30 days of hours, every server; a year for the few.
		rollup("rollup_hour", 120, "1 = 1", fmt.Sprint(H-30*24*3600), 30*24, 3600),
		rollup("rollup_hour", 120, few, fmt.Sprint(H-365*24*3600), 335*24, 3600),
		// The minutes of the hour under way, every server; 14 days for the few.
		rollup("rollup_minute", 2, few, fmt.Sprint(H-14*24*3600), 14*24*60, 60),
		// The polls of the last minutes, every 30 s.
		fmt.Sprintf(`WITH RECURSIVE k(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM k WHERE x < %d)
			INSERT INTO samples (t, server, up, players, max_players, bots, map, version, ping)
			SELECT %d + k.x * 30 + s.id %% 30, s.id, 1, s.id %% 33, 64, 0, NULL, NULL, 20000 FROM servers s, k
			WHERE %d + k.x * 30 + s.id %% 30 < %d ORDER BY 1, 2`, (n-M)/30+1, M, M, n),
		`INSERT INTO strings (value, seen) VALUES ('de_dust2', 0), ('de_mirage', 0), ('de_inferno', 0), ('de_nuke', 0)`,
		fmt.Sprintf(`WITH RECURSIVE k(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM k WHERE x < %d)
			INSERT INTO maps (server, t, map)
			SELECT s.id, %d + k.x * 1200, (SELECT min(id) FROM strings) + (k.x + s.id) %% 4 FROM servers s, k WHERE %s`,
			30*72, H-30*86400, few),
	}
	if M > H {
		stmts = append(stmts, rollup("rollup_minute", 2, "1 = 1", fmt.Sprint(H), int(M-H)/60, 60))
	}
	for k, v := range map[string]int64{"rolled_minute": M, "rolled_hour": H, "rolled_day": D} {
		stmts = append(stmts, fmt.Sprintf(`INSERT INTO meta (key, value) VALUES ('%s', '%d')
			ON CONFLICT (key) DO UPDATE SET value = excluded.value`, k, v))
	}
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("seeding: %v\n%s", err, q)
		}
	}
	if engine == "postgres" {
		if _, err := db.Exec("ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchPostgresSchema returns GSQ_TEST_POSTGRES with a fresh schema,
// dropped when the benchmark ends.
func benchPostgresSchema(b *testing.B) string {
	base := os.Getenv("GSQ_TEST_POSTGRES")
	schema := fmt.Sprintf("gsq_bench_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9)
	db, err := sql.Open("pgx", base)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
