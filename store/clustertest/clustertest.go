// Package clustertest opens, for tests, the PostgreSQL store a fleet of
// monitor workers shares (issue 23), and its shared state.
package clustertest

import (
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/storetest"
)

// Open opens the store at dsn (a fresh schema of the test PostgreSQL
// when dsn is ""), closed when the test ends, and returns it with its
// shared state; it skips the test without a PostgreSQL to test on.
func Open(t testing.TB, dsn string) (store.Store, *store.Cluster) {
	t.Helper()
	if dsn == "" {
		dsn = storetest.Postgres(t)
	}
	st, err := store.Open(testutil.Context(t), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	shared, err := store.ClusterOf(st)
	if err != nil {
		t.Fatal(err)
	}
	return st, shared
}
