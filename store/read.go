package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"
)

// maxPoints bounds the buckets of one History call.
const maxPoints = 100_000

// read runs fn in a read-only transaction: one snapshot of the database.
func (s *db) read(ctx context.Context, op string, fn func(tx *sql.Tx) error) error {
	if err := s.check(); err != nil {
		return err
	}
	tx, err := s.rdb.BeginTx(ctx, s.d.readTx())
	if err != nil {
		return s.fail(op, err)
	}
	defer tx.Rollback()
	return s.fail(op, fn(tx))
}

// serverID looks up a server by name.
func (s *db) serverID(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, s.q("SELECT id FROM servers WHERE name = ?"), clean(name, maxNameText)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, serverError(name)
	}
	return id, err
}

func (s *db) readMarks(ctx context.Context, tx *sql.Tx) (marks, error) {
	meta, err := readMeta(ctx, tx)
	return marksFrom(meta), err
}

func (s *db) History(ctx context.Context, server string, from, to time.Time, step time.Duration) ([]Point, error) {
	if step < time.Second || step%time.Second != 0 {
		return nil, &Error{Op: "history", DB: s.name, Err: fmt.Errorf("step %v is not a whole number of seconds", step)}
	}
	size := int64(step / time.Second)
	start, end := floorTo(from.Unix(), size), ceilUnix(to)
	if end <= start {
		return []Point{}, s.check()
	}
	n := (end - start + size - 1) / size
	if n > maxPoints {
		return nil, &Error{Op: "history", DB: s.name, Err: fmt.Errorf("%d buckets of %v, more than %d: take a longer step", n, step, maxPoints)}
	}
	aggs := make([]agg, n)
	err := s.read(ctx, "history", func(tx *sql.Tx) error {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return err
		}
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		return s.eachBucket(ctx, tx, m, []int64{id}, start, end, size, m.historyLevel(start, size), func(_ int64, b bucket) error {
			aggs[b.i] = b.a
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	points := make([]Point, n)
	for i, a := range aggs {
		points[i] = a.point(time.Unix(start+int64(i)*size, 0).UTC())
	}
	return points, nil
}

// aggregate sums a server's history over [from, to), each stretch from
// the coarsest level that has it.
func (s *db) aggregate(ctx context.Context, tx *sql.Tx, m marks, id, from, to int64) (agg, error) {
	var total agg
	for _, seg := range m.segments(from, to, LevelDay) {
		var a agg
		query := "SELECT " + aggColumns(seg.level) + " FROM " + tables[seg.level] + " WHERE server = ? AND t >= ? AND t < ?"
		if err := tx.QueryRowContext(ctx, s.q(query), id, seg.from, seg.to).Scan(a.dest()...); err != nil {
			return total, err
		}
		total.add(a)
	}
	return total, nil
}

func (s *db) Uptime(ctx context.Context, server string, from, to time.Time) (float64, int, error) {
	var a agg
	err := s.read(ctx, "uptime", func(tx *sql.Tx) error {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return err
		}
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		if a, err = s.aggregate(ctx, tx, m, id, from.Unix(), ceilUnix(to)); err != nil {
			return err
		}
		maint, err := s.maintenancePolls(ctx, tx, m, id, from.Unix(), ceilUnix(to))
		a.leaveOut(maint[id])
		return err
	})
	return a.uptime(), int(a.polls), err
}

func (s *db) UptimeAll(ctx context.Context, from, to time.Time) (map[string]UptimeStat, error) {
	byID := make(map[int64]*agg)
	names := make(map[int64]string)
	err := s.read(ctx, "uptime", func(tx *sql.Tx) error {
		err := eachRow(ctx, tx, "SELECT id, name FROM servers", nil, func(r *sql.Rows) error {
			var id int64
			var name string
			if err := r.Scan(&id, &name); err != nil {
				return err
			}
			names[id] = name
			byID[id] = &agg{}
			return nil
		})
		if err != nil {
			return err
		}
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		for _, seg := range m.segments(from.Unix(), ceilUnix(to), LevelDay) {
			query := "SELECT server, " + aggColumns(seg.level) + " FROM " + tables[seg.level] + " WHERE " +
				allServers(seg.level) + "t >= ? AND t < ? GROUP BY server"
			err := eachRow(ctx, tx, s.q(query), []any{seg.from, seg.to}, func(r *sql.Rows) error {
				var id int64
				var a agg
				if err := r.Scan(a.dest(&id)...); err != nil {
					return err
				}
				if total := byID[id]; total != nil {
					total.add(a)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		maint, err := s.maintenancePolls(ctx, tx, m, 0, from.Unix(), ceilUnix(to))
		for id, a := range maint {
			if total := byID[id]; total != nil {
				total.leaveOut(a)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	stats := make(map[string]UptimeStat, len(names))
	for id, name := range names {
		a := byID[id]
		stats[name] = UptimeStat{Fraction: a.uptime(), Polls: int(a.polls)}
	}
	return stats, nil
}

// allServers is the condition that reads a level's rows of every server
// by seeking to each server's (the rollups are clustered by server);
// raw samples are clustered by time and need none.
func allServers(l Level) string {
	if l == LevelRaw {
		return ""
	}
	return "server IN (SELECT id FROM servers) AND "
}

func (s *db) Records(ctx context.Context, server string) (Records, error) {
	var rec Records
	now := s.opts.now()
	err := s.read(ctx, "records", func(tx *sql.Tx) error {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return err
		}
		var record, recordAt sql.NullInt64
		if err := tx.QueryRowContext(ctx, s.q("SELECT record, record_at FROM servers WHERE id = ?"), id).Scan(&record, &recordAt); err != nil {
			return err
		}
		if record.Valid {
			rec.AllTime, rec.AllTimeAt = int(record.Int64), time.Unix(recordAt.Int64, 0).UTC()
		}
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		peak, peakAt := int64(-1), int64(0)
		for _, seg := range m.segments(now.Add(-24*time.Hour).Unix(), ceilUnix(now), LevelDay) {
			col := "max_players"
			if seg.level == LevelRaw {
				col = "players"
			}
			query := "SELECT " + col + ", t FROM " + tables[seg.level] + " WHERE server = ? AND t >= ? AND t < ? AND " +
				col + " IS NOT NULL ORDER BY " + col + " DESC, t DESC LIMIT 1"
			var n, t int64
			err := tx.QueryRowContext(ctx, s.q(query), id, seg.from, seg.to).Scan(&n, &t)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if n > peak || (n == peak && t > peakAt) {
				peak, peakAt = n, t
			}
		}
		if peak >= 0 {
			rec.Peak24h, rec.Peak24hAt = int(peak), time.Unix(peakAt, 0).UTC()
		}
		return nil
	})
	return rec, err
}

func (s *db) Maps(ctx context.Context, server string, from, to time.Time) ([]MapChange, error) {
	list := []MapChange{}
	err := s.read(ctx, "maps", func(tx *sql.Tx) error {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return err
		}
		return eachRow(ctx, tx, s.q(`SELECT m.t, st.value FROM maps m JOIN strings st ON st.id = m.map
				WHERE m.server = ? AND m.t >= ? AND m.t < ? ORDER BY m.t`), []any{id, from.Unix(), ceilUnix(to)},
			func(r *sql.Rows) error {
				var c MapChange
				var t int64
				if err := r.Scan(&t, &c.Map); err != nil {
					return err
				}
				c.Time = time.Unix(t, 0).UTC()
				list = append(list, c)
				return nil
			})
	})
	return list, err
}

// sessionColumns and sessionFrom read Sessions.
const (
	sessionColumns = "sv.name, p.name, x.joined_at, x.left_at, x.score"
	sessionFrom    = " FROM sessions x JOIN servers sv ON sv.id = x.server JOIN players p ON p.id = x.player"
)

func scanSession(r *sql.Rows) (Session, error) {
	var x Session
	var joined int64
	var left sql.NullInt64
	if err := r.Scan(&x.Server, &x.Player, &joined, &left, &x.LastScore); err != nil {
		return x, err
	}
	x.Joined = time.Unix(joined, 0).UTC()
	if left.Valid {
		l := time.Unix(left.Int64, 0).UTC()
		x.Left = &l
	}
	return x, nil
}

// sessionWhere is the condition that selects q's sessions.
func (s *db) sessionWhere(ctx context.Context, tx *sql.Tx, q SessionQuery) (string, []any, error) {
	to := q.To
	if to.IsZero() {
		to = s.opts.now()
	}
	where := " WHERE (x.left_at IS NULL OR x.left_at > ?) AND x.joined_at < ?"
	args := []any{q.From.Unix(), ceilUnix(to)}
	if q.Server != "" {
		id, err := s.serverID(ctx, tx, q.Server)
		if err != nil {
			return "", nil, err
		}
		where += " AND x.server = ?"
		args = append(args, id)
	}
	if q.Player != "" {
		where += " AND x.player = (SELECT id FROM players WHERE name = ?)"
		args = append(args, clean(q.Player, maxText))
	}
	return where, args, nil
}

func (s *db) Sessions(ctx context.Context, q SessionQuery) ([]Session, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 1000
	}
	list := []Session{}
	err := s.read(ctx, "sessions", func(tx *sql.Tx) error {
		if q.Player == "" {
			ids, err := s.recentSessions(ctx, tx, q, limit)
			if err != nil || len(ids) == 0 {
				return err
			}
			args := make([]any, len(ids))
			for i, id := range ids {
				args[i] = id
			}
			query := "SELECT " + sessionColumns + sessionFrom + " WHERE x.id IN " + inList(len(ids)) + " ORDER BY x.joined_at DESC, x.id DESC"
			return eachRow(ctx, tx, s.q(query), args, func(r *sql.Rows) error {
				x, err := scanSession(r)
				list = append(list, x)
				return err
			})
		}
		// A player's sessions are few: the player's index finds them all.
		where, args, err := s.sessionWhere(ctx, tx, q)
		if err != nil {
			return err
		}
		query := "SELECT " + sessionColumns + sessionFrom + where + " ORDER BY x.joined_at DESC, x.id DESC LIMIT ?"
		return eachRow(ctx, tx, s.q(query), append(args, limit), func(r *sql.Rows) error {
			x, err := scanSession(r)
			list = append(list, x)
			return err
		})
	})
	return list, err
}

// probeSessions bounds what recentSessions reads through the servers'
// index of session ends, for each session asked, before it turns to the
// index of joins instead; maxProbe bounds it whatever the limit.
const (
	probeSessions = 100
	maxProbe      = 10_000
)

// recentSessions returns the ids of the newest sessions of every server,
// or of q.Server, that overlap [q.From, q.To), newest first, at most
// limit. Each step reads an index range that stops at the limit, so the
// cost does not grow with the sessions kept (2.5 million in a second, as
// a filter over every row, before):
//
//  1. the sessions that joined after From and before To, newest first,
//     from the index of joins; when there are limit of them, they are
//     the answer;
//  2. then those that joined at or before From and were still on: the
//     open ones, from the servers' index of session ends;
//  3. and the closed ones that ended after From: read from the index of
//     session ends when it holds fewer than probeSessions of those for
//     each session asked, 10,000 at most (From is recent, or in the
//     future), otherwise from the index of joins down from From (a few
//     hours of joins hold the sessions that were on at From).
func (s *db) recentSessions(ctx context.Context, tx *sql.Tx, q SessionQuery, limit int) ([]int64, error) {
	to := q.To
	if to.IsZero() {
		to = s.opts.now()
	}
	from, end := q.From.Unix(), ceilUnix(to)
	if end <= from {
		return nil, nil
	}
	joined, ended := "sessions_joined", "sessions_server"
	byJoin, byEnd := "", "x.server IN (SELECT id FROM servers) AND "
	var server []any
	if q.Server != "" {
		id, err := s.serverID(ctx, tx, q.Server)
		if err != nil {
			return nil, err
		}
		joined = "sessions_server_joined"
		byJoin, byEnd = "x.server = ? AND ", "x.server = ? AND "
		server = []any{id}
	}
	type found struct{ id, joined int64 }
	var list []found
	read := func(index, where string, args ...any) error {
		query := "SELECT x.id, x.joined_at FROM sessions x" + s.d.indexedBy(index) + " WHERE " + where +
			" ORDER BY x.joined_at DESC, x.id DESC LIMIT ?"
		args = append(append(slices.Clone(server), args...), limit)
		return eachRow(ctx, tx, s.q(query), args, func(r *sql.Rows) error {
			var f found
			if err := r.Scan(&f.id, &f.joined); err != nil {
				return err
			}
			list = append(list, f)
			return nil
		})
	}
	newest := func() []int64 {
		slices.SortFunc(list, func(a, b found) int { return cmp.Or(cmp.Compare(b.joined, a.joined), cmp.Compare(b.id, a.id)) })
		ids := make([]int64, min(limit, len(list)))
		for i := range ids {
			ids[i] = list[i].id
		}
		return ids
	}
	if err := read(joined, byJoin+"x.joined_at > ? AND x.joined_at < ?", from, end); err != nil || len(list) >= limit {
		return newest(), err
	}
	// The unary + keeps SQLite from reading joined_at through an index.
	if err := read(ended, byEnd+"x.left_at IS NULL AND +x.joined_at <= ?", from); err != nil {
		return nil, err
	}
	var ends int
	probe := min(maxProbe, probeSessions*limit)
	err := tx.QueryRowContext(ctx, s.q("SELECT count(*) FROM (SELECT 1 FROM sessions x"+s.d.indexedBy(ended)+
		" WHERE "+byEnd+"x.left_at > ? LIMIT ?) e"), append(slices.Clone(server), from, probe)...).Scan(&ends)
	if err != nil {
		return nil, err
	}
	if ends < probe {
		err = read(ended, byEnd+"x.left_at > ? AND +x.joined_at <= ?", from, from)
	} else {
		err = read(joined, byJoin+"x.joined_at <= ? AND x.left_at > ?", from, from)
	}
	if err != nil {
		return nil, err
	}
	return newest(), nil
}

func (s *db) OnlineAt(ctx context.Context, server string, at time.Time) ([]Session, error) {
	list := []Session{}
	err := s.read(ctx, "online", func(tx *sql.Tx) error {
		id, err := s.serverID(ctx, tx, server)
		if err != nil {
			return err
		}
		query := "SELECT " + sessionColumns + sessionFrom +
			" WHERE x.server = ? AND (x.left_at IS NULL OR x.left_at > ?) AND x.joined_at <= ? ORDER BY x.joined_at, x.id"
		return eachRow(ctx, tx, s.q(query), []any{id, at.Unix(), at.Unix()}, func(r *sql.Rows) error {
			x, err := scanSession(r)
			list = append(list, x)
			return err
		})
	})
	return list, err
}

func (s *db) PlayTime(ctx context.Context, q SessionQuery) (time.Duration, int, error) {
	var total int64
	var n int
	now := s.opts.now().Unix()
	err := s.read(ctx, "play time", func(tx *sql.Tx) error {
		where, args, err := s.sessionWhere(ctx, tx, q)
		if err != nil {
			return err
		}
		from, to := q.From.Unix(), now
		if !q.To.IsZero() {
			to = q.To.Unix()
		}
		return eachRow(ctx, tx, s.q("SELECT x.joined_at, x.left_at"+sessionFrom+where), args, func(r *sql.Rows) error {
			var joined int64
			var left sql.NullInt64
			if err := r.Scan(&joined, &left); err != nil {
				return err
			}
			end := now
			if left.Valid {
				end = left.Int64
			}
			if d := min(end, to) - max(joined, from); d > 0 {
				total += d
			}
			n++
			return nil
		})
	})
	return time.Duration(total) * time.Second, n, err
}
