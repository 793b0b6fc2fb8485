package store

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

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
