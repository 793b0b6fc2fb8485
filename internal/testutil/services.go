package testutil

import (
	"os"
	"testing"
)

// Services are the real NATS and PostgreSQL that .ci/services starts and
// names in GSQ_TEST_NATS and GSQ_TEST_POSTGRES (package store/storetest
// has the PostgreSQL helpers). A test that needs one
// skips without it, except in CI (CI=true), where it fails: there the
// service must run.

// NATS returns the URL of the test NATS server (with JetStream), or
// skips the test.
func NATS(t testing.TB) string {
	t.Helper()
	return Service(t, "GSQ_TEST_NATS", "a NATS server with JetStream")
}

// Service returns the value of env, which names a service the test
// needs (what), or skips the test.
func Service(t testing.TB, env, what string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set in CI: .ci/services starts %s", env, what)
		}
		t.Skipf("%s names no %s (.ci/services starts one)", env, what)
	}
	return v
}
