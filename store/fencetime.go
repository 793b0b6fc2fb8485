package store

// fenceTimeMigration records when each shard's newest lease took it
// (cluster_fence.taken_at, Unix seconds of PostgreSQL's clock), so that
// fencing refuses what a stale owner polled after the takeover, not what
// it polled before (issue 23): a worker hands a shard over, or is
// paused, with samples polled under its then valid lease still waiting
// to be written. Those are its owner's polls and are kept; a sample of a
// slot at or after the takeover is refused, and the stale owner drops
// the shard. Both are whole seconds, taken_at rounded down: a sample of
// the second of the takeover is refused. Slots are the workers' clocks,
// taken_at PostgreSQL's: a skew between them moves the line by as much.
var fenceTimeMigration = migration{stmts: []string{
	`{postgres}ALTER TABLE cluster_fence ADD COLUMN taken_at BIGINT NOT NULL DEFAULT 0`,
}}
