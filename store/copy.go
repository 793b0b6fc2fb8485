package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// ErrNotEmpty is the kind of the error of a Copy into a store that
// already holds history: Copy adds to an empty store only.
var ErrNotEmpty = errors.New("the target already holds history")

// copyTables are the tables Copy copies, every column of every row, in
// this order; the meta table is copied apart (copyMeta). The fleet's
// tables (clusterMigration) are PostgreSQL's only and are not copied.
// TestCopyTablesAreTheSchema fails when a table added to the SQLite
// schema is not here.
var copyTables = []string{
	"servers", "strings", "players",
	"samples", "rollup_minute", "rollup_hour", "rollup_day",
	"maps", "sessions", "observed",
	"incidents", "maintenance",
	"alert_state", "alert_outbox",
}

// metaOwn are the meta keys that belong to a database rather than to its
// history: the target keeps its own.
var metaOwn = []string{"application", "schema_version", "opened_at"}

// CopyProgress is where a Copy is: Rows rows of Table copied so far;
// Done once the table is whole.
type CopyProgress struct {
	Table string
	Rows  int64
	Done  bool
}

// CopiedTable is how many rows of a table Copy copied.
type CopiedTable struct {
	Table string
	Rows  int64
}

// CopyReport is what Copy copied, table by table in the order copied
// ("meta" counts the watermarks), and how long it took.
type CopyReport struct {
	// From and To name the source and the target: a file's path, a
	// PostgreSQL URL without its password, with its schema.
	From, To string
	Tables   []CopiedTable
	Elapsed  time.Duration
}

// Copy copies the whole history of src into dst: every table of the
// schema, ids and all, so that every reference stays valid, and the
// watermarks of src's meta table (not its application, schema version
// or opening time). Both are stores this package opened, at the latest
// schema; Copy opens and closes nothing. It is for moving a SQLite
// monitor's history into PostgreSQL (`gsq monitor migrate`).
//
// It reads src in one snapshot (what a monitor still running on it
// writes after that is not copied) and writes dst in one transaction:
// a Copy that fails leaves dst as it was. dst must hold no history:
// otherwise Copy fails with an error that matches ErrNotEmpty. Once
// copied, the tables' row counts in dst are checked against src's, and
// PostgreSQL's id sequences are set past the copied ids. progress, when
// not nil, is called after every chunk of rows and at the end of every
// table.
//
// Memory is bounded: rows are streamed from src, and into dst through
// PostgreSQL's COPY, or in chunks of copyChunk rows into SQLite.
func Copy(ctx context.Context, dst, src Store, progress func(CopyProgress)) (CopyReport, error) {
	start := time.Now()
	to, ok := dst.(*db)
	from, ok2 := src.(*db)
	if !ok || !ok2 {
		return CopyReport{}, errors.New("store: Copy: both stores must be opened with store.Open")
	}
	if to == from || to.name == from.name {
		return CopyReport{}, &Error{Op: "copy", DB: to.name, Err: errors.New("the source and the target are the same database")}
	}
	if err := errors.Join(from.check(), to.check()); err != nil {
		return CopyReport{}, err
	}
	if progress == nil {
		progress = func(CopyProgress) {}
	}
	rtx, err := from.rdb.BeginTx(ctx, from.d.readTx())
	if err != nil {
		return CopyReport{}, from.fail("copy", err)
	}
	defer rtx.Rollback()

	to.mu.Lock()
	defer to.mu.Unlock()
	if err := to.check(); err != nil {
		return CopyReport{}, err
	}
	report := CopyReport{From: from.name, To: to.name}
	err = to.copyFrom(ctx, from, rtx, &report, progress)
	// The writer's state was loaded from a store with no history, if at
	// all: the next write loads it again, from the copy.
	to.w = writerState{}
	to.w.init()
	if err != nil {
		return CopyReport{}, err
	}
	report.Elapsed = time.Since(start)
	return report, nil
}

// copyFrom copies src's history, read in rtx, in one transaction of s.
func (s *db) copyFrom(ctx context.Context, src *db, rtx *sql.Tx, report *CopyReport, progress func(CopyProgress)) error {
	var minT, maxT sql.NullInt64
	if err := rtx.QueryRowContext(ctx, "SELECT min(t), max(t) FROM samples").Scan(&minT, &maxT); err != nil {
		return src.fail("copy", err)
	}
	// Before the copy's transaction begins: the partitions are made in
	// transactions of their own.
	if minT.Valid {
		if err := s.ensureSamplePartitions(ctx, minT.Int64, maxT.Int64); err != nil {
			return s.fail("copy", err)
		}
	}
	// One connection: PostgreSQL's COPY runs in the transaction open on it.
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return s.fail("copy", err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("copy", err)
	}
	defer tx.Rollback()
	if _, ok := s.d.(postgresDialect); ok {
		// Two copies into one target at once: the second waits here,
		// then finds the first one's history.
		if _, err := tx.ExecContext(ctx, "LOCK TABLE servers IN EXCLUSIVE MODE"); err != nil {
			return s.fail("copy", err)
		}
	}
	for _, table := range copyTables {
		var has bool
		if err := tx.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM "+table+")").Scan(&has); err != nil {
			return s.fail("copy", err)
		}
		if has {
			return &Error{Op: "copy", DB: s.name, Kind: ErrNotEmpty,
				Err: fmt.Errorf("its table %s has rows; copy into a new PostgreSQL schema (add ?search_path=NAME to the URL: gsq creates it) or an empty database", table)}
		}
	}
	for _, table := range copyTables {
		n, err := s.copyTable(ctx, conn, tx, rtx, table, progress)
		if err != nil {
			return s.fail("copy", fmt.Errorf("table %s: %w", table, err))
		}
		report.Tables = append(report.Tables, CopiedTable{Table: table, Rows: n})
	}
	n, err := s.copyMeta(ctx, tx, rtx)
	if err != nil {
		return s.fail("copy", fmt.Errorf("table meta: %w", err))
	}
	report.Tables = append(report.Tables, CopiedTable{Table: "meta", Rows: n})
	progress(CopyProgress{Table: "meta", Rows: n, Done: true})
	if err := s.verifyCopy(ctx, tx, rtx, report.Tables); err != nil {
		return err
	}
	if err := s.resetSequences(ctx, tx); err != nil {
		return s.fail("copy", err)
	}
	return s.fail("copy", tx.Commit())
}

// copyChunk is how many rows Copy reads between two progress reports,
// and at most how many it holds at a time on the way to SQLite (fewer for
// wide rows: chunkRows keeps a statement under the engine's parameter
// limit). Into PostgreSQL, rows go one at a time into the COPY protocol,
// which pgx sends in messages of some tens of kilobytes.
const copyChunk = 1000

// copyTable streams the rows of table from rtx into tx (on conn), column
// by column name, so that a column added to the schema comes along, and
// returns how many it copied.
func (s *db) copyTable(ctx context.Context, conn *sql.Conn, tx, rtx *sql.Tx, table string, progress func(CopyProgress)) (int64, error) {
	rows, err := rtx.QueryContext(ctx, "SELECT * FROM "+table)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	src := &copySource{rows: rows, vals: make([]any, len(cols)), ptrs: make([]any, len(cols)),
		progress: func(n int64) { progress(CopyProgress{Table: table, Rows: n}) }}
	for i := range src.vals {
		src.ptrs[i] = &src.vals[i]
	}
	if _, ok := s.d.(postgresDialect); ok {
		// COPY runs in the transaction open on the connection: tx's.
		err = conn.Raw(func(dc any) error {
			_, err := dc.(*stdlib.Conn).Conn().CopyFrom(ctx, pgx.Identifier{table}, cols, src)
			return err
		})
	} else {
		err = s.insertRows(ctx, tx, table, cols, src)
	}
	if err != nil {
		return src.n, err
	}
	progress(CopyProgress{Table: table, Rows: src.n, Done: true})
	return src.n, nil
}

// insertRows inserts the rows of src into table, chunkRows at a time.
func (s *db) insertRows(ctx context.Context, tx *sql.Tx, table string, cols []string, src *copySource) error {
	head := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ")"
	args := make([]any, 0, min(copyChunk, s.chunkRows(len(cols)))*len(cols))
	for src.Next() {
		args = append(args, src.vals...)
		if len(args) == cap(args) {
			if err := s.execRows(ctx, tx, head, "", len(cols), args); err != nil {
				return err
			}
			args = args[:0]
		}
	}
	if err := src.Err(); err != nil {
		return err
	}
	return s.execRows(ctx, tx, head, "", len(cols), args)
}

// copySource reads rows for Copy, one at a time, as pgx's CopyFrom reads
// them; vals holds the current row.
type copySource struct {
	rows       *sql.Rows
	vals, ptrs []any
	n          int64
	err        error
	progress   func(rows int64)
}

func (c *copySource) Next() bool {
	if !c.rows.Next() {
		return false
	}
	if c.err = c.rows.Scan(c.ptrs...); c.err != nil {
		return false
	}
	if c.n++; c.n%copyChunk == 0 {
		c.progress(c.n)
	}
	return true
}

func (c *copySource) Values() ([]any, error) { return c.vals, nil }

func (c *copySource) Err() error {
	if c.err != nil {
		return c.err
	}
	return c.rows.Err()
}

// copyMeta copies the watermarks and bookkeeping of src's meta table,
// all but the keys that are the target's own (metaOwn).
func (s *db) copyMeta(ctx context.Context, tx, rtx *sql.Tx) (int64, error) {
	meta, err := readMeta(ctx, rtx)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		if slices.Contains(metaOwn, k) {
			continue
		}
		if _, err := tx.ExecContext(ctx, s.q("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"), k, meta[k]); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// verifyCopy checks, before the copy commits, that every table holds in
// tx as many rows as in the source's snapshot rtx, and as many as were
// copied; for meta, that the target has the source's copied keys with
// their values.
func (s *db) verifyCopy(ctx context.Context, tx, rtx *sql.Tx, copied []CopiedTable) error {
	var bad []string
	for _, c := range copied {
		if c.Table == "meta" {
			continue
		}
		var want, got int64
		if err := rtx.QueryRowContext(ctx, "SELECT count(*) FROM "+c.Table).Scan(&want); err != nil {
			return s.fail("copy", err)
		}
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+c.Table).Scan(&got); err != nil {
			return s.fail("copy", err)
		}
		if got != want || c.Rows != want {
			bad = append(bad, fmt.Sprintf("%s: %d rows in the source, %d copied, %d in the target", c.Table, want, c.Rows, got))
		}
	}
	from, err := readMeta(ctx, rtx)
	if err != nil {
		return s.fail("copy", err)
	}
	to, err := readMeta(ctx, tx)
	if err != nil {
		return s.fail("copy", err)
	}
	for k, v := range from {
		if !slices.Contains(metaOwn, k) && to[k] != v {
			bad = append(bad, fmt.Sprintf("meta: %s is %q in the source, %q in the target", k, v, to[k]))
		}
	}
	if len(bad) > 0 {
		return &Error{Op: "copy", DB: s.name, Err: fmt.Errorf("the copy does not match its source, nothing was kept: %s", strings.Join(bad, "; "))}
	}
	return nil
}

// resetSequences sets PostgreSQL's id sequences of the copied tables past
// their largest id, so that the next row inserted gets a new one. SQLite
// takes the largest id plus one by itself.
func (s *db) resetSequences(ctx context.Context, tx *sql.Tx) error {
	if _, ok := s.d.(postgresDialect); !ok {
		return nil
	}
	var idTables []string
	err := eachRow(ctx, tx, "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'id' AND is_identity = 'YES'", nil, func(r *sql.Rows) error {
		var t string
		if err := r.Scan(&t); err != nil {
			return err
		}
		if slices.Contains(copyTables, t) {
			idTables = append(idTables, t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, t := range idTables {
		// setval of NULL (an empty table) does nothing.
		if _, err := tx.ExecContext(ctx, "SELECT setval(pg_get_serial_sequence($1, 'id'), max(id)) FROM "+t, t); err != nil {
			return fmt.Errorf("resetting the ids of %s: %w", t, err)
		}
	}
	return nil
}
