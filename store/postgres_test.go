package store

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store/storetest"
	"github.com/jackc/pgx/v5"
)

func TestPostgresName(t *testing.T) {
	t.Parallel()
	got := postgresName("postgres://gsq:secret@db.example:5432/monitor?sslmode=require&password=other", "gsq")
	if strings.Contains(got, "secret") || strings.Contains(got, "other") || got != "postgres://gsq@db.example:5432/monitor (schema gsq)" {
		t.Errorf("postgresName = %q", got)
	}
}

func TestPostgresForeignSchema(t *testing.T) {
	t.Parallel()
	base := os.Getenv("GSQ_TEST_POSTGRES")
	if base == "" {
		t.Skip("GSQ_TEST_POSTGRES names no PostgreSQL database")
	}
	ctx := context.Background()
	dsn := postgresTestDSN(t, base)
	conn, err := pgx.Connect(ctx, dsn)
	must(t, err)
	defer conn.Close(ctx)
	schema := conn.Config().RuntimeParams["search_path"]
	for _, stmt := range []string{
		"CREATE SCHEMA " + pgx.Identifier{schema}.Sanitize(),
		"CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)",
		"CREATE TABLE servers (id INTEGER PRIMARY KEY)",
	} {
		_, err := conn.Exec(ctx, stmt)
		must(t, err)
	}
	_, err = Open(ctx, dsn)
	if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), "servers, users") || strings.Contains(err.Error(), "sslmode") {
		t.Errorf("Open of a schema holding other tables: %v, want ErrForeign listing them", err)
	}
	var n int
	must(t, conn.QueryRow(ctx, "SELECT count(*) FROM information_schema.tables WHERE table_schema = $1", schema).Scan(&n))
	if n != 2 {
		t.Errorf("the foreign schema has %d tables after Open, want its 2", n)
	}
}

func TestDescribe(t *testing.T) {
	for dsn, want := range map[string]string{
		"/var/lib/gsq/monitor.db": "/var/lib/gsq/monitor.db",
		"postgres://gsq:s3cret@db.example:5432/gsq?sslmode=disable&search_path=mon": "postgres://gsq@db.example:5432/gsq",
		"postgresql://db.example/gsq": "postgresql://db.example/gsq",
	} {
		if got := Describe(dsn); got != want || strings.Contains(got, "s3cret") {
			t.Errorf("Describe(%q) = %q, want %q", dsn, got, want)
		}
	}
}

// TestWriteRetriesADeadlock: another writer of a shared database holds
// a server's row and then asks for one the round holds; PostgreSQL ends
// the round as the deadlock's victim, and Write plans it again and
// writes it, without an error to its caller.
func TestWriteRetriesADeadlock(t *testing.T) {
	t.Parallel()
	ctx := testutil.Context(t)
	st0, err := Open(ctx, storetest.Postgres(t))
	must(t, err)
	t.Cleanup(func() { st0.Close() })
	st := st0.(*db)
	syncNames(t, st, "a", "b")
	id := func(name string) (n int64) {
		must(t, st.rdb.QueryRowContext(ctx, "SELECT id FROM servers WHERE name = $1", name).Scan(&n))
		return n
	}
	ida, idb := id("a"), id("b")
	deadlocks := func() (n int64) {
		must(t, st.rdb.QueryRowContext(ctx, "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()").Scan(&n))
		return n
	}
	before := deadlocks()

	other, err := st.wdb.Conn(ctx)
	must(t, err)
	defer other.Close()
	tx, err := other.BeginTx(ctx, nil)
	must(t, err)
	defer tx.Rollback()
	// The other writer waits longer before it looks for a deadlock: the
	// round, waiting since before it, is the one PostgreSQL ends.
	_, err = tx.ExecContext(ctx, "SET LOCAL deadlock_timeout = '30s'")
	must(t, err)
	_, err = tx.ExecContext(ctx, "UPDATE servers SET labels = labels WHERE id = $1", idb)
	must(t, err)

	done := make(chan error, 1)
	go func() { done <- st.Write(ctx, []Sample{up("a", t0, 5), up("b", t0, 7)}) }()
	// The round updates the servers' rows in id order: it holds a's and
	// waits for b's.
	for deadline := time.Now().Add(testutil.Bound); ; time.Sleep(20 * time.Millisecond) {
		if count(t, st, "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'UPDATE servers SET %' AND pid <> pg_backend_pid()") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the round did not wait for b's row within %v", testutil.Bound)
		}
	}
	_, err = tx.ExecContext(ctx, "UPDATE servers SET labels = labels WHERE id = $1", ida)
	must(t, err)
	must(t, tx.Commit())

	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Write after a deadlock: %v", err)
		}
	case <-time.After(testutil.Bound):
		t.Fatalf("Write did not return within %v", testutil.Bound)
	}
	if n := count(t, st, "SELECT count(*) FROM samples"); n != 2 {
		t.Errorf("%d samples written, want 2", n)
	}
	if got := deadlocks() - before; got < 1 {
		t.Errorf("PostgreSQL counted %d deadlocks: the test made none, and proves nothing", got)
	}
}
