package store

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Rollup and retention timing.
const (
	// rollupGrace is how long after a minute ends it is rolled up: the
	// samples of a poll round are written just after it.
	rollupGrace = 60
	// minuteBatch is how many seconds of minute buckets are rolled up at
	// once. Each batch touches a page per server (rollups are clustered by
	// server), so batching divides the pages written; History reads the
	// batch not yet rolled up from the raw samples.
	minuteBatch = 600
	// rollupSpan is the most one rollup transaction covers.
	rollupSpan = day
)

// Maintain rolls up, applies retention and reclaims space. Each step is a
// transaction of its own, and Write waits only for the step running.
func (s *db) Maintain(ctx context.Context, now time.Time) error {
	if err := s.check(); err != nil {
		return err
	}
	n := now.Unix()
	steps := []func(context.Context, int64) error{
		s.partitionsAhead,
		s.rollMinutes,
		s.rerollLate,
		s.rollHours,
		s.rollDays,
		s.retain,
		s.collect,
	}
	for _, step := range steps {
		if err := s.locked(ctx, func() error { return step(ctx, n) }); err != nil {
			return s.fail("maintain", err)
		}
	}
	return s.fail("maintain", s.locked(ctx, func() error { return s.d.reclaim(ctx, s.wdb) }))
}

// locked runs fn holding the writer's lock, with its state loaded.
func (s *db) locked(ctx context.Context, fn func() error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil { // closed while waiting
		return err
	}
	if err := s.checkFile("maintain"); err != nil {
		return err
	}
	if err := s.loadWriter(ctx); err != nil {
		return err
	}
	return fn()
}

// inTx runs fn in a write transaction and, once it committed, stores the
// marks it changed in the writer's state.
func (s *db) inTx(ctx context.Context, m *marks, fn func(tx *sql.Tx) error) error {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return err
	}
	if m != nil {
		if err := s.setMeta(ctx, tx, m.meta()); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if m != nil {
		s.w.marks = *m
	}
	return nil
}

func (m marks) meta() map[string]int64 {
	kv := make(map[string]int64)
	for l := range 4 {
		if k := markKeys[0][l]; k != "" {
			kv[k] = m.rolled[l]
		}
		kv[markKeys[1][l]] = m.kept[l]
	}
	return kv
}

// writeTracked writes tracked sessions, and once that committed puts the
// servers' changed states in place.
func (s *db) writeTracked(ctx context.Context, changed map[string]*serverState, dirty map[*openSession]bool) error {
	if len(changed) == 0 {
		return nil
	}
	err := s.inTx(ctx, nil, func(tx *sql.Tx) error { return s.writeSessions(ctx, tx, dirty, nil, nil) })
	if err != nil {
		return err
	}
	maps.Copy(s.w.servers, changed)
	return nil
}

// rollup computes level l's buckets in [from, to) from the level below,
// for every server, or for the servers listed.
func (s *db) rollup(ctx context.Context, tx *sql.Tx, l Level, from, to int64, servers []int64) error {
	size := strconv.FormatInt(l.seconds(), 10)
	where := allServers(l-1) + "t >= ? AND t < ?"
	args := []any{from, to}
	if servers != nil {
		where = "server IN " + inList(len(servers)) + " AND t >= ? AND t < ?"
		args = args[:0]
		for _, id := range servers {
			args = append(args, id)
		}
		args = append(args, from, to)
	}
	query := "INSERT INTO " + tables[l] + " (server, t, polls, down, nocount, min_players, max_players, sum_players, capacity) " +
		"SELECT server, t - t % " + size + ", " + aggColumns(l-1) + " FROM " + tables[l-1] + " WHERE " + where +
		" GROUP BY 1, 2 ON CONFLICT (server, t) DO UPDATE SET polls = excluded.polls, down = excluded.down, " +
		"nocount = excluded.nocount, min_players = excluded.min_players, max_players = excluded.max_players, " +
		"sum_players = excluded.sum_players, capacity = excluded.capacity"
	_, err := tx.ExecContext(ctx, s.q(query), args...)
	return err
}

// rollTo rolls level l up from its mark to target, a day at most per
// transaction.
func (s *db) rollTo(ctx context.Context, l Level, target int64) error {
	for s.w.marks.rolled[l] < target {
		m := s.w.marks
		from := m.rolled[l]
		to := min(target, from+rollupSpan)
		m.rolled[l] = to
		if err := s.inTx(ctx, &m, func(tx *sql.Tx) error { return s.rollup(ctx, tx, l, from, to, nil) }); err != nil {
			return err
		}
	}
	return nil
}

func (s *db) rollMinutes(ctx context.Context, now int64) error {
	target := floorTo(now-rollupGrace, minute)
	if s.w.marks.rolled[LevelMinute] == 0 {
		// The first maintenance: start at the first sample.
		first := target
		var t sql.NullInt64
		if err := s.wdb.QueryRowContext(ctx, "SELECT min(t) FROM samples").Scan(&t); err != nil {
			return err
		}
		if t.Valid {
			first = min(first, floorTo(t.Int64, minute))
		}
		m := s.w.marks
		m.rolled[LevelMinute] = first
		m.rolled[LevelHour] = floorTo(first, hour)
		m.rolled[LevelDay] = floorTo(first, day)
		if err := s.inTx(ctx, &m, func(*sql.Tx) error { return nil }); err != nil {
			return err
		}
	}
	if target-s.w.marks.rolled[LevelMinute] < minuteBatch {
		return nil
	}
	return s.rollTo(ctx, LevelMinute, target)
}

func (s *db) rollHours(ctx context.Context, _ int64) error {
	return s.rollTo(ctx, LevelHour, floorTo(s.w.marks.rolled[LevelMinute], hour))
}

func (s *db) rollDays(ctx context.Context, _ int64) error {
	return s.rollTo(ctx, LevelDay, floorTo(s.w.marks.rolled[LevelHour], day))
}

// rerollLate rolls up again the buckets that samples written after
// their rollup belong to, level by level, 500 servers a statement (raw
// samples are clustered by time: each statement reads the time range
// once). A bucket whose source retention has deleted is left as it is:
// rolling it up again would keep only the late samples.
func (s *db) rerollLate(ctx context.Context, _ int64) error {
	if len(s.w.late) == 0 {
		return nil
	}
	ids := slices.Sorted(maps.Keys(s.w.late))
	m := s.w.marks
	err := s.inTx(ctx, nil, func(tx *sql.Tx) error {
		for chunk := range slices.Chunk(ids, 500) {
			t := s.w.late[chunk[0]]
			for _, id := range chunk {
				t = min(t, s.w.late[id])
			}
			for l := LevelMinute; l <= LevelDay; l++ {
				size := l.seconds()
				from := max(floorTo(t, size), ceilTo(m.kept[l-1], size), m.kept[l])
				if to := m.rolled[l]; from < to {
					if err := s.rollup(ctx, tx, l, from, to, chunk); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	clear(s.w.late)
	return nil
}

// partitionsAhead creates the partitions of today's samples and
// tomorrow's (PostgreSQL), so that the first write of a day seldom has
// to.
func (s *db) partitionsAhead(ctx context.Context, now int64) error {
	return s.ensureSamplePartitions(ctx, now, now+day)
}

// retain deletes what retention no longer covers: raw samples an hour
// at a time, the rest a day at a time. Nothing is deleted before it is
// rolled up into the next level. In PostgreSQL, raw samples go a day at
// a time, their partition dropped once the whole day is past the cut.
func (s *db) retain(ctx context.Context, now int64) error {
	r := s.opts.retention
	keep := [4]time.Duration{r.Raw, r.Minute, r.Hour, r.Day}
	_, partitioned := s.d.(postgresDialect)
	for l := LevelRaw; l <= LevelDay; l++ {
		if keep[l] <= 0 {
			continue
		}
		period := int64(day)
		if l == LevelRaw {
			period = hour
		}
		cut := floorTo(now-int64(keep[l]/time.Second), period)
		if l < LevelDay {
			cut = min(cut, s.w.marks.rolled[l+1])
		}
		dropDays := l == LevelRaw && partitioned
		if dropDays {
			cut = floorTo(cut, day)
		}
		if cut <= s.w.marks.kept[l] {
			continue
		}
		m := s.w.marks
		m.kept[l] = cut
		err := s.inTx(ctx, &m, func(tx *sql.Tx) error {
			if dropDays {
				return s.dropSamplePartitions(ctx, tx, cut)
			}
			_, err := tx.ExecContext(ctx, s.q("DELETE FROM "+tables[l]+" WHERE "+allServers(l)+"t < ?"), cut)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// collect deletes, once a day, the sessions and map changes retention
// no longer covers, and the interned strings and player names nothing
// refers to any more.
func (s *db) collect(ctx context.Context, now int64) error {
	today := floorDiv(now, day)
	meta, err := readMeta(ctx, s.wdb)
	if err != nil {
		return err
	}
	if last, _ := strconv.ParseInt(meta["collected_day"], 10, 64); last >= today {
		return nil
	}
	r := s.opts.retention
	// A text is used by raw samples and map changes: it goes once both
	// are gone.
	stringDays := int64(0)
	if r.Raw > 0 && r.Maps > 0 {
		stringDays = int64(max(r.Raw, r.Maps)/(24*time.Hour)) + 2
	}
	err = s.inTx(ctx, nil, func(tx *sql.Tx) error {
		if r.Sessions > 0 {
			cut := floorTo(now-int64(r.Sessions/time.Second), day)
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM sessions WHERE server IN (SELECT id FROM servers) AND left_at < ?"), cut); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM players WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE sessions.player = players.id)"); err != nil {
				return err
			}
		}
		if r.Hour > 0 { // incidents are kept as long as the hourly history
			cut := floorTo(now-int64(r.Hour/time.Second), day)
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM incidents WHERE ended_at < ?"), cut); err != nil {
				return err
			}
		}
		if r.Maps > 0 {
			cut := floorTo(now-int64(r.Maps/time.Second), day)
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM maps WHERE server IN (SELECT id FROM servers) AND t < ?"), cut); err != nil {
				return err
			}
		}
		if stringDays > 0 {
			if _, err := tx.ExecContext(ctx, s.q("DELETE FROM strings WHERE seen < ?"), today-stringDays); err != nil {
				return err
			}
		}
		return s.setMeta(ctx, tx, map[string]int64{"collected_day": today})
	})
	if err != nil {
		return err
	}
	for v, c := range s.w.strs {
		if stringDays > 0 && c.seen < today-stringDays {
			delete(s.w.strs, v)
		}
	}
	return nil
}
