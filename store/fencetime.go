package store

// fenceTimeMigration records when each shard's newest lease took it
// (cluster_fence.taken_at, Unix seconds of PostgreSQL's clock), so that
// fencing refuses what a stale owner polled after the takeover, not what
// it polled before (issue 23): a worker hands a shard over, or is
// paused, with samples polled under its then valid lease still waiting
// to be written. Those are its owner's polls and are kept; a sample of a
// slot at or after the takeover is refused, and the stale owner drops
// the shard. Slots are the workers' clocks, taken_at PostgreSQL's: a
// skew between them moves the line by as much.
var fenceTimeMigration = migration{stmts: []string{
	`{postgres}ALTER TABLE cluster_fence ADD COLUMN taken_at BIGINT NOT NULL DEFAULT 0`,
}}

// fenceMicroMigration (schema version 11) makes taken_at Unix microseconds (it was whole
// seconds, rounded down): a worker that polls a slot and hands the shard
// over within the same second kept none of that poll's sample, refused
// as if polled after the takeover, while the taker, seeing the slot
// polled, left it to the next (a sample lost; CI's fleet run saw five).
// Slots are compared to it to the microsecond, PostgreSQL's precision.
var fenceMicroMigration = migration{stmts: []string{
	`{postgres}UPDATE cluster_fence SET taken_at = taken_at * 1000000`,
}}
