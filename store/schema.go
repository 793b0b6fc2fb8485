package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
)

// application marks a database as gsq's in its meta table (and, in
// SQLite, in the file header's application_id).
const application = "gsq-monitor"

// sqliteApplicationID is "gsqM", the SQLite header's application_id of a
// gsq monitor database.
const sqliteApplicationID = 0x6773714D

// migrations are the schema's versions: migrations[i] brings a database
// from version i to version i+1, in one transaction. Never change one that
// has been released; add a new one.
//
// Times are Unix seconds (bucket starts for rollups); strings that repeat
// (maps, versions, player names) are interned. Tables read by server and
// time are clustered on (server, t); raw samples are clustered on
// (t, server) so that a poll round appends to one place instead of
// touching a page per server, and rollups are written in batches.
var migrations = []migration{
	{stmts: []string{
		`CREATE TABLE meta (
			key   TEXT NOT NULL PRIMARY KEY,
			value TEXT NOT NULL
		){norowid}`,
		`CREATE TABLE servers (
			id        {id},
			name      TEXT NOT NULL UNIQUE,
			target    TEXT NOT NULL,
			protocol  TEXT NOT NULL,
			labels    TEXT NOT NULL,
			announced TEXT NOT NULL,
			record    INTEGER,
			record_at BIGINT
		)`,
		// strings interns maps and versions; seen is the last day (Unix
		// days) a sample used it, for garbage collection.
		`CREATE TABLE strings (
			id    {id},
			value TEXT NOT NULL UNIQUE,
			seen  INTEGER NOT NULL
		)`,
		// samples: NULL is "not reported", and every figure of a down poll.
		`CREATE TABLE samples (
			t           BIGINT NOT NULL,
			server      INTEGER NOT NULL,
			up          SMALLINT NOT NULL,
			players     INTEGER,
			max_players INTEGER,
			bots        INTEGER,
			map         BIGINT,
			version     BIGINT,
			ping        INTEGER,
			PRIMARY KEY (t, server)
		){norowid}`,
		rollupTable("rollup_minute"),
		rollupTable("rollup_hour"),
		rollupTable("rollup_day"),
		// PostgreSQL's planner reads a time range of every server's
		// rollups by scanning the whole table rather than seeking to each
		// server; a BRIN index on the time (rollups are appended in time
		// order) lets it read only the pages of that range, for a few
		// kilobytes.
		`{postgres}CREATE INDEX rollup_minute_t ON rollup_minute USING brin (t)`,
		`{postgres}CREATE INDEX rollup_hour_t ON rollup_hour USING brin (t)`,
		`CREATE TABLE maps (
			server INTEGER NOT NULL,
			t      BIGINT NOT NULL,
			map    BIGINT NOT NULL,
			PRIMARY KEY (server, t)
		){norowid}`,
		`CREATE TABLE players (
			id   {id},
			name TEXT NOT NULL UNIQUE
		)`,
		`CREATE TABLE sessions (
			id        {id},
			server    INTEGER NOT NULL,
			player    BIGINT NOT NULL,
			joined_at BIGINT NOT NULL,
			left_at   BIGINT,
			score     BIGINT NOT NULL
		)`,
		`CREATE INDEX sessions_server ON sessions (server, left_at)`,
		`CREATE INDEX sessions_player ON sessions (player, left_at)`,
		// observed is the last poll of each server that listed its
		// players: where open sessions resume after a restart.
		`CREATE TABLE observed (
			server INTEGER NOT NULL PRIMARY KEY,
			t      BIGINT NOT NULL
		){norowid}`,
	}},
	// Version 2: the newest sessions of every server, or of one, are
	// read from the join time down and the reading stops at the limit
	// (recentSessions); left_at in the index tells, without reading the
	// row, whether a session that joined earlier was still on.
	{stmts: []string{
		`CREATE INDEX sessions_joined ON sessions (joined_at, id, left_at)`,
		`CREATE INDEX sessions_server_joined ON sessions (server, joined_at, id, left_at)`,
	}},
	// Version 3: the monitor's alerts across restarts (AlertJournal):
	// what each server's rules announced and when (their cooldowns), by
	// server name, and the alerts raised and not yet delivered, by
	// webhook name, in the order they were raised.
	{stmts: []string{
		`CREATE TABLE alert_state (
			server TEXT NOT NULL PRIMARY KEY,
			state  TEXT NOT NULL
		){norowid}`,
		`CREATE TABLE alert_outbox (
			id      {id},
			webhook TEXT NOT NULL,
			t       BIGINT NOT NULL,
			alert   TEXT NOT NULL
		)`,
	}},
	// Version 4: incidents (store/incidents.go) and maintenance windows
	// set through the API (store/maintenance.go).
	{stmts: incidentSchema},
	clusterMigration,
	vantageMigration,
	sampleKeyMigration,
	fenceTimeMigration,
	partialMigration,
	sessionIndexMigration,
	fenceMicroMigration,
}

// rollupTable is the schema of a rollup level: per bucket, the number of
// polls, of polls down, and of polls up without a player count, and the
// min, max and sum of the player counts and the largest max_players.
func rollupTable(name string) string {
	return `CREATE TABLE ` + name + ` (
			server      INTEGER NOT NULL,
			t           BIGINT NOT NULL,
			polls       INTEGER NOT NULL,
			down        INTEGER NOT NULL,
			nocount     INTEGER NOT NULL,
			min_players INTEGER,
			max_players INTEGER,
			sum_players BIGINT,
			capacity    INTEGER,
			PRIMARY KEY (server, t)
		){norowid}`
}

// migration is one version of the schema: its statements, then, when
// set, run, for what static statements cannot say (DDL that depends on
// the rows, or differs between the engines).
type migration struct {
	stmts []string
	run   func(ctx context.Context, tx *sql.Tx, d dialect) error
}

// migrate brings the schema to the latest version, one transaction per
// version. Each transaction reads the version it starts from, so that two
// processes opening the same new database migrate it once.
func (s *db) migrate(ctx context.Context) error {
	for {
		done, err := s.migrateStep(ctx)
		if err != nil {
			return s.fail("open", err)
		}
		if done {
			return nil
		}
	}
}

func (s *db) migrateStep(ctx context.Context) (done bool, err error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	if err := s.d.beginMigration(ctx, tx); err != nil {
		return false, err
	}
	v := 0
	if ok, err := s.d.hasTable(ctx, tx, "meta"); err != nil {
		return false, err
	} else if ok {
		meta, err := readMeta(ctx, tx)
		if err != nil {
			return false, err
		}
		if v, err = storedVersion(meta); err != nil {
			return false, &Error{Op: "open", DB: s.name, Kind: ErrForeign, Err: err}
		}
	}
	latest := len(s.opts.migrations)
	if v > latest {
		return false, &Error{Op: "open", DB: s.name, Kind: ErrNewerSchema,
			Err: fmt.Errorf("version %d, this gsq knows up to %d", v, latest)}
	}
	if v == latest {
		return true, nil
	}
	for _, stmt := range s.opts.migrations[v].stmts {
		if stmt = s.d.ddl(stmt); stmt == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return false, fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	if run := s.opts.migrations[v].run; run != nil {
		if err := run(ctx, tx, s.d); err != nil {
			return false, fmt.Errorf("migrating the schema to version %d: %w", v+1, err)
		}
	}
	for k, val := range map[string]string{"application": application, "schema_version": strconv.Itoa(v + 1)} {
		if _, err := tx.ExecContext(ctx, s.q("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"), k, val); err != nil {
			return false, err
		}
	}
	if err := s.d.afterMigrate(ctx, tx, v+1); err != nil {
		return false, err
	}
	return false, tx.Commit()
}

// storedVersion reads a database's schema version from its meta table.
func storedVersion(meta map[string]string) (int, error) {
	if meta["application"] != application {
		return 0, fmt.Errorf("its meta table is not gsq's (application %q)", meta["application"])
	}
	v, err := strconv.Atoi(meta["schema_version"])
	if err != nil {
		return 0, fmt.Errorf("bad schema version %q", meta["schema_version"])
	}
	return v, nil
}

// opened notes when the database was last opened. It is also the first
// write: a database the store may read but not write fails here, at
// Open, rather than at the first poll round.
func (s *db) opened(ctx context.Context) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("open", err)
	}
	defer tx.Rollback()
	if err := s.setMeta(ctx, tx, map[string]int64{"opened_at": s.opts.now().Unix()}); err != nil {
		return s.fail("open", err)
	}
	return s.fail("open", tx.Commit())
}
