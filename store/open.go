package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Option configures Open.
type Option func(*options)

type options struct {
	retention  Retention
	now        func() time.Time
	budget     Budget
	logf       func(format string, args ...any)
	migrations []migration // the schema's versions; tests add their own
}

// WithRetention sets how long each level of history is kept. A zero
// Retention means DefaultRetention.
func WithRetention(r Retention) Option {
	return func(o *options) { o.retention = r }
}

// WithClock sets the clock that answers "now" where a query has none:
// the last 24 hours of Records, an open session's end in PlayTime, the
// zero SessionQuery.To. Default time.Now; tests and simulations set their
// own.
func WithClock(now func() time.Time) Option {
	return func(o *options) { o.now = now }
}

// WithBudget sets what one server may add to the store an hour. Zero
// fields mean DefaultBudget's; negative ones, no limit.
func WithBudget(b Budget) Option {
	return func(o *options) { o.budget = b }
}

// WithLogf sets where the store logs what a peer can make happen again
// and again (a server over its budget), rate-limited. Default: nowhere.
func WithLogf(logf func(format string, args ...any)) Option {
	return func(o *options) { o.logf = logf }
}

// Open opens the history at dsn, creating it if needed and migrating its
// schema to this version of gsq:
//
//   - a path, or a "file:" URI, opens a SQLite database (WAL mode);
//   - a "postgres://" or "postgresql://" URL opens PostgreSQL, in the
//     schema the URL's search_path parameter names first ("gsq" when it
//     names none), created if it does not exist.
//
// A file or schema that is not a gsq monitor database is never changed:
// Open fails with an error that names it and matches ErrForeign,
// ErrCorrupt, ErrNewerSchema or ErrReadOnly.
func Open(ctx context.Context, dsn string, opts ...Option) (Store, error) {
	o := options{now: time.Now, migrations: migrations}
	for _, opt := range opts {
		opt(&o)
	}
	if o.retention == (Retention{}) {
		o.retention = DefaultRetention
	}
	if o.now == nil {
		o.now = time.Now
	}
	o.budget = o.budget.orDefault()
	switch {
	case dsn == "":
		return nil, &Error{Op: "open", DB: `""`, Err: errors.New("no database given")}
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		return openPostgres(ctx, dsn, o)
	default:
		return openSQLite(ctx, dsn, o)
	}
}

// Describe names the database dsn opens, for messages: a file's path as
// given, or a PostgreSQL URL without its password and parameters.
func Describe(dsn string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		return postgresName(dsn, "")
	}
	return dsn
}

// DefaultPath returns where the monitor keeps its history when no
// database is given: $XDG_STATE_HOME/gsq/monitor.db, or
// ~/.local/state/gsq/monitor.db when XDG_STATE_HOME is unset (on Windows,
// %LocalAppData%\gsq\monitor.db). It creates the directory, readable by
// its owner only, if it does not exist.
func DefaultPath() (string, error) {
	dir, err := stateDir()
	if err != nil {
		return "", fmt.Errorf("store: no directory for the history: %w", err)
	}
	dir = filepath.Join(dir, "gsq")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	return filepath.Join(dir, "monitor.db"), nil
}

func stateDir() (string, error) {
	// The XDG base directory specification: a relative path is invalid
	// and is ignored.
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return dir, nil
	}
	if runtime.GOOS == "windows" {
		if dir := os.Getenv("LocalAppData"); dir != "" {
			return dir, nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".local", "state"), nil
}
