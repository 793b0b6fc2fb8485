package web

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/gsq-project/gsq/store"
)

// newTestStore opens a SQLite history in a temporary directory: the
// handler's tests read the real store the monitor writes.
func newTestStore(tb testing.TB) store.Store {
	tb.Helper()
	st, err := store.Open(context.Background(), filepath.Join(tb.TempDir(), "monitor.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}
