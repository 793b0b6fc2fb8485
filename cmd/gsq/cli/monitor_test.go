package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

func TestMonitorUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"monitor", "--interval", "100ms", "--target", "127.0.0.1:27015"},
		{"monitor", "--target", "eu1="},
		{"monitor", "--protocol", "quake", "--target", "127.0.0.1:27015"},
		{"monitor", "--webhook", "ftp://example.net/hook", "--target", "127.0.0.1:27015"},
		{"monitor", "--token", "short", "--target", "127.0.0.1:27015"},
		{"monitor", "--demo", "--demo-servers", "0"},
		{"monitor", "extra"},
		{"monitor", "export", "--format", "xml"},
		{"monitor", "export", "--from", "yesterday"},
		{"monitor", "export", "--level", "week"},
	} {
		code, stdout, stderr := runGSQ(t, nil, nil, nil, args...)
		if code != ExitUsage || stdout != "" || !strings.HasPrefix(stderr, "gsq: error: ") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want a usage error", args, code, stdout, stderr)
		}
	}
}

// TestMonitorDurationFlags: a flag reads durations as the config does
// (days included), and its range is the config's.
func TestMonitorDurationFlags(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		"--interval 2d":    "--interval: must be from 1s to 1d, not 2d",
		"--interval 30":    "--interval: 30 has no unit: write 30s for seconds",
		"--down-after -1m": "--down-after: must not be negative",
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, append([]string{"monitor", "--target", "127.0.0.1:27015"}, strings.Fields(args)...)...)
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want a usage error with %q", args, code, stderr, want)
		}
	}
}

// TestMonitorTokenRule: the token of the flag and of the environment
// obey the config file's rule: long enough, and no spaces.
func TestMonitorTokenRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{[]string{"--token", "short"}, nil, "--token: too short (5 characters)"},
		{[]string{"--token", "0123456789 abcdef"}, nil, "--token: must not contain spaces"},
		{nil, map[string]string{"GSQ_MONITOR_TOKEN": "0123456789\tabcdef"}, "GSQ_MONITOR_TOKEN: must not contain spaces"},
	} {
		code, _, stderr := runGSQ(t, nil, nil, c.env, append([]string{"monitor", "--target", "127.0.0.1:27015"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q %v: exit %d, stderr %q; want a usage error with %q", c.args, c.env, code, stderr, c.want)
		}
	}
}

// TestMonitorBadDatabase: a file that is not a gsq database is refused
// with an error naming it, and exit status 1; the file is left alone.
func TestMonitorBadDatabase(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "notes.db")
	testutil.WriteFile(t, db, "my notes\n")
	for _, args := range [][]string{
		{"monitor", "--target", "127.0.0.1:27015", "--listen", "127.0.0.1:0", "--db", db},
		{"monitor", "export", "--db", db},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, args...)
		if code != ExitFailure || !strings.Contains(stderr, db) || !strings.Contains(stderr, "not a gsq monitor database") {
			t.Errorf("%q: exit %d, stderr %q", args, code, stderr)
		}
	}
	if b, err := os.ReadFile(db); err != nil || string(b) != "my notes\n" {
		t.Errorf("the file was changed: %q, %v", b, err)
	}
}

// TestMonitorSaysOneServer: the monitor of one server says "1 server"
// (issue 19, user row 8: "1 servers").
func TestMonitorSaysOneServer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	env := testEnv(nil, nil)
	stdout, stderr := newWatchedBuffer("the page is at"), newWatchedBuffer("")
	env.Stdout, env.Stderr = stdout, stderr
	done := make(chan int, 1)
	go func() {
		done <- env.Run(ctx, []string{"monitor", "--target", "127.0.0.1:9", "--listen", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "m.db")})
	}()
	select {
	case <-stdout.seen:
	case code := <-done:
		t.Fatalf("exit %d before serving:\n%s", code, stderr)
	}
	cancel()
	<-done
	if !strings.Contains(stderr.String(), "monitor: 1 server, history in ") {
		t.Errorf("stderr:\n%s", stderr)
	}
}

// TestMonitorExportHintNamesTheCommand: where gsq's help points to the
// export, it names `gsq monitor export` (issue 19, user row 8: a hint
// named `gsq export`, which does not exist).
func TestMonitorExportHintNamesTheCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"monitor", "--help"}, {"monitor", "export", "--help"}, {"--help"}} {
		code, stdout, _ := runGSQ(t, nil, nil, nil, args...)
		if code != ExitOK || regexp.MustCompile(`gsq (\[[^]]*\] )?export`).MatchString(stdout) {
			t.Errorf("%q: exit %d, names gsq export:\n%s", args, code, stdout)
		}
		if args[0] == "monitor" && !strings.Contains(stdout, "gsq monitor export --") {
			t.Errorf("%q: no gsq monitor export example:\n%s", args, stdout)
		}
	}
	if code, _, stderr := runGSQ(t, nil, nil, nil, "export"); code != ExitUsage || !strings.Contains(stderr, "unknown command") {
		t.Errorf("gsq export: exit %d, %q", code, stderr)
	}
}
