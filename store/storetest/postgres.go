// Package storetest helps the tests of packages that use a store: a
// PostgreSQL database of their own, when the environment names one.
package storetest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gsq-project/gsq/internal/testutil"
)

var schemaSeq atomic.Int64

// PostgresDSN returns the PostgreSQL database GSQ_TEST_POSTGRES names
// (for example postgres://postgres@127.0.0.1:5432/test?sslmode=disable)
// with a search_path naming a fresh schema, dropped when the test ends;
// "" when the variable is not set.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("GSQ_TEST_POSTGRES")
	if dsn == "" {
		return ""
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("GSQ_TEST_POSTGRES: %v", err)
	}
	schema := fmt.Sprintf("gsq_test_%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e9, schemaSeq.Add(1))
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Bound)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return u.String()
}
