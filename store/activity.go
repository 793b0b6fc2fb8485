package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"time"
)

func (s *db) HistoryMany(ctx context.Context, servers []string, from, to time.Time, step time.Duration) (map[string][]Point, error) {
	if step < time.Second || step%time.Second != 0 {
		return nil, &Error{Op: "history", DB: s.name, Err: fmt.Errorf("step %v is not a whole number of seconds", step)}
	}
	size := int64(step / time.Second)
	start, end := floorTo(from.Unix(), size), ceilUnix(to)
	out := make(map[string][]Point, len(servers))
	if end <= start || len(servers) == 0 {
		return out, s.check()
	}
	n := (end - start + size - 1) / size
	if n*int64(len(servers)) > maxPoints {
		return nil, &Error{Op: "history", DB: s.name, Err: fmt.Errorf("%d servers × %d buckets of %v, more than %d: take a longer step or fewer servers", len(servers), n, step, maxPoints)}
	}
	aggs := map[int64][]agg{}
	names := map[int64]string{}
	err := s.read(ctx, "history", func(tx *sql.Tx) error {
		var ids []int64
		for chunk := range slices.Chunk(servers, maxServersAtOnce) {
			args := make([]any, len(chunk))
			for i, name := range chunk {
				args[i] = clean(name, maxNameText)
			}
			err := eachRow(ctx, tx, s.q("SELECT id, name FROM servers WHERE name IN "+inList(len(chunk))), args, func(r *sql.Rows) error {
				var id int64
				var name string
				if err := r.Scan(&id, &name); err != nil {
					return err
				}
				ids = append(ids, id)
				names[id] = name
				aggs[id] = make([]agg, n)
				return nil
			})
			if err != nil {
				return err
			}
		}
		slices.Sort(ids)
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		// Every level's stretch is read for many servers at once, a
		// statement a level (not a statement a server, as eachBucket
		// reads the main one): the servers are few, their buckets too.
		var segs []segment
		for _, seg := range m.segments(start, end, m.historyLevel(start, size)) {
			from, to := max(seg.from, m.kept[seg.level]), seg.to
			if seg.level > LevelRaw {
				to = min(to, m.rolled[seg.level])
			}
			if from < to {
				segs = append(segs, segment{seg.level, from, to})
			}
		}
		for chunk := range slices.Chunk(ids, maxServersAtOnce) {
			byServer, err := s.edgeBuckets(ctx, tx, chunk, segs, start, size)
			if err != nil {
				return err
			}
			for id, list := range byServer {
				for _, b := range list {
					aggs[id][b.i] = b.a
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for id, list := range aggs {
		points := make([]Point, n)
		for i, a := range list {
			points[i] = a.point(time.Unix(start+int64(i)*size, 0).UTC())
		}
		out[names[id]] = points
	}
	return out, nil
}

func (s *db) DayAverages(ctx context.Context, from, to time.Time) (map[string][]float64, time.Time, error) {
	start, end := ceilTo(from.Unix(), day), floorTo(to.Unix(), day)
	out := map[string][]float64{}
	var through int64
	err := s.read(ctx, "day averages", func(tx *sql.Tx) error {
		m, err := s.readMarks(ctx, tx)
		if err != nil {
			return err
		}
		through = min(end, m.rolled[LevelDay])
		if through <= start {
			return nil
		}
		_, names, err := s.spanServers(ctx, tx, "")
		if err != nil {
			return err
		}
		n := (end - start) / day
		query := "SELECT server, t, polls, sum_players FROM rollup_day WHERE " + allServers(LevelDay) + "t >= ? AND t < ?"
		return eachRow(ctx, tx, s.q(query), []any{max(start, m.kept[LevelDay]), through}, func(r *sql.Rows) error {
			var id, t, polls int64
			var sum sql.NullInt64
			if err := r.Scan(&id, &t, &polls, &sum); err != nil {
				return err
			}
			name, ok := names[id]
			if !ok || polls == 0 {
				return nil
			}
			list := out[name]
			if list == nil {
				list = make([]float64, n)
				for i := range list {
					list[i] = math.NaN()
				}
				out[name] = list
			}
			list[(t-start)/day] = float64(sum.Int64) / float64(polls)
			return nil
		})
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	return out, time.Unix(max(through, start), 0).UTC(), nil
}
