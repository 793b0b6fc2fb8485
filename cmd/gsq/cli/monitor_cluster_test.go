package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/store/storetest"
)

// TestMonitorClusterUsage: the fleet's flags are checked before anything
// starts, each with a usage error that says why.
func TestMonitorClusterUsage(t *testing.T) {
	t.Parallel()
	sqlite := filepath.Join(t.TempDir(), "m.db")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--role", "judge"}, "--role: all, worker or api"},
		{[]string{"--region", "eu"}, "--region needs --nats"},
		{[]string{"--role", "worker", "--db", "postgres://127.0.0.1:1/x"}, "--role worker needs --nats"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--db", sqlite}, "shares a PostgreSQL history"},
		{[]string{"--role", "api", "--db", sqlite}, "shares a PostgreSQL history"},
		{[]string{"--nats", "nats://127.0.0.1:1", "--region", "e u", "--db", "postgres://127.0.0.1:1/x"}, "--region: region \"e u\""},
	} {
		args := append([]string{"monitor", "--target", "127.0.0.1:27015", "--listen", "127.0.0.1:0"}, c.args...)
		code, stdout, stderr := runGSQ(t, nil, nil, nil, args...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error with %q", c.args, code, stdout, stderr, c.want)
		}
	}
	for _, args := range [][]string{
		{"monitor", "targets", "ls", "--db", sqlite},
		{"monitor", "targets", "add", "a", "127.0.0.1:27015", "--vantages", "e u", "--db", "postgres://127.0.0.1:1/x"},
		{"monitor", "targets", "add", "a", "127.0.0.1:27015", "--vantages", "eu", "--quorum", "2", "--db", "postgres://127.0.0.1:1/x"},
		{"monitor", "targets", "add", "a"},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, args...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "gsq: error: ") {
			t.Errorf("%q: exit %d, stderr %q; want a usage error", args, code, stderr)
		}
	}
}

// TestMonitorTargets: the fleet's target list in the real PostgreSQL,
// added to, listed and removed from.
func TestMonitorTargets(t *testing.T) {
	t.Parallel()
	db := storetest.Postgres(t)
	run := func(want int, args ...string) string {
		t.Helper()
		code, stdout, stderr := runGSQ(t, nil, nil, nil, append(append([]string{"monitor", "targets"}, args...), "--db", db)...)
		if code != want {
			t.Fatalf("%q: exit %d, want %d; stderr %q", args, code, want, stderr)
		}
		return stdout
	}
	run(0, "add", "eu1", "127.0.0.1:27015", "--vantages", "eu,us", "--quorum", "2")
	run(0, "add", "us1", "127.0.0.1:27016", "--protocol", "ogp")
	out := run(0, "ls")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "eu1") || !strings.Contains(lines[1], "eu,us") || !strings.HasSuffix(lines[1], "2") ||
		!strings.Contains(lines[2], "ogp") || !strings.HasSuffix(lines[2], "majority") {
		t.Errorf("ls:\n%s", out)
	}
	run(0, "rm", "eu1")
	run(ExitFailure, "rm", "eu1")
	if out := run(0, "ls"); strings.Contains(out, "eu1") || !strings.Contains(out, "us1") {
		t.Errorf("ls after rm:\n%s", out)
	}
}
