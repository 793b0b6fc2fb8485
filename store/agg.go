package store

import (
	"database/sql"
	"time"
)

// agg is the sum of buckets or samples: what a rollup row keeps.
type agg struct {
	polls, down, nocount int64
	min, max             sql.NullInt64
	sum                  int64
	capacity             sql.NullInt64
}

// aggColumns is the SQL that computes an agg from the rows of a level's
// table, in the order scanAgg reads. Sums are cast because PostgreSQL's
// sum of a BIGINT is a NUMERIC.
//
// A raw sample is a poll: a server that a fleet polls from several
// vantage points has a sample of each in a slot, and the rollups (so
// history, uptime and the budget's figures) count every vantage's poll,
// the uptime being the share of all of them that found it up.
func aggColumns(l Level) string {
	if l == LevelRaw {
		return `count(*), CAST(sum(1 - up) AS BIGINT),
			CAST(sum(CASE WHEN up = 1 AND players IS NULL THEN 1 ELSE 0 END) AS BIGINT),
			min(players), max(players), CAST(sum(players) AS BIGINT), max(max_players)`
	}
	return `CAST(sum(polls) AS BIGINT), CAST(sum(down) AS BIGINT), CAST(sum(nocount) AS BIGINT),
		min(min_players), max(max_players), CAST(sum(sum_players) AS BIGINT), max(capacity)`
}

// dest returns dest followed by where the agg's columns scan into.
func (a *agg) dest(dest ...any) []any {
	return append(dest, nullInt{&a.polls}, nullInt{&a.down}, nullInt{&a.nocount}, &a.min, &a.max, nullInt{&a.sum}, &a.capacity)
}

// nullInt scans a NULL (the sum of no rows) as 0.
type nullInt struct{ p *int64 }

func (n nullInt) Scan(v any) error {
	var x sql.NullInt64
	if err := x.Scan(v); err != nil {
		return err
	}
	*n.p = x.Int64
	return nil
}

func minNull(a, b sql.NullInt64) sql.NullInt64 {
	if !a.Valid || (b.Valid && b.Int64 < a.Int64) {
		return b
	}
	return a
}

func maxNull(a, b sql.NullInt64) sql.NullInt64 {
	if !a.Valid || (b.Valid && b.Int64 > a.Int64) {
		return b
	}
	return a
}

func (a *agg) add(b agg) {
	a.polls += b.polls
	a.down += b.down
	a.nocount += b.nocount
	a.min = minNull(a.min, b.min)
	a.max = maxNull(a.max, b.max)
	a.sum += b.sum
	a.capacity = maxNull(a.capacity, b.capacity)
}

// leaveOut takes b's polls, a part of a's, off a's counts of polls.
func (a *agg) leaveOut(b agg) {
	a.polls = max(0, a.polls-b.polls)
	a.down = max(0, min(a.polls, a.down-b.down))
	a.nocount = max(0, a.nocount-b.nocount)
}

func (a agg) uptime() float64 {
	if a.polls == 0 {
		return 0
	}
	return float64(a.polls-a.down) / float64(a.polls)
}

// point is the agg as a bucket of history starting at t.
func (a agg) point(t time.Time) Point {
	p := Point{Time: t, Samples: int(a.polls), Uptime: a.uptime(), Up: a.polls > a.down}
	if !p.Up {
		return p
	}
	p.MinPlayers, p.MaxPlayers, p.AvgPlayers, p.Capacity = -1, -1, -1, -1
	if counted := a.polls - a.down - a.nocount; counted > 0 && a.min.Valid {
		p.MinPlayers = int(a.min.Int64)
		p.MaxPlayers = int(a.max.Int64)
		p.AvgPlayers = float64(a.sum) / float64(counted)
	}
	if a.capacity.Valid {
		p.Capacity = int(a.capacity.Int64)
	}
	return p
}
