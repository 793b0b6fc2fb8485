package store

import (
	"context"
	"database/sql"
)

// sessionIndexMigration (schema version 10) makes the indexes of the
// sessions smaller (issue 19: the worst a server can make the store
// keep in a day).
//
//   - sessions_server_joined (server, joined_at, id, left_at) and
//     sessions_regulars (server, joined_at, player, left_at) become one
//     index, sessions_server_joined: (server, joined_at, id, player,
//     left_at) in SQLite, (server, joined_at, id) INCLUDE (player,
//     left_at) in PostgreSQL. It reads a server's newest sessions in
//     order, and adds up its regulars, from the index alone, as the two
//     did.
//   - sessions_player (player, left_at) becomes (player): whoever reads
//     a player's sessions reads all of them (the player's page, the
//     search, retention's orphaned players). In PostgreSQL equal keys
//     share one index entry (B-tree deduplication), so a player costs
//     an entry, not each of their sessions.
var sessionIndexMigration = migration{run: func(ctx context.Context, tx *sql.Tx, d dialect) error {
	joined := `CREATE INDEX sessions_server_joined ON sessions (server, joined_at, id, player, left_at)`
	if _, ok := d.(postgresDialect); ok {
		joined = `CREATE INDEX sessions_server_joined ON sessions (server, joined_at, id) INCLUDE (player, left_at)`
	}
	for _, stmt := range []string{
		`DROP INDEX sessions_regulars`,
		`DROP INDEX sessions_server_joined`,
		joined,
		`DROP INDEX sessions_player`,
		`CREATE INDEX sessions_player ON sessions (player)`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}}
