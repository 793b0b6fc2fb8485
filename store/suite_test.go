package store

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/store/storetest"
)

// The same tests run against every engine: SQLite always, PostgreSQL when
// GSQ_TEST_POSTGRES names a database, for example
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable. Each
// PostgreSQL test works in a schema of its own, dropped at its end.

// engine is a database a test opens, and opens again.
type engine struct {
	name string
	dsn  string
}

// eachEngine runs fn once per engine, in parallel subtests.
func eachEngine(t *testing.T, fn func(t *testing.T, e engine)) {
	t.Helper()
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, engine{name: "sqlite", dsn: filepath.Join(t.TempDir(), "monitor.db")})
	})
	if dsn := os.Getenv("GSQ_TEST_POSTGRES"); dsn != "" {
		t.Run("postgres", func(t *testing.T) {
			t.Parallel()
			fn(t, engine{name: "postgres", dsn: postgresTestDSN(t, dsn)})
		})
	}
}

// postgresTestDSN returns GSQ_TEST_POSTGRES with a search_path naming a
// fresh schema, dropped when the test ends.
func postgresTestDSN(t testing.TB, _ string) string {
	t.Helper()
	return storetest.PostgresDSN(t)
}

// open opens the engine's database; it is closed when the test ends.
func (e engine) open(t *testing.T, opts ...Option) *db {
	t.Helper()
	st, err := Open(context.Background(), e.dsn, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st.(*db)
}

// simClock is a settable clock for WithClock.
type simClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock(t time.Time) *simClock { return &simClock{t: t} }

func (c *simClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *simClock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// t0 is a Monday, 00:00 UTC: the simulations' start.
var t0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// servers syncs servers with these names.
func syncNames(t *testing.T, st Store, names ...string) {
	t.Helper()
	var list []Server
	for _, n := range names {
		list = append(list, Server{Name: n, Target: "127.0.0.1:27015", Protocol: "a2s"})
	}
	must(t, st.SyncServers(context.Background(), list))
}

// up is an up sample.
func up(server string, at time.Time, players int) Sample {
	return Sample{Server: server, Time: at, Up: true, Players: players, MaxPlayers: 32, Bots: 0,
		Map: "de_dust2", Version: "1.0", Name: server + " server", Ping: 20 * time.Millisecond}
}

func down(server string, at time.Time) Sample {
	return Sample{Server: server, Time: at}
}

// count returns a count query's answer, run on the store's database.
func count(t *testing.T, s *db, query string, args ...any) int {
	t.Helper()
	var n int
	must(t, s.rdb.QueryRowContext(context.Background(), s.q(query), args...).Scan(&n))
	return n
}
