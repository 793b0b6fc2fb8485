package store

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzSQLiteLocation reads any DSN that is not a postgres:// URL as
// Open does. Properties: no panic; a DSN taken gives an absolute path
// and a file: URI that reads back as the same path and URI (the store's
// pragmas added once, the DSN's own kept); an in-memory database is
// refused.
func FuzzSQLiteLocation(f *testing.F) {
	for _, dsn := range []string{
		"monitor.db", "/var/lib/gsq/monitor.db", "file:/tmp/x.db?_pragma=synchronous(FULL)",
		"file:odd%20%3f%23name.db?mode=rw&_pragma=busy_timeout(5)", ":memory:", "file::memory:?cache=shared",
		"file://localhost/tmp/a.db", "file:C:/x.db", "file:x.db?%zz", "file:%zz",
	} {
		f.Add(dsn)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		path, uri, err := sqliteLocation(dsn)
		if err != nil {
			return
		}
		if !filepath.IsAbs(path) || !strings.HasPrefix(uri, "file:") {
			t.Fatalf("%q: path %q, URI %q", dsn, path, uri)
		}
		// SQLite's in-memory database is the path ":memory:" exactly,
		// before any query, with "file:" or without (":memory:?", a
		// crasher, was taken as a file of that name); "file:memory:0" and
		// "file::memory:0" are files (crashers of an earlier, looser,
		// form of this check).
		if p, _, _ := strings.Cut(strings.TrimPrefix(dsn, "file:"), "?"); p == ":memory:" {
			t.Fatalf("%q: an in-memory database taken as %q", dsn, path)
		}
		path2, uri2, err := sqliteLocation(uri)
		if err != nil || path2 != path || uri2 != uri {
			t.Fatalf("%q: URI %q reads back as %q, %q, %v", dsn, uri, path2, uri2, err)
		}
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatalf("%q: URI %q: %v", dsn, uri, err)
		}
		pragmas := map[string]int{}
		for _, p := range u.Query()["_pragma"] {
			name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "(")
			pragmas[strings.TrimSpace(strings.Split(name, "=")[0])]++
		}
		for _, p := range sqlitePragmas {
			name, _, _ := strings.Cut(p, "(")
			if pragmas[name] == 0 {
				t.Fatalf("%q: URI %q lacks the pragma %s", dsn, uri, name)
			}
		}
		if u.Query().Get("_txlock") == "" {
			t.Fatalf("%q: URI %q lacks _txlock", dsn, uri)
		}
	})
}

// FuzzDescribe: what names a PostgreSQL database in messages never
// holds its password.
func FuzzDescribe(f *testing.F) {
	f.Add("postgres://gsq:s3cret-pass@db.example:5432/gsq?sslmode=disable&search_path=x")
	f.Add("postgresql://u:p%40ss%2Fword@[::1]/db")
	f.Add("postgres://:only-password@host/")
	f.Add("postgres://u:pw@host/db#frag-pw")
	f.Fuzz(func(t *testing.T, dsn string) {
		if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
			dsn = "postgres://" + dsn
		}
		u, err := url.Parse(dsn)
		if err != nil || u.User == nil {
			return
		}
		pw, ok := u.User.Password()
		// A password that is a part of what the name keeps anyway (the
		// host, the path) cannot be told apart.
		rest := *u
		rest.User = url.User(u.User.Username())
		if !ok || len(pw) < 4 || strings.Contains(rest.String(), pw) || strings.Contains(rest.String(), url.QueryEscape(pw)) {
			return
		}
		for _, name := range []string{Describe(dsn), postgresName(dsn, "gsq")} {
			if strings.Contains(name, pw) || strings.Contains(name, url.PathEscape(pw)) || strings.Contains(name, url.QueryEscape(pw)) {
				t.Fatalf("%q names the database %q, password and all", dsn, name)
			}
		}
	})
}

// FuzzMarks reads the store's watermarks back from any meta table:
// whatever it holds, no panic; the marks a store writes read back the
// same.
func FuzzMarks(f *testing.F) {
	f.Add(int64(1772409600), int64(1772406000), int64(1772323200), int64(1772236800), int64(0), int64(-5), "rolled_minute", "12x")
	f.Fuzz(func(t *testing.T, a, b, c, d, e, g int64, key, value string) {
		m := marks{rolled: [4]int64{0, a, b, c}, kept: [4]int64{d, e, g, a ^ d}}
		meta := map[string]string{}
		for k, v := range m.meta() {
			meta[k] = strconv.FormatInt(v, 10)
		}
		if got := marksFrom(meta); got != m {
			t.Fatalf("marks %+v read back as %+v", m, got)
		}
		meta[key] = value
		marksFrom(meta)
		storedVersion(meta)
		storedVersion(map[string]string{"application": application, "schema_version": value})
	})
}

// FuzzServerLabels stores a server's labels (a JSON text in the servers
// table) and reads them back: the same labels, as JSON gives them back
// (a byte outside UTF-8 becomes U+FFFD), whatever the keys and values.
func FuzzServerLabels(f *testing.F) {
	f.Add("region", "eu", "game", "cs2")
	f.Add("", "", "k\x00", "\xff\xfe")
	f.Add("\u2028", "<script>", "a\"b", "\\u0000")
	dir := f.TempDir()
	var st Store
	f.Cleanup(func() {
		if st != nil {
			st.Close()
		}
	})
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		ctx := context.Background()
		if st == nil {
			var err error
			if st, err = Open(ctx, filepath.Join(dir, "labels.db")); err != nil {
				t.Fatal(err)
			}
		}
		labels := map[string]string{k1: v1, k2: v2}
		must(t, st.SyncServers(ctx, []Server{{Name: "s", Target: "127.0.0.1:27015", Protocol: "a2s", Labels: labels}}))
		list, err := st.Servers(ctx)
		must(t, err)
		b, err := json.Marshal(labels)
		must(t, err)
		var want map[string]string
		must(t, json.Unmarshal(b, &want))
		if len(list) != 1 || !maps.Equal(list[0].Labels, want) {
			t.Fatalf("labels %q read back as %q, want %q", labels, list[0].Labels, want)
		}
	})
}

// openFileBases are the files FuzzOpenFile damages: a small gsq monitor
// database (512-byte pages: 13 KB), another application's SQLite file,
// and a text file.
func openFileBases(f *testing.F) [][]byte {
	dir := f.TempDir()
	gsq := filepath.Join(dir, "gsq.db")
	st, err := Open(context.Background(), "file:"+gsq+"?_pragma=page_size(512)", WithClock(func() time.Time { return t0 }))
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	err = st.SyncServers(ctx, []Server{{Name: "s", Labels: map[string]string{"k": "v"}}})
	for m := range 30 {
		if err == nil {
			err = st.Write(ctx, []Sample{withPlayers("s", min_(m), "alice:1", fmt.Sprint("p", m%4, ":2"))})
		}
	}
	if err == nil {
		err = st.Maintain(ctx, min_(40))
	}
	if err = errors.Join(err, st.Close()); err != nil {
		f.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	o, err := sql.Open("sqlite", "file:"+other+"?_pragma=page_size(512)")
	if err == nil {
		_, err = o.Exec("CREATE TABLE heartbeat (id INTEGER PRIMARY KEY, status INTEGER); INSERT INTO heartbeat VALUES (1, 2)")
		err = errors.Join(err, o.Close())
	}
	if err != nil {
		f.Fatal(err)
	}
	var bases [][]byte
	for _, path := range []string{gsq, other} {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		bases = append(bases, b)
	}
	return append(bases, []byte(strings.Repeat("not a database\n", 40)))
}

// FuzzOpenFile opens damaged files as a history: one of openFileBases
// with bytes written over it at an offset (or cut there). Properties: no
// panic, no hang; a file refused is an *Error naming it, with a kind; a
// file that is not a gsq monitor database (ErrForeign, ErrNewerSchema) is
// left as it was, byte for byte, with no journal beside it; a file taken
// can be checked and closed.
func FuzzOpenFile(f *testing.F) {
	bases := openFileBases(f)
	f.Add(uint8(0), uint32(0), []byte{}, false)
	f.Add(uint8(0), uint32(68), []byte{0, 0, 0, 1}, false)     // the application_id
	f.Add(uint8(0), uint32(60), []byte{0, 0, 0, 9}, false)     // the user_version
	f.Add(uint8(0), uint32(18), []byte{1, 1}, false)           // rollback journal, not WAL
	f.Add(uint8(0), uint32(600), []byte("gsq-monitoX"), false) // somewhere in the schema
	f.Add(uint8(1), uint32(68), []byte("gsqM"), false)
	f.Add(uint8(0), uint32(4096), []byte{}, true)
	f.Add(uint8(2), uint32(0), []byte("SQLite format 3\x00"), false)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, base uint8, at uint32, patch []byte, cut bool) {
		data := bytes.Clone(bases[int(base)%len(bases)])
		if len(patch) > 512 {
			return
		}
		if at := int(at % uint32(len(data)+1)); cut {
			data = data[:at]
		} else {
			data = append(data[:at], append(patch, data[min(len(data), at+len(patch)):]...)...)
		}
		path := filepath.Join(dir, "f.db")
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(path + suffix)
		}
		must(t, os.WriteFile(path, data, 0o644))
		ctx := context.Background()
		// No fsync: durability is not what this target checks.
		st, err := Open(ctx, "file:"+path+"?_pragma=synchronous(OFF)")
		if err == nil {
			st.Check(ctx)
			st.Close()
			return
		}
		var e *Error
		if !errors.As(err, &e) || e.Kind == nil || !strings.Contains(err.Error(), path) {
			t.Fatalf("Open of a damaged file: %v (%T), want an *Error of a kind naming the file", err, err)
		}
		if errors.Is(err, ErrForeign) || errors.Is(err, ErrNewerSchema) {
			unchanged(t, path, data)
		}
	})
}
