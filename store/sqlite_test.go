package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// unchanged fails the test if the file at path is not as it was.
func unchanged(t *testing.T, path string, before []byte) {
	t.Helper()
	after, err := os.ReadFile(path)
	must(t, err)
	if !bytes.Equal(before, after) {
		t.Errorf("%s was changed", path)
	}
	for _, suffix := range []string{"-wal", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("%s%s was created", path, suffix)
		}
	}
}

func TestSQLiteForeignFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	otherApp := func(name, setup string) string {
		path := filepath.Join(dir, name)
		db, err := sql.Open("sqlite", path)
		must(t, err)
		_, err = db.Exec(setup)
		must(t, errors.Join(err, db.Close()))
		return path
	}
	text := filepath.Join(dir, "notes.txt")
	must(t, os.WriteFile(text, []byte(strings.Repeat("not a database\n", 400)), 0o644))
	for _, c := range []struct {
		path, want string
	}{
		{text, "not a SQLite database"},
		{otherApp("kuma.db", "CREATE TABLE heartbeat (id INTEGER PRIMARY KEY, status INTEGER); CREATE TABLE monitor (id INTEGER)"), "with tables heartbeat, monitor"},
		{otherApp("app.db", "PRAGMA application_id = 12345"), "application_id 0x3039"},
		// Another application's tables under gsq's application_id.
		{otherApp("forged.db", "PRAGMA application_id = 1735618893; CREATE TABLE heartbeat (id INTEGER)"), "0x6773714d), with tables heartbeat"},
	} {
		before, err := os.ReadFile(c.path)
		must(t, err)
		_, err = Open(ctx, c.path)
		if !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%s): %v, want ErrForeign naming the file and %q", c.path, err, c.want)
		}
		unchanged(t, c.path, before)
	}
}

func TestSQLiteCorruptFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name string) string {
		path := filepath.Join(dir, name)
		st, err := Open(ctx, path)
		must(t, err)
		syncNames(t, st, "s")
		var round []Sample
		for m := range 3000 {
			round = append(round, withPlayers("s", min_(m), "alice:1"))
		}
		must(t, st.Write(ctx, round))
		must(t, st.Close())
		return path
	}
	damage := func(path string, at int64) []byte {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		must(t, err)
		_, err = f.WriteAt(bytes.Repeat([]byte{0xA5}, 4096), at)
		must(t, errors.Join(err, f.Close()))
		b, err := os.ReadFile(path)
		must(t, err)
		return b
	}
	// The schema on page 1 damaged: Open fails.
	path := write("schema.db")
	before := damage(path, 100)
	_, err := Open(ctx, path)
	if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrForeign) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open of a damaged schema: %v", err)
	}
	unchanged(t, path, before)

	// A data page damaged: Open may succeed, Check fails, nothing resets.
	path = write("data.db")
	info, err := os.Stat(path)
	must(t, err)
	before = damage(path, info.Size()/4096/2*4096)
	st, err := Open(ctx, path)
	if err == nil {
		err = st.Check(ctx)
		st.Close()
	}
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
		t.Errorf("a damaged data page: %v, want ErrCorrupt naming the file", err)
	}
	after, err := os.ReadFile(path)
	must(t, err)
	if len(after) < len(before) {
		t.Errorf("the damaged file shrank from %d to %d bytes", len(before), len(after))
	}
}

func TestSQLiteBadPaths(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	for _, c := range []struct{ dsn, want string }{
		{dir, "is a directory"},
		{filepath.Join(dir, "missing", "monitor.db"), "its directory"},
		{":memory:", "in-memory"},
		{"file::memory:?cache=shared", "in-memory"},
	} {
		if _, err := Open(ctx, c.dsn); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q): %v, want %q", c.dsn, err, c.want)
		}
	}
	// A file: URI with its own pragmas and an odd path works.
	path := filepath.Join(dir, "odd ?#%name.db")
	st, err := Open(ctx, "file:"+strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)+"?_pragma=synchronous(FULL)")
	must(t, err)
	var sync int
	must(t, st.(*db).wdb.QueryRow("PRAGMA synchronous").Scan(&sync))
	if sync != 2 {
		t.Errorf("synchronous = %d, want the URI's FULL (2)", sync)
	}
	must(t, st.Close())
	if _, err := os.Stat(path); err != nil {
		t.Errorf("the database is not at %s: %v", path, err)
	}
}

func TestSQLiteSizeLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	st, err := Open(ctx, path)
	must(t, err)
	syncNames(t, st, "s")
	must(t, st.Close())
	// max_page_count holds the database at 40 pages: a write past it fails
	// as a full disk does, and leaves everything committed intact.
	st, err = Open(ctx, "file:"+path+"?_pragma=max_page_count(40)")
	must(t, err)
	var err2 error
	written := 0
	for i := 0; i < 1000 && err2 == nil; i++ {
		var round []Sample
		for s := range 50 {
			round = append(round, up("s", t0.Add(time.Duration(i*50+s)*time.Second), s))
		}
		if err2 = st.Write(ctx, round); err2 == nil {
			written += len(round)
		}
	}
	if !errors.Is(err2, ErrFull) || !strings.Contains(err2.Error(), path) {
		t.Fatalf("writing past max_page_count: %v, want ErrFull naming the file", err2)
	}
	must(t, st.Check(ctx))
	must(t, st.Close())
	st, err = Open(ctx, path)
	must(t, err)
	defer st.Close()
	if n := count(t, st.(*db), "SELECT count(*) FROM samples"); n != written {
		t.Errorf("%d samples kept, %d were written", n, written)
	}
	must(t, st.Write(ctx, []Sample{up("s", t0.Add(24*time.Hour), 1)}))
}

func TestDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	path, err := DefaultPath()
	must(t, err)
	if want := filepath.Join(dir, "state", "gsq", "monitor.db"); path != want {
		t.Errorf("DefaultPath() = %s, want %s", path, want)
	}
	info, err := os.Stat(filepath.Dir(path))
	must(t, err)
	if info.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", info.Mode().Perm())
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", dir)
	path, err = DefaultPath()
	must(t, err)
	if want := filepath.Join(dir, ".local", "state", "gsq", "monitor.db"); path != want {
		t.Errorf("DefaultPath() without XDG_STATE_HOME = %s, want %s", path, want)
	}
}

// TestDatabaseFileDeletedWhileRunning: the SQLite file deleted, moved
// away or replaced under a running store. Every later write, and Close,
// fail with ErrReplaced naming the file, instead of writing on into a
// file nobody will see again.
func TestDatabaseFileDeletedWhileRunning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other := filepath.Join(t.TempDir(), "other.db")
	st, err := Open(ctx, other)
	must(t, err)
	must(t, st.Close())
	for name, act := range map[string]func(path string) error{
		"deleted":  os.Remove,
		"moved":    func(path string) error { return os.Rename(path, path+".old") },
		"replaced": func(path string) error { return os.Rename(other, path) },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "monitor.db")
			st, err := Open(ctx, path)
			must(t, err)
			defer st.Close()
			syncNames(t, st, "s")
			must(t, st.Write(ctx, []Sample{withPlayers("s", t0, "alice:1")}))
			must(t, act(path))
			refused := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, ErrReplaced) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), op) {
					t.Errorf("%s after the file was %s: %v, want ErrReplaced naming %s", op, name, err, path)
				}
			}
			refused("write", st.Write(ctx, []Sample{up("s", t0.Add(time.Minute), 1)}))
			refused("maintain", st.Maintain(ctx, t0.Add(time.Hour)))
			refused("sync servers", st.SyncServers(ctx, []Server{{Name: "t"}}))
			refused("close", st.Close())
		})
	}
}
