package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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

// TestMonitorBadDatabase: a file that is not a gsq database is refused
// with an error naming it, and exit status 1; the file is left alone.
func TestMonitorBadDatabase(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "notes.db")
	if err := os.WriteFile(db, []byte("my notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
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
