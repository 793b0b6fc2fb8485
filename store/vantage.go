package store

// vantageMigration adds to each raw sample the vantage point that took
// it (issue 23): the region of the fleet worker that polled, so that
// `gsq monitor export` tells the regions' samples apart; NULL for a
// sample of a single process. The samples stayed keyed (t, server) in
// this version, two regions that polled a server within the same second
// keeping one row; the next, sampleKeyMigration, keys them by vantage
// too.
var vantageMigration = migration{stmts: []string{
	`ALTER TABLE samples ADD COLUMN vantage TEXT`,
}}
