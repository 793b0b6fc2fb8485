package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// sampleKeyMigration keys the raw samples (t, server, vantage), vantage
// empty for a single process (issue 23): each vantage point of a fleet
// keeps its own sample of a slot, and a retried batch, or an old and a
// new owner polling the same slot around a hand-over, keep one row, the
// first written (Write inserts with ON CONFLICT DO NOTHING). t is the
// sample's scheduled slot in a fleet (Sample.Slot), its time otherwise.
//
// SQLite rebuilds the table. In PostgreSQL the table becomes partitioned
// by range of t, one partition a UTC day (samplePartition), so that
// retention drops a day's partition instead of deleting its rows; the
// rows kept move into the partitions of their days.
var sampleKeyMigration = migration{run: func(ctx context.Context, tx *sql.Tx, d dialect) error {
	if _, ok := d.(postgresDialect); ok {
		return partitionSamples(ctx, tx)
	}
	for _, stmt := range []string{
		d.ddl(samplesTable("samples_new") + "{norowid}"),
		`INSERT INTO samples_new (t, server, up, players, max_players, bots, map, version, ping, vantage)
			SELECT t, server, up, players, max_players, bots, map, version, ping, COALESCE(vantage, '') FROM samples`,
		`DROP TABLE samples`,
		`ALTER TABLE samples_new RENAME TO samples`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}}

// samplesTable is the statement that creates the raw samples' table
// (the engine's suffix to add) under a name.
func samplesTable(name string) string {
	return `CREATE TABLE ` + name + ` (
			t           BIGINT NOT NULL,
			server      INTEGER NOT NULL,
			up          SMALLINT NOT NULL,
			players     INTEGER,
			max_players INTEGER,
			bots        INTEGER,
			map         BIGINT,
			version     BIGINT,
			ping        INTEGER,
			vantage     TEXT NOT NULL DEFAULT '',
			PRIMARY KEY (t, server, vantage)
		)`
}

// partitionSamples makes PostgreSQL's samples table partitioned by day,
// the rows it had copied into the partitions of their days.
func partitionSamples(ctx context.Context, tx *sql.Tx) error {
	for _, stmt := range []string{
		`ALTER TABLE samples RENAME TO samples_old`,
		`ALTER TABLE samples_old RENAME CONSTRAINT samples_pkey TO samples_old_pkey`,
		samplesTable("samples") + ` PARTITION BY RANGE (t)`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	// floor(t / 86400) for negative times too.
	days, err := column[int64](ctx, tx, `SELECT DISTINCT (t - ((t % 86400) + 86400) % 86400) / 86400 FROM samples_old`)
	if err != nil {
		return err
	}
	if err := createPartitions(ctx, tx, days); err != nil {
		return err
	}
	for _, stmt := range []string{
		`INSERT INTO samples (t, server, up, players, max_players, bots, map, version, ping, vantage)
			SELECT t, server, up, players, max_players, bots, map, version, ping, COALESCE(vantage, '') FROM samples_old`,
		`DROP TABLE samples_old`,
	} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// The days whose partitions have a dated name: from 1000-01-01 to
// 9999-12-31. Others (only ever written by a clock far off) are named by
// their Unix day number.
var (
	firstDatedDay = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC).Unix() / day
	lastDatedDay  = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC).Unix() / day
)

// samplePartition is the name of the partition of the samples of a
// Unix day (UTC) in PostgreSQL: samples_YYYYMMDD.
func samplePartition(d int64) string {
	if d >= firstDatedDay && d <= lastDatedDay {
		return "samples_" + time.Unix(d*day, 0).UTC().Format("20060102")
	}
	return "samples_d" + strings.Replace(strconv.FormatInt(d, 10), "-", "m", 1)
}

// partitionDay is the Unix day of a partition's name; false for a name
// samplePartition does not give.
func partitionDay(name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, "samples_")
	if !ok {
		return 0, false
	}
	if n, ok := strings.CutPrefix(rest, "d"); ok {
		d, err := strconv.ParseInt(strings.Replace(n, "m", "-", 1), 10, 64)
		return d, err == nil && samplePartition(d) == name
	}
	t, err := time.Parse("20060102", rest)
	if err != nil {
		return 0, false
	}
	d := t.Unix() / day
	return d, samplePartition(d) == name
}

// dayBound is where a day's partition begins: its first second, or
// MINVALUE and MAXVALUE beyond what a BIGINT holds.
func dayBound(d int64) string {
	switch {
	case d < math.MinInt64/day:
		return "MINVALUE"
	case d > math.MaxInt64/day:
		return "MAXVALUE"
	}
	return strconv.FormatInt(d*day, 10)
}

// createPartitions creates, in tx, the partitions of the samples of
// days that do not have one.
func createPartitions(ctx context.Context, tx *sql.Tx, days []int64) error {
	for _, d := range days {
		stmt := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s PARTITION OF samples FOR VALUES FROM (%s) TO (%s)",
			samplePartition(d), dayBound(d), dayBound(d+1))
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	return nil
}

// partitionLock is the advisory lock under which workers sharing a
// PostgreSQL store create and drop partitions: "gsqP".
const partitionLock = 0x67737150

// maxPartitionDays bounds the days one ensureSamplePartitions covers: a
// century.
const maxPartitionDays = 36525

// ensureSamplePartitions creates the PostgreSQL partitions of the
// samples of the days [from, to] (Unix seconds) covers, those that do
// not exist yet. SQLite's table has none: it does nothing there.
func (s *db) ensureSamplePartitions(ctx context.Context, from, to int64) error {
	first, last := floorDiv(from, day), floorDiv(to, day)
	if last-first >= maxPartitionDays {
		return fmt.Errorf("samples from %d to %d: more than %d days of partitions", from, to, maxPartitionDays)
	}
	var days []int64
	for d := first; d <= last; d++ {
		days = append(days, d)
	}
	return s.ensureSampleDays(ctx, days)
}

// ensureSampleDays creates the missing partitions of the samples of
// Unix days, in a short transaction of its own, under partitionLock so
// that workers creating the same day do not race. The days known to
// exist are cached: a write pays nothing after the first of its day.
func (s *db) ensureSampleDays(ctx context.Context, days []int64) error {
	if _, ok := s.d.(postgresDialect); !ok {
		return nil
	}
	s.partMu.Lock()
	defer s.partMu.Unlock()
	var missing []int64
	for _, d := range days {
		if !s.partDays[d] && !slices.Contains(missing, d) {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", partitionLock); err != nil {
		return err
	}
	if err := createPartitions(ctx, tx, missing); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	if s.partDays == nil {
		s.partDays = make(map[int64]bool)
	}
	for _, d := range missing {
		s.partDays[d] = true
	}
	return nil
}

// forgetPartitions empties the cache of the partitions known to exist:
// another worker's retention dropped one a write needed.
func (s *db) forgetPartitions() {
	s.partMu.Lock()
	defer s.partMu.Unlock()
	clear(s.partDays)
}

// isNoPartition reports whether PostgreSQL refused a row for want of a
// partition of its day.
func isNoPartition(err error) bool {
	var e *pgconn.PgError
	return errors.As(err, &e) && e.Code == "23514" && strings.Contains(e.Message, "no partition")
}

// column runs a query of one column and returns its values.
func column[T any](ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args ...any) ([]T, error) {
	var out []T
	err := eachRow(ctx, q, query, args, func(r *sql.Rows) error {
		var v T
		err := r.Scan(&v)
		out = append(out, v)
		return err
	})
	return out, err
}

// samplePartitions returns the names of the partitions of PostgreSQL's
// samples table, sorted.
func samplePartitions(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) ([]string, error) {
	return column[string](ctx, q, `SELECT c.relname FROM pg_inherits i
		JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
		WHERE p.relname = 'samples' AND p.relnamespace = current_schema()::regnamespace ORDER BY 1`)
}

// dropSamplePartitions drops, in tx, the partitions of the samples that
// end at or before cut (Unix seconds): the whole days retention no
// longer covers. The rows of a day that ends after cut wait for it.
func (s *db) dropSamplePartitions(ctx context.Context, tx *sql.Tx, cut int64) error {
	if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock($1)", partitionLock); err != nil {
		return err
	}
	names, err := samplePartitions(ctx, tx)
	if err != nil {
		return err
	}
	var dropped []int64
	for _, name := range names {
		d, ok := partitionDay(name)
		if !ok || (d+1)*day > cut {
			continue
		}
		if _, err := tx.ExecContext(ctx, "DROP TABLE "+name); err != nil {
			return err
		}
		dropped = append(dropped, d)
	}
	s.partMu.Lock()
	defer s.partMu.Unlock()
	// Forgotten before the commit: a write that then needs the day
	// creates it again, which does no harm.
	for _, d := range dropped {
		delete(s.partDays, d)
	}
	return nil
}

// sampleTime is the second a sample is stored at: its scheduled slot in
// a fleet, else its time.
func sampleTime(smp *Sample) int64 {
	return floorDiv(sampleMicro(smp), 1e6)
}

// sampleMicro is sampleTime in Unix microseconds, rounded down, as
// fences compare it (fenceMicroMigration).
func sampleMicro(smp *Sample) int64 {
	if !smp.Slot.IsZero() {
		return smp.Slot.UnixMicro()
	}
	return smp.Time.UnixMicro()
}

// fenceUse is a fence a write carries, and the latest sample time
// (slot, Unix microseconds) written under it: math.MaxInt64 for a write
// that must be the owner's now (a verdict).
type fenceUse struct {
	Fence
	last int64
}

// batchFences returns the distinct fences of a batch's samples, sorted,
// each with its latest sample; a sample without one adds none.
func batchFences(samples []Sample) []fenceUse {
	var list []fenceUse
	for i := range samples {
		f := samples[i].Fence
		if f == (Fence{}) {
			continue
		}
		t := sampleMicro(&samples[i])
		if j := slices.IndexFunc(list, func(u fenceUse) bool { return u.Fence == f }); j >= 0 {
			list[j].last = max(list[j].last, t)
		} else {
			list = append(list, fenceUse{f, t})
		}
	}
	slices.SortFunc(list, func(a, b fenceUse) int { return compareFences(a.Fence, b.Fence) })
	return list
}

func compareFences(a, b Fence) int {
	return cmp.Or(strings.Compare(a.Region, b.Region), cmp.Compare(a.Shard, b.Shard), cmp.Compare(a.Epoch, b.Epoch))
}

// checkFences checks, in a PostgreSQL transaction and before it writes,
// that each fence's epoch is still its shard's newest, or that what is
// written under it was polled before a newer lease took the shard
// (fenceTimeMigration), and holds the shards' fence rows (FOR SHARE, in
// one order: writes do not deadlock one another) so that a takeover
// waits for the transaction. It fails with a *FencedError listing the
// stale fences, those of a shard whose newest epoch is another, taken
// before the latest sample, or none.
func checkFences(ctx context.Context, tx *sql.Tx, fences []fenceUse) error {
	regions := make([]string, len(fences))
	shards := make([]int64, len(fences))
	for i, f := range fences {
		regions[i], shards[i] = f.Region, int64(f.Shard)
	}
	type shard struct {
		region string
		shard  int64
	}
	type newest struct{ epoch, takenAt int64 }
	rows := make(map[shard]newest)
	err := eachRow(ctx, tx, `SELECT region, shard, epoch, taken_at FROM cluster_fence
		WHERE (region, shard) IN (SELECT * FROM unnest($1::text[], $2::integer[]))
		ORDER BY region, shard FOR SHARE`, []any{regions, shards}, func(r *sql.Rows) error {
		var k shard
		var n newest
		if err := r.Scan(&k.region, &k.shard, &n.epoch, &n.takenAt); err != nil {
			return err
		}
		rows[k] = n
		return nil
	})
	if err != nil {
		return err
	}
	fe := &FencedError{Since: map[Fence]time.Time{}}
	for _, f := range fences {
		n, ok := rows[shard{f.Region, int64(f.Shard)}]
		switch {
		case ok && n.epoch == int64(f.Epoch):
		case ok && n.epoch > int64(f.Epoch) && f.last < n.takenAt:
			// Polled while the lease was this writer's.
		default:
			fe.Stale = append(fe.Stale, f.Fence)
			if ok && n.epoch > int64(f.Epoch) {
				fe.Since[f.Fence] = time.UnixMicro(n.takenAt)
			}
		}
	}
	if len(fe.Stale) > 0 {
		return fe
	}
	return nil
}

// insertSamples writes the plan's raw rows: a row whose (t, server,
// vantage) the table has already is left as it is. PostgreSQL takes the
// batch in one statement, its columns as arrays; SQLite, where a
// statement is no round trip, in VALUES lists.
func (s *db) insertSamples(ctx context.Context, tx *sql.Tx, rows []rawRow, textID func(string) *int64) error {
	const head = "INSERT INTO samples (t, server, up, players, max_players, bots, map, version, ping, vantage)"
	const tail = "ON CONFLICT (t, server, vantage) DO NOTHING"
	if _, ok := s.d.(postgresDialect); !ok {
		args := make([]any, 0, len(rows)*10)
		for _, r := range rows {
			args = append(args, r.t, r.server, r.up, r.players, r.maxPlayers, r.bots, textID(r.mapText), textID(r.versionText), r.ping, r.vantage)
		}
		return s.execRows(ctx, tx, head, tail, 10, args)
	}
	if len(rows) == 0 {
		return nil
	}
	var ts, servers, ups []int64
	var players, maxPlayers, bots, maps, versions, pings []*int64
	var vantages []string
	for _, r := range rows {
		ts, servers, ups = append(ts, r.t), append(servers, r.server), append(ups, r.up)
		players, maxPlayers, bots = append(players, r.players), append(maxPlayers, r.maxPlayers), append(bots, r.bots)
		maps, versions = append(maps, textID(r.mapText)), append(versions, textID(r.versionText))
		pings, vantages = append(pings, r.ping), append(vantages, r.vantage)
	}
	_, err := tx.ExecContext(ctx, head+` SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::smallint[],
		$4::integer[], $5::integer[], $6::integer[], $7::bigint[], $8::bigint[], $9::integer[], $10::text[]) `+tail,
		ts, servers, ups, players, maxPlayers, bots, maps, versions, pings, vantages)
	return err
}
