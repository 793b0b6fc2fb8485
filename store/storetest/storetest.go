package storetest

import (
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// Postgres is PostgresDSN for a test that cannot run without
// PostgreSQL: without GSQ_TEST_POSTGRES it skips the test, or fails it in
// CI, where .ci/services starts one.
func Postgres(t testing.TB) string {
	t.Helper()
	testutil.Service(t, "GSQ_TEST_POSTGRES", "a PostgreSQL database")
	return PostgresDSN(t)
}
