// Package store keeps the history of `gsq monitor`: one interface,
// [Store], with an embedded SQLite implementation (the default, pure Go,
// no cgo) and a PostgreSQL one behind it, the same schema and the same
// test suite for both. [Open] chooses by the DSN: a path or "file:" URI
// is SQLite, a "postgres://" URL is PostgreSQL.
//
// # What is stored
//
//   - Raw samples: one per poll of a server: up, players, max players,
//     bots, map, version, ping. Texts that repeat (maps, versions, player
//     names) are interned; times are Unix seconds.
//   - Rollups per minute, hour and day: per bucket, the polls, the polls
//     down, and the min, sum and max of the player counts and the largest
//     max_players, so that any bucket of a coarser level is exactly the sum
//     of the finer ones. Buckets are aligned to the Unix epoch: days run
//     from 00:00 UTC.
//   - Map changes, the all-time record of each server (peaks of the last
//     24 hours are read from the history), the name it last announced.
//   - Player sessions: who was on a server from when to when, by player
//     name, with the last score. The store does not decide who came and
//     went: it opens and ends sessions as each sample's Sessions say,
//     which are the monitor's Tracker's join and leave events, so that the
//     page, the alerts and the history agree. Several players of one name
//     are as many sessions. A server no longer monitored (left out of
//     SyncServers) has its sessions ended when its players were last
//     listed; [Store.Present] gives a monitor that starts again the open
//     ones to carry on.
//   - The monitor's alerts ([AlertJournal]): what each server's alert
//     rules last announced, and the alerts not yet delivered, so that a
//     restart neither repeats nor loses one.
//
// # Levels and retention
//
// [DefaultRetention] keeps raw samples 48 hours, minute rollups 14 days,
// hour rollups a year and day rollups forever; sessions 90 days after
// they end, map changes 30 days. [Store.Maintain], called by the monitor
// every minute or so, rolls minutes up ten at a time, hours and days as
// they end, deletes raw samples an hour at a time (in PostgreSQL, where
// they are partitioned by day, drops a day's partition once the whole
// day is past retention) and the rest a day at a time, and never
// deletes what it has not rolled up. [Store.History]
// reads each stretch from the coarsest level that has it and whose
// buckets divide the step, and the part not rolled up yet from the finer
// levels, so it is exact whatever the step.
//
// # Size
//
// A SQLite database stops growing once retention deletes as much as the
// polls add: pages retention frees are reused, and an incremental vacuum
// gives them back to the file system when a quarter of the file is free.
// Measured with bench/storesim (a simulated clock, 50 servers polled
// every 30 s, default retention): 517 KB per server after 10 days, 710 KB
// at 20 days once the minute level is full, then 650 bytes per server a
// day (the hour level) until the year is full, and flat at 946 KB per
// server from then on: the day level's 25 bytes a day fit in the pages
// retention frees. The WAL beside it is bounded (32 MiB after a
// checkpoint). Player sessions add about 108 bytes each. A server can
// make the store keep at most its [Budget] an hour: 4.4 MB a day in
// SQLite at worst, however it answers. PostgreSQL takes
// about four times the space for the same rows. docs/store.md has the
// figures and how to repeat them.
//
// # Durability
//
// A Write is one transaction: a kill -9 loses at most the round being
// written (and up to five minutes of open sessions' scores), and a
// restart resumes, open sessions included. SQLite runs in WAL mode with
// synchronous=NORMAL: committed rounds survive a crash of the process; a
// power loss may roll back the last ones but never damages the file. A
// file that is not a gsq database, a damaged one, a full disk or a
// read-only path is an error naming the file ([ErrForeign], [ErrCorrupt],
// [ErrFull], [ErrReadOnly]), never a reset. So is a SQLite file deleted,
// moved or replaced while the store has it open ([ErrReplaced]): before
// each write and at Close, the store compares the file at its path with
// the one it opened (device and inode), and refuses to go on writing
// into a file nobody will see again. [Store.Check] runs the engine's
// integrity check and the store's own.
//
// # Choosing PostgreSQL
//
// SQLite suits one monitor with up to some thousands of servers: nothing
// to run, one file to back up. Choose PostgreSQL to keep the history on a
// server already backed up and watched, to query it from Grafana or SQL,
// or when the database must outlive the machine. The store uses the
// schema the DSN's search_path names first (default "gsq"), creating it;
// a schema holding other tables is refused. Several processes may read a
// database; one writes it.
package store
