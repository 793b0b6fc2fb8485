package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gsq-project/gsq/internal/ratelog"
)

// dialect is what differs between the SQL engines. Queries are written
// once, in the SQL both engines share, with ? placeholders.
type dialect interface {
	// ddl adapts a schema statement: {id} is an integer primary key the
	// engine assigns, {norowid} a table clustered on its primary key; a
	// statement that begins with {postgres} is for PostgreSQL only ("" for
	// SQLite).
	ddl(stmt string) string
	// placeholder is the nth (from 1) parameter of a statement.
	placeholder(n int) string
	// joinUpdates is whether many rows are best updated with one
	// statement joining a VALUES list, rather than one at a time.
	joinUpdates() bool
	// maxParams is how many parameters one statement may carry.
	maxParams() int
	// kind classifies an engine error: one of the Err* kinds, or nil.
	kind(err error) error
	// readTx is the options of a read transaction: one snapshot.
	readTx() *sql.TxOptions
	// beginMigration serializes migrations across processes.
	beginMigration(ctx context.Context, tx *sql.Tx) error
	// hasTable reports whether the store's schema has a table.
	hasTable(ctx context.Context, tx *sql.Tx, name string) (bool, error)
	// afterMigrate runs in a migration's transaction, once the schema is
	// at version.
	afterMigrate(ctx context.Context, tx *sql.Tx, version int) error
	// reclaim returns space freed by retention to the file system, where
	// the engine does not do it itself.
	reclaim(ctx context.Context, db *sql.DB) error
	// integrity runs the engine's own integrity check.
	integrity(ctx context.Context, db *sql.DB) error
	// indexedBy is what follows a table in FROM to make the engine read
	// it through an index: SQLite's planner, without statistics, may
	// pick a covering index that reads every row of a server over a
	// narrower one that seeks. PostgreSQL plans from its statistics.
	indexedBy(index string) string
	// likeFold is a LIKE of col that ignores case, given a lower-case
	// pattern: SQLite's LIKE does for ASCII; in PostgreSQL, lower(col)
	// LIKE (three to five times faster than ILIKE, measured).
	likeFold(col string) string
}

// db is the Store on either engine.
type db struct {
	d    dialect
	name string  // the database, for errors
	rdb  *sql.DB // readers
	wdb  *sql.DB // the writer
	opts options
	// file is the SQLite file as it was opened, to tell that another one
	// took its path (checkFile); nil for PostgreSQL.
	file os.FileInfo

	closed atomic.Bool

	queries sync.Map // query text with ? -> the engine's

	mu sync.Mutex // serializes writes: Write, Maintain, SyncServers
	w  writerState

	partMu   sync.Mutex
	partDays map[int64]bool // Unix days whose samples' partition exists (PostgreSQL)

	log       *ratelog.Limiter
	refusedMu sync.Mutex
	refused   map[string]Refusals // by server name, since Open
}

// q returns query in the engine's placeholder syntax.
func (s *db) q(query string) string {
	if v, ok := s.queries.Load(query); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteString(s.d.placeholder(n))
			continue
		}
		b.WriteByte(query[i])
	}
	s.queries.Store(query, b.String())
	return b.String()
}

// fail wraps err, from operation op, in an *Error naming the database.
func (s *db) fail(op string, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	return &Error{Op: op, DB: s.name, Kind: s.d.kind(err), Err: err}
}

func (s *db) check() error {
	if s.closed.Load() {
		return &Error{Op: "use", DB: s.name, Kind: ErrClosed}
	}
	return nil
}

// checkFile returns an error of kind ErrReplaced when the SQLite file
// at the store's path is no longer the one it opened. It costs a stat,
// and runs before every write and at Close. A stat that fails for
// another reason says nothing: the write that follows reports it.
func (s *db) checkFile(op string) error {
	if s.file == nil {
		return nil
	}
	now, err := os.Stat(s.name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &Error{Op: op, DB: s.name, Kind: ErrReplaced,
			Err: errors.New("no file at this path any more (deleted or moved): the history written since is lost; restore the file from a backup, or start again on a new one")}
	case err == nil && !os.SameFile(now, s.file):
		return &Error{Op: op, DB: s.name, Kind: ErrReplaced,
			Err: errors.New("another file is at this path now: the history written since it was replaced is lost; stop gsq before replacing the file")}
	}
	return nil
}

// Close writes the scores of open sessions not written yet, and closes
// the database. It fails with ErrReplaced when the file was deleted or
// replaced: what the store wrote is not in the file at its path.
func (s *db) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return nil
	}
	err := s.checkFile("close")
	if err == nil {
		err = s.flushScores(context.Background())
	}
	err = errors.Join(err, s.rdb.Close())
	if s.wdb != s.rdb {
		err = errors.Join(err, s.wdb.Close())
	}
	return s.fail("close", err)
}

// flushScores writes the scores of open sessions that changed since they
// were last written.
func (s *db) flushScores(ctx context.Context) error {
	changed := make(map[string]*serverState)
	dirty := make(map[*openSession]bool)
	for name, st := range s.w.servers {
		var c *serverState
		for i, o := range st.open {
			if o.score == o.savedScore {
				continue
			}
			if c == nil {
				c = st.clone()
				changed[name] = c
			}
			c.open[i].savedScore = o.score
			dirty[c.open[i]] = true
		}
	}
	return s.writeTracked(ctx, changed, dirty)
}

// inList returns "(?, ?, ...)" for n values.
func inList(n int) string {
	return "(" + strings.TrimSuffix(strings.Repeat("?, ", n), ", ") + ")"
}

// valuesRows returns "(?, ?), (?, ?), ..." for rows of cols values.
func valuesRows(rows, cols int) string {
	one := inList(cols)
	return strings.TrimSuffix(strings.Repeat(one+", ", rows), ", ")
}

// chunkRows is how many rows of cols values fit in one statement.
func (s *db) chunkRows(cols int) int {
	return max(1, min(1000, s.d.maxParams()/cols))
}

// execRows runs head + VALUES rows + tail for args, cols values a row, in
// as few statements as the engine allows.
func (s *db) execRows(ctx context.Context, tx *sql.Tx, head, tail string, cols int, args []any) error {
	per := s.chunkRows(cols)
	for len(args) > 0 {
		n := min(per, len(args)/cols)
		if _, err := tx.ExecContext(ctx, s.q(head+" VALUES "+valuesRows(n, cols)+" "+tail), args[:n*cols]...); err != nil {
			return err
		}
		args = args[n*cols:]
	}
	return nil
}

// meta reads the store's bookkeeping (schema version, watermarks).
func readMeta(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, "SELECT key, value FROM meta")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		m[k] = v
	}
	return m, rows.Err()
}

func (s *db) setMeta(ctx context.Context, tx *sql.Tx, kv map[string]int64) error {
	for k, v := range kv {
		if _, err := tx.ExecContext(ctx, s.q("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"), k, strconv.FormatInt(v, 10)); err != nil {
			return err
		}
	}
	return nil
}
