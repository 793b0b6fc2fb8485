package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
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
		for _, seg := range m.segments(start, end, m.historyLevel(start, size)) {
			query := "SELECT (t - ?) / ?, " + aggColumns(seg.level) + " FROM " + tables[seg.level] +
				" WHERE server = ? AND t >= ? AND t < ? GROUP BY 1"
			err := eachRow(ctx, tx, s.q(query), []any{start, size, id, seg.from, seg.to}, func(r *sql.Rows) error {
				var b int64
				var a agg
				if err := r.Scan(a.dest(&b)...); err != nil {
					return err
				}
				aggs[b].add(a)
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
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
func (s *db) aggregate(ctx context.Context, tx *sql.Tx, id, from, to int64) (agg, error) {
	var total agg
	m, err := s.readMarks(ctx, tx)
	if err != nil {
		return total, err
	}
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
		a, err = s.aggregate(ctx, tx, id, from.Unix(), ceilUnix(to))
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
		return nil
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
