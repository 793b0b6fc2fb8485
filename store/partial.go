package store

import (
	"context"
	"database/sql"
	"time"
)

// partialMigration adds to each server's state row the marker of its
// open partial outage (issue 23): partial_at, the time (Unix ms) of the
// newest down observation of the judgment that recorded it, NULL when
// none is open. Every region's worker that holds a server judges it, and
// all of those that see the same partial outage try to record it: the
// marker makes one of them record it, once (RecordPartial).
var partialMigration = migration{stmts: []string{
	`{postgres}ALTER TABLE server_state ADD COLUMN partial_at BIGINT`,
}}

// A server's partial outage is one event, whichever region's worker
// records it and however many see it:
//
//   - It is open from its record until it ends: a judgment that sees no
//     vantage point down (EndPartial), or a committed transition (Commit
//     clears the marker: a down verdict makes it a full outage, and what
//     is partial after an up verdict is a new outage).
//   - RecordPartial records the event only when the server has no open
//     partial outage, setting the marker in the same fenced transaction
//     (a compare-and-set on the state row, which it locks): of two
//     regions that see the same partial outage, the second finds it open
//     and records nothing.
//   - EndPartial clears the marker only when it is not newer than the
//     observations of the judgment that ended it: a region that lags
//     behind, ending an outage that another region already saw end and
//     start again, does not end the new one.
//
// A partial outage that begins again after it ended (the route
// recovered, then broke again) is a new event.

// RecordPartial records a partial outage of e.Server, fenced on f, unless
// one is open: it reports whether it recorded one. e.At is the time of
// the newest down observation behind it.
func (c *Cluster) RecordPartial(ctx context.Context, f Fence, e Event) (bool, error) {
	tx, err := c.fenced(ctx, f)
	if err != nil {
		return false, c.s.fail("record partial", err)
	}
	defer tx.Rollback()
	if err := ensureState(ctx, tx, e.Server); err != nil {
		return false, c.s.fail("record partial", err)
	}
	res, err := tx.ExecContext(ctx, "UPDATE server_state SET partial_at = $2 WHERE server = $1 AND partial_at IS NULL", e.Server, e.At.UnixMilli())
	if err != nil {
		return false, c.s.fail("record partial", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, c.s.fail("record partial", err)
	}
	e.Kind = "partial"
	if err := insertEvent(ctx, tx, f, e); err != nil {
		return false, c.s.fail("record partial", err)
	}
	if err := tx.Commit(); err != nil {
		return false, c.s.fail("record partial", err)
	}
	return true, nil
}

// EndPartial ends the open partial outage of server, fenced on f, if it
// was recorded no later than at, the newest observation of the judgment
// that saw it end. It reports whether one ended.
func (c *Cluster) EndPartial(ctx context.Context, f Fence, server string, at time.Time) (bool, error) {
	tx, err := c.fenced(ctx, f)
	if err != nil {
		return false, c.s.fail("end partial", err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "UPDATE server_state SET partial_at = NULL WHERE server = $1 AND partial_at <= $2", server, at.UnixMilli())
	if err != nil {
		return false, c.s.fail("end partial", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, c.s.fail("end partial", err)
	}
	return n > 0, c.s.fail("end partial", tx.Commit())
}

// ensureState adds a server's state row, unknown, unless it has one.
func ensureState(ctx context.Context, tx *sql.Tx, server string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO server_state (server, state, seq, since, region, views)
		VALUES ($1, 'unknown', 0, $2, '', '') ON CONFLICT (server) DO NOTHING`, server, int64(-1)<<62)
	return err
}
