package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/store"
)

// TestMonitorForgetPlayer: forget-player deletes one player's sessions
// on every server and leaves the others'.
func TestMonitorForgetPlayer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "monitor.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SyncServers(ctx, []store.Server{{Name: "a", Target: "127.0.0.1:1", Protocol: "a2s"}, {Name: "b", Target: "127.0.0.1:2", Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	join := []store.SessionChange{{Player: "Alice"}, {Player: "Bob"}}
	if err := st.Write(ctx, []store.Sample{{Server: "a", Time: at, Up: true, Sessions: join}, {Server: "b", Time: at, Up: true, Sessions: join[:1]}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runGSQ(t, nil, nil, nil, "monitor", "forget-player", "--db", db, "Alice")
	if code != 0 || stdout != "forgot \"Alice\": 2 sessions deleted\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	st, err = store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Player(ctx, "Alice", nil, at); err == nil {
		t.Error("Alice is still stored")
	}
	if p, err := st.Player(ctx, "Bob", nil, at); err != nil || p.Sessions != 1 {
		t.Errorf("Bob: %+v, %v", p, err)
	}

	// No database there: an error naming the path, and nothing created.
	missing := filepath.Join(t.TempDir(), "none.db")
	code, _, stderr = runGSQ(t, nil, nil, nil, "monitor", "forget-player", "--db", missing, "Alice")
	if code != ExitFailure || !strings.Contains(stderr, missing) {
		t.Errorf("missing database: exit %d, stderr %q", code, stderr)
	}
	code, _, _ = runGSQ(t, nil, nil, nil, "monitor", "forget-player")
	if code != ExitUsage {
		t.Errorf("no name: exit %d, want usage", code)
	}
}
