package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
)

// Bounds of the bucket reader.
const (
	// maxEdgeBuckets bounds the buckets of finer levels eachBucket holds
	// in memory at once (about 100 bytes each): servers × the buckets
	// not rolled up yet to the level read.
	maxEdgeBuckets = 100_000
	// maxServersAtOnce is the most servers one statement names.
	maxServersAtOnce = 500
)

// bucket is a bucket of history: its index from the start, and its sum.
type bucket struct {
	i int64
	a agg
}

// eachBucket is how history is read in buckets, by History and by
// EachPoint (so by an export): the history, as of the marks m, of the
// servers ids (sorted)
// over [start, end), in buckets of size seconds from start, each stretch
// from the coarsest level up to top that has it rolled up and still
// keeps, the rest (the minutes not rolled up yet, say) from the finer
// levels. fn gets every bucket that has polls, by server then time.
//
// The stretch of top is read a server at a time, streaming (the rollups
// are clustered by server); the stretches of finer levels, a few
// buckets at each end, are read for many servers at once (raw samples
// are clustered by time) and held in memory, at most maxEdgeBuckets.
func (s *db) eachBucket(ctx context.Context, tx *sql.Tx, m marks, ids []int64, start, end, size int64, top Level, fn func(id int64, b bucket) error) error {
	if end <= start || len(ids) == 0 {
		return nil
	}
	var main *segment
	var edges []segment
	held := int64(0) // the edge buckets one server may have
	for _, seg := range m.segments(start, end, top) {
		if seg.level == top {
			main = &seg
			continue
		}
		// A level has rows only where it keeps them and, for a rollup,
		// where it has rolled up; raw samples, from the first to the
		// last (asked only when it decides how many servers to read at
		// once).
		from, to := max(seg.from, m.kept[seg.level]), seg.to
		if seg.level > LevelRaw {
			to = min(to, m.rolled[seg.level])
		} else if len(ids) > 1 {
			first, last, err := s.rawBounds(ctx, tx)
			if err != nil {
				return err
			}
			from, to = max(from, first), min(to, last+1)
		}
		if from < to {
			edges = append(edges, segment{seg.level, from, to})
			held += (to-from)/size + 2
		}
	}
	per := int(max(1, min(maxServersAtOnce, maxEdgeBuckets/max(held, 1))))
	for chunk := range slices.Chunk(ids, per) {
		byServer, err := s.edgeBuckets(ctx, tx, chunk, edges, start, size)
		if err != nil {
			return err
		}
		for _, id := range chunk {
			if err := s.serverBuckets(ctx, tx, id, main, start, size, byServer[id], fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// edgeBuckets reads the edge segments of servers ids, by server, each
// server's buckets in time order.
func (s *db) edgeBuckets(ctx context.Context, tx *sql.Tx, ids []int64, edges []segment, start, size int64) (map[int64][]bucket, error) {
	if len(edges) == 0 {
		return nil, nil
	}
	sums := make(map[[2]int64]*agg)
	for _, seg := range edges {
		args := []any{start, size}
		for _, id := range ids {
			args = append(args, id)
		}
		query := "SELECT server, (t - ?) / ?, " + aggColumns(seg.level) + " FROM " + tables[seg.level] +
			" WHERE server IN " + inList(len(ids)) + " AND t >= ? AND t < ? GROUP BY 1, 2"
		err := eachRow(ctx, tx, s.q(query), append(args, seg.from, seg.to), func(r *sql.Rows) error {
			var k [2]int64
			var a agg
			if err := r.Scan(a.dest(&k[0], &k[1])...); err != nil {
				return err
			}
			if sum := sums[k]; sum != nil {
				sum.add(a)
			} else {
				sums[k] = &a
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	byServer := make(map[int64][]bucket)
	for k, a := range sums {
		byServer[k[0]] = append(byServer[k[0]], bucket{k[1], *a})
	}
	for _, list := range byServer {
		slices.SortFunc(list, func(a, b bucket) int { return cmp.Compare(a.i, b.i) })
	}
	return byServer, nil
}

// serverBuckets streams one server's buckets of the main segment (nil
// when there is none), merged with its edge buckets, to fn.
func (s *db) serverBuckets(ctx context.Context, tx *sql.Tx, id int64, main *segment, start, size int64, edge []bucket, fn func(int64, bucket) error) error {
	if main != nil {
		query := "SELECT (t - ?) / ?, " + aggColumns(main.level) + " FROM " + tables[main.level] +
			" WHERE server = ? AND t >= ? AND t < ? GROUP BY 1 ORDER BY 1"
		err := eachRow(ctx, tx, s.q(query), []any{start, size, id, main.from, main.to}, func(r *sql.Rows) error {
			var b bucket
			if err := r.Scan(b.a.dest(&b.i)...); err != nil {
				return err
			}
			for len(edge) > 0 && edge[0].i <= b.i {
				if edge[0].i == b.i {
					b.a.add(edge[0].a)
				} else if err := fn(id, edge[0]); err != nil {
					return err
				}
				edge = edge[1:]
			}
			return fn(id, b)
		})
		if err != nil {
			return err
		}
	}
	for _, b := range edge {
		if err := fn(id, b); err != nil {
			return err
		}
	}
	return nil
}

// rawBounds returns the times of the first and last raw samples (0 and
// -1 when there is none): two seeks, the samples being clustered by time.
func (s *db) rawBounds(ctx context.Context, tx *sql.Tx) (first, last int64, err error) {
	var a, b sql.NullInt64
	// One aggregate a statement: SQLite reads min or max from the index
	// only when it is alone.
	if err := tx.QueryRowContext(ctx, "SELECT min(t) FROM samples").Scan(&a); err != nil {
		return 0, 0, err
	}
	if err := tx.QueryRowContext(ctx, "SELECT max(t) FROM samples").Scan(&b); err != nil {
		return 0, 0, err
	}
	if !a.Valid {
		return 0, -1, nil
	}
	return a.Int64, b.Int64, nil
}
