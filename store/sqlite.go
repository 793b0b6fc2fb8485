package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"modernc.org/sqlite"

	"github.com/gsq-project/gsq/internal/ratelog"
)

// SQLite result codes (the primary code, the low byte of an extended one).
const (
	sqliteError    = 1
	sqliteBusy     = 5
	sqliteCorrupt  = 11
	sqliteFull     = 13
	sqliteCantOpen = 14
	sqliteReadOnly = 8
	sqliteNotADB   = 26
	// sqliteReadOnlyDBMoved is SQLITE_READONLY_DBMOVED: SQLite noticed
	// that the file was moved (it checks in rollback-journal mode only).
	sqliteReadOnlyDBMoved = sqliteReadOnly | 4<<8
)

// sqlitePragmas are set on every connection, unless the DSN sets them:
//
//   - synchronous NORMAL: in WAL mode a commit is durable against a crash
//     of the process (kill -9 loses nothing committed: the WAL is in the
//     operating system's cache); only a power loss or kernel crash can
//     roll back the last commits, never corrupt the file. FULL would add
//     an fsync per poll round, which costs SD cards and small disks far
//     more than a few seconds of history is worth.
//   - busy_timeout: another process writing (a second gsq, an export's
//     migration) makes a write wait up to 10 s instead of failing.
//   - temp_store MEMORY: rollups group in memory, not in temporary files.
//   - journal_size_limit: after a checkpoint the WAL shrinks back to
//     32 MiB, whatever a large rollup made it grow to.
var sqlitePragmas = []string{
	"busy_timeout(10000)",
	"synchronous(NORMAL)",
	"temp_store(MEMORY)",
	"journal_size_limit(33554432)",
}

type sqliteDialect struct{}

func (sqliteDialect) ddl(stmt string) string {
	if strings.HasPrefix(stmt, "{postgres}") {
		return ""
	}
	return strings.NewReplacer("{id}", "INTEGER PRIMARY KEY", "{norowid}", " WITHOUT ROWID").Replace(stmt)
}

func (sqliteDialect) placeholder(int) string { return "?" }

func (sqliteDialect) indexedBy(index string) string { return " INDEXED BY " + index }

func (sqliteDialect) likeFold(col string) string { return col + " LIKE" }

func (sqliteDialect) joinUpdates() bool { return false }

func (sqliteDialect) maxParams() int { return 32766 }

func (sqliteDialect) kind(err error) error {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return nil
	}
	if e.Code() == sqliteReadOnlyDBMoved {
		return ErrReplaced
	}
	switch e.Code() & 0xff {
	case sqliteFull:
		return ErrFull
	case sqliteCorrupt:
		return ErrCorrupt
	case sqliteNotADB:
		return ErrForeign
	case sqliteReadOnly:
		return ErrReadOnly
	}
	return nil
}

func (sqliteDialect) readTx() *sql.TxOptions { return &sql.TxOptions{ReadOnly: true} }

func (sqliteDialect) beginMigration(context.Context, *sql.Tx) error {
	return nil // the writer's transactions begin IMMEDIATE: one at a time
}

func (sqliteDialect) hasTable(ctx context.Context, tx *sql.Tx, name string) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", name).Scan(&n)
	return n > 0, err
}

func (sqliteDialect) afterMigrate(ctx context.Context, tx *sql.Tx, version int) error {
	// The header's application_id and user_version let file(1) and the
	// sqlite3 shell recognise the file.
	_, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", sqliteApplicationID))
	if err == nil {
		_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", version))
	}
	return err
}

// reclaim gives free pages back to the file system once they are more
// than a quarter of the file and 1 MiB: retention frees a little every
// hour and day, which the next writes reuse, so only a shorter retention
// or a burst leaves that much free.
func (sqliteDialect) reclaim(ctx context.Context, db *sql.DB) error {
	var pages, free int64
	if err := db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		return err
	}
	if err := db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return err
	}
	if free*4 <= pages || free < 256 {
		return nil
	}
	// Keep a tenth of the file free for the writes to come.
	_, err := db.ExecContext(ctx, "PRAGMA incremental_vacuum("+strconv.FormatInt(free-pages/10, 10)+")")
	return err
}

func (sqliteDialect) integrity(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA integrity_check(20)")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// sqliteLocation turns a path or file: URI into the file's path, for
// messages and checks, and the URI the driver opens, with the store's
// pragmas added.
func sqliteLocation(dsn string) (path, uri string, err error) {
	var query url.Values
	if rest, ok := strings.CutPrefix(dsn, "file:"); ok {
		p, q, _ := strings.Cut(rest, "?")
		if query, err = url.ParseQuery(q); err != nil {
			return "", "", fmt.Errorf("bad query in %q: %w", dsn, err)
		}
		if p, err = url.PathUnescape(p); err != nil {
			return "", "", fmt.Errorf("bad path in %q: %w", dsn, err)
		}
		if strings.HasPrefix(p, "//") { // file://host/path: SQLite allows only an empty host or localhost
			p = strings.TrimPrefix(strings.TrimPrefix(p, "//"), "localhost")
		}
		path = p
	} else {
		path = dsn
		query = url.Values{}
	}
	// ":memory:?cache=shared", the SQLite idiom without "file:", means
	// the same as with it: no file of that name.
	if bare, _, _ := strings.Cut(path, "?"); bare == ":memory:" || path == "" || query.Get("mode") == "memory" {
		return "", "", errors.New("an in-memory database keeps no history: give a file")
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", "", err
	}
	set := map[string]bool{}
	for _, p := range query["_pragma"] {
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(p)), "(")
		set[strings.TrimSpace(strings.Split(name, "=")[0])] = true
	}
	for _, p := range sqlitePragmas {
		name, _, _ := strings.Cut(p, "(")
		if !set[name] {
			query.Add("_pragma", p)
		}
	}
	if query.Get("_txlock") == "" {
		query.Set("_txlock", "immediate")
	}
	slashed := filepath.ToSlash(path)
	if !strings.HasPrefix(slashed, "/") {
		slashed = "/" + slashed // C:/x.db: SQLite wants file:/C:/x.db
	}
	u := url.URL{Path: slashed}
	return path, "file:" + u.EscapedPath() + "?" + query.Encode(), nil
}

func openSQLite(ctx context.Context, dsn string, o options) (Store, error) {
	path, uri, err := sqliteLocation(dsn)
	if err != nil {
		return nil, &Error{Op: "open", DB: dsn, Err: err}
	}
	fail := func(kind, err error) (Store, error) {
		return nil, &Error{Op: "open", DB: path, Kind: kind, Err: err}
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fail(nil, errors.New("is a directory"))
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return fail(nil, fmt.Errorf("its directory: %w", err))
	}
	wdb, err := sql.Open("sqlite", uri)
	if err != nil {
		return fail(nil, err)
	}
	wdb.SetMaxOpenConns(1)
	s := &db{d: sqliteDialect{}, name: path, wdb: wdb, opts: o, log: &ratelog.Limiter{Logf: o.logf}}
	s.w.init()
	if err := s.initSQLite(ctx, path); err != nil {
		wdb.Close()
		return nil, err
	}
	rdb, err := sql.Open("sqlite", uri)
	if err != nil {
		wdb.Close()
		return fail(nil, err)
	}
	rdb.SetMaxOpenConns(4)
	s.rdb = rdb
	if s.file, err = os.Stat(path); err != nil {
		s.Close()
		return fail(nil, err)
	}
	// On Windows, os.SameFile reads a file's identity when first asked:
	// ask now, while the file at the path is the one open.
	os.SameFile(s.file, s.file)
	return s, nil
}

// initSQLite tells a new file from a gsq database from anything else,
// readies a new one, and migrates.
func (s *db) initSQLite(ctx context.Context, path string) error {
	var appID int64
	var tables, meta int
	// One statement, one snapshot: another process may be creating the
	// schema right now.
	err := s.wdb.QueryRowContext(ctx, `SELECT (SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_schema),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'meta')`).Scan(&appID, &tables, &meta)
	if e := (*sqlite.Error)(nil); errors.As(err, &e) && e.Code() == sqliteError {
		// Reading the header and the schema failed with no more precise
		// code: a header SQLite cannot take ("unsupported file format")
		// or a schema it cannot parse.
		return &Error{Op: "open", DB: path, Kind: ErrCorrupt, Err: err}
	}
	if err != nil {
		return s.openError(err, path)
	}
	switch {
	case tables == 0 && (appID == 0 || appID == sqliteApplicationID):
		// A new or empty file. auto_vacuum must be set before the first
		// table, and WAL is persistent: set both on this file only.
		if _, err := s.wdb.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
			return s.openError(err, path)
		}
		if err := s.setWAL(ctx); err != nil {
			return s.openError(err, path)
		}
	case appID != sqliteApplicationID || meta == 0:
		// gsq sets its application_id in the transaction that creates
		// its tables, meta among them: tables without meta are another
		// application's, whatever the header says.
		return &Error{Op: "open", DB: path, Kind: ErrForeign, Err: s.foreignSQLite(ctx, appID)}
	default:
		if err := s.setWAL(ctx); err != nil {
			return s.openError(err, path)
		}
	}
	if err := s.migrate(ctx); err != nil {
		return err
	}
	return s.opened(ctx)
}

// setWAL puts the file in WAL mode. When another connection switches the
// same new file at the same moment, SQLite refuses at once with
// SQLITE_BUSY, without waiting in its busy handler; so the switch is
// tried again, with a growing pause, for as long as busy_timeout lets a
// write wait (10 s), or until ctx ends.
func (s *db) setWAL(ctx context.Context) error {
	give := time.Now().Add(10 * time.Second)
	for pause := time.Millisecond; ; pause = min(2*pause, 100*time.Millisecond) {
		_, err := s.wdb.ExecContext(ctx, "PRAGMA journal_mode = WAL")
		var e *sqlite.Error
		if err == nil || !errors.As(err, &e) || e.Code()&0xff != sqliteBusy || time.Now().After(give) {
			return err
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

// foreignSQLite says whose the SQLite database seems to be.
func (s *db) foreignSQLite(ctx context.Context, appID int64) error {
	var names []string
	rows, err := s.wdb.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name LIMIT 6")
	if err == nil {
		defer rows.Close()
		for rows.Next() {
			var n string
			if rows.Scan(&n) == nil {
				names = append(names, n)
			}
		}
	}
	what := "a SQLite database of another application"
	if appID != 0 {
		what += fmt.Sprintf(" (application_id %#x)", appID)
	}
	if len(names) > 0 {
		what += ", with tables " + strings.Join(names, ", ")
	}
	return errors.New(what)
}

// openError explains why a SQLite file could not be opened: not SQLite,
// damaged, or a file or directory the process may not write.
func (s *db) openError(err error, path string) error {
	kind := s.d.kind(err)
	switch kind {
	case ErrForeign:
		return &Error{Op: "open", DB: path, Kind: kind, Err: errors.New("the file is not a SQLite database")}
	case ErrCorrupt, ErrFull:
		return &Error{Op: "open", DB: path, Kind: kind, Err: err}
	}
	if probe := writable(path); probe != nil {
		return &Error{Op: "open", DB: path, Kind: ErrReadOnly, Err: probe}
	}
	return &Error{Op: "open", DB: path, Kind: kind, Err: err}
}

// writable returns why the database at path, with its WAL and shared
// memory files beside it, cannot be written, or nil.
func writable(path string) error {
	dir := filepath.Dir(path)
	probe, err := os.CreateTemp(dir, ".gsq-probe-*")
	if err != nil {
		if denied(err) {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the probe's name says nothing
			}
			return fmt.Errorf("cannot create files in %s: %w", dir, err)
		}
		return nil
	}
	probe.Close()
	os.Remove(probe.Name())
	if f, err := os.OpenFile(path, os.O_RDWR, 0); err != nil {
		if denied(err) {
			return err
		}
	} else {
		f.Close()
	}
	return nil
}

func denied(err error) bool {
	return errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS)
}
