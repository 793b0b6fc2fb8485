package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store/storetest"
)

// runGSQ runs gsq args to its end and returns its exit code, stdout and
// stderr.
func runGSQ(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := gsqCommand(t, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(testutil.Bound):
		cmd.Process.Kill()
		t.Fatalf("gsq %s did not end within %v", strings.Join(args, " "), testutil.Bound)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return ee.ExitCode(), stdout.String(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stdout.String(), stderr.String()
}

var samplesRow = regexp.MustCompile(`(?m)^samples +(\d+)$`)

// TestMonitorMigrate: a gsq monitor writes a SQLite history and stops;
// gsq monitor migrate moves it into PostgreSQL; both histories export
// the same samples and minutes, an API node on PostgreSQL serves the
// polls the SQLite monitor stored, and a second migrate is refused.
func TestMonitorMigrate(t *testing.T) {
	t.Parallel()
	dsn := storetest.Postgres(t)
	fleet, err := sim.StartFleetAnywhere(sim.FleetConfig{N: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	dir := t.TempDir()
	var lines []string
	for i := range 4 {
		lines = append(lines, fleet.Addr(i).String())
	}
	list := testutil.WriteFile(t, filepath.Join(dir, "list.txt"), strings.Join(lines, "\n")+"\n")
	db := filepath.Join(dir, "m.db")

	p := startMonitor(t, "-f", list, "--interval", "1s", "--db", db)
	var name string
	for n := range serverNames(t, p.url) {
		name = n
	}
	awaitCond(t, time.Minute, "three polls of "+name+" stored", func() bool { return storedPolls(t, p.url, name) >= 3 })
	if code := p.stop(t, syscall.SIGINT); code != 130 {
		t.Fatalf("exit code %d after SIGINT:\n%s", code, p.stderr())
	}

	// Usage: --db must be PostgreSQL; a source that is not gsq's is
	// refused.
	if code, _, stderr := runGSQ(t, "monitor", "migrate", "--from", db, "--db", filepath.Join(dir, "other.db")); code != 2 || !strings.Contains(stderr, "postgres://") {
		t.Errorf("--db a file: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr := runGSQ(t, "monitor", "migrate", "--from", list, "--db", dsn); code != 1 || !strings.Contains(stderr, "not a gsq monitor database") {
		t.Errorf("--from a text file: exit %d, stderr %q", code, stderr)
	}

	code, stdout, stderr := runGSQ(t, "monitor", "migrate", "--from", db, "--db", dsn)
	t.Logf("migrate: stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if code != 0 || !strings.Contains(stderr, "monitor migrate: samples: ") {
		t.Fatalf("migrate: exit %d", code)
	}
	m := samplesRow.FindStringSubmatch(stdout)
	if m == nil {
		t.Fatal("no samples row in the summary")
	}
	copied, _ := strconv.Atoi(m[1])

	export := func(dsn, level string) string {
		t.Helper()
		code, out, stderr := runGSQ(t, "monitor", "export", "--db", dsn, "--format", "jsonl", "--level", level)
		if code != 0 {
			t.Fatalf("export of %s: exit %d: %s", dsn, code, stderr)
		}
		return out
	}
	raw := export(db, "raw")
	if n := strings.Count(raw, "\n"); n != copied || n < 3 {
		t.Errorf("the SQLite history exports %d samples; migrate copied %d", n, copied)
	}
	if got := export(dsn, "raw"); got != raw {
		t.Errorf("raw samples differ:\nPostgreSQL:\n%s\nSQLite:\n%s", got, raw)
	}
	if got, want := export(dsn, "minute"), export(db, "minute"); got != want {
		t.Errorf("minutes differ:\nPostgreSQL:\n%s\nSQLite:\n%s", got, want)
	}
	polls := strings.Count(raw, `"server":"`+name+`"`)

	// An API node on the copy serves the SQLite monitor's polls.
	api := startMonitor(t, "--db", dsn, "--role", "api", "-f", list)
	if got := storedPolls(t, api.url, name); got != polls {
		t.Errorf("the API node reads %d polls of %s; the SQLite history has %d", got, name, polls)
	}
	api.stop(t, syscall.SIGTERM)

	code, _, stderr = runGSQ(t, "monitor", "migrate", "--from", db, "--db", dsn)
	if code != 1 || !strings.Contains(stderr, "already holds history") || !strings.Contains(stderr, "search_path") {
		t.Errorf("a second migrate: exit %d, stderr %q", code, stderr)
	}
	if got := export(dsn, "raw"); got != raw {
		t.Error("the refused migrate changed the history")
	}
}
