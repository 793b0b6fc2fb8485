package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// rawRow is a sample as the samples table keeps it; nil is NULL.
type rawRow struct {
	t, server                       int64
	up                              int64
	players, maxPlayers, bots, ping *int64
	mapText, versionText            string
	vantage                         string
}

// rawKey is the key of a raw sample.
type rawKey struct {
	t, server int64
	vantage   string
}

// sessionJoin is a session a round opens.
type sessionJoin struct {
	server int64
	s      *openSession
}

// roundPlan is what one Write changes: the rows to write, and the
// writer's state once they are committed.
type roundPlan struct {
	rawKeys         []rawKey
	raw             map[rawKey]rawRow
	states          map[string]*serverState // by name: copies, in place once committed
	strs            map[string]bool         // map and version texts used
	day             int64                   // Unix day of the round's latest sample
	maps            [][]any                 // server, t, map text
	announced       [][]any                 // id, name
	records         [][]any                 // id, record, record_at
	observed        map[int64]int64
	dirty           map[*openSession]bool // tracked sessions whose score or end changed
	joins           []sessionJoin
	late            map[int64]int64
	refused         map[*serverState]*refusal // over the budget, by the plan's states
	incidentChanges []incidentChange
}

func newRoundPlan() *roundPlan {
	return &roundPlan{
		raw:      make(map[rawKey]rawRow),
		states:   make(map[string]*serverState),
		strs:     make(map[string]bool),
		observed: make(map[int64]int64),
		dirty:    make(map[*openSession]bool),
		late:     make(map[int64]int64),
		refused:  make(map[*serverState]*refusal),
	}
}

// orNull is n, or NULL when it is negative (not reported).
func orNull(n int64) *int64 {
	if n < 0 {
		return nil
	}
	return &n
}

func (s *db) Write(ctx context.Context, samples []Sample) error {
	if err := s.check(); err != nil {
		return err
	}
	if len(samples) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil { // closed while waiting
		return err
	}
	if err := s.checkFile("write"); err != nil {
		return err
	}
	if err := s.loadWriter(ctx); err != nil {
		return s.fail("write", err)
	}
	type item struct {
		name string
		st   *serverState
		smp  *Sample
	}
	items := make([]item, 0, len(samples))
	for i := range samples {
		smp := &samples[i]
		name := clean(smp.Server, maxNameText)
		st := s.w.servers[name]
		if st == nil {
			return &Error{Op: "write", DB: s.name, Err: serverError(smp.Server)}
		}
		if smp.Time.IsZero() {
			return &Error{Op: "write", DB: s.name, Err: fmt.Errorf("a sample of %q has no time", smp.Server)}
		}
		items = append(items, item{name, st, smp})
	}
	// Each server's samples in time order, for sessions and maps.
	slices.SortStableFunc(items, func(a, b item) int {
		return cmp.Or(cmp.Compare(a.st.id, b.st.id), cmp.Compare(sampleTime(a.smp), sampleTime(b.smp)))
	})
	fences := batchFences(samples)
	if _, ok := s.d.(postgresDialect); !ok && len(fences) > 0 {
		return &Error{Op: "write", DB: s.name, Err: fmt.Errorf("a sample of shard %d of %s is fenced: %w", fences[0].Shard, fences[0].Region, ErrNotShared)}
	}
	// The plan is made from the writer's committed state, which nothing
	// changes until the round is committed: a round the database ends is
	// planned and written again from scratch.
	plan := func() (*roundPlan, []int64) {
		p := newRoundPlan()
		var days []int64
		for _, it := range items {
			st := p.states[it.name]
			if st == nil {
				st = it.st.clone()
				p.states[it.name] = st
			}
			p.add(st, it.smp, s.w.marks.rolled[LevelMinute], s.opts.budget)
			if d := floorDiv(sampleTime(it.smp), day); !slices.Contains(days, d) {
				days = append(days, d)
			}
		}
		return p, days
	}
	// Two cases are written again at once: another worker's retention
	// dropped a day's partition that this one knew (the cache is
	// forgotten; once), and PostgreSQL ended the round as a deadlock with
	// another writer of a shared database (maxDeadlockTries in all).
	var p *roundPlan
	var strs map[string]internedString
	partitionRetried := false
	for try := 1; ; try++ {
		var days []int64
		p, days = plan()
		var err error
		strs, err = s.writeRound(ctx, p, days, fences)
		if err == nil {
			break
		}
		switch {
		case isNoPartition(err) && !partitionRetried:
			partitionRetried = true
			s.forgetPartitions()
		case isDeadlock(err) && try < maxDeadlockTries:
		default:
			return s.fail("write", err)
		}
	}
	s.noteRefused(p)
	for name, st := range p.states {
		s.w.servers[name] = st
	}
	for v, c := range strs {
		s.w.strs[v] = c
	}
	for id, t := range p.late {
		if old, ok := s.w.late[id]; !ok || t < old {
			s.w.late[id] = t
		}
	}
	return nil
}

// writeRound writes a plan in one transaction, once the partitions of
// its days exist and, first, checking its fences.
func (s *db) writeRound(ctx context.Context, p *roundPlan, days []int64, fences []fenceUse) (map[string]internedString, error) {
	if err := s.ensureSampleDays(ctx, days); err != nil {
		return nil, err
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if len(fences) > 0 {
		if err := checkFences(ctx, tx, fences); err != nil {
			return nil, err
		}
	}
	strs, err := p.exec(ctx, s, tx)
	if err != nil {
		return nil, err
	}
	return strs, tx.Commit()
}

// add plans one sample of a server, st being the plan's copy of its state.
func (p *roundPlan) add(st *serverState, smp *Sample, rolledMinute int64, b Budget) {
	t := sampleTime(smp)
	p.day = max(p.day, floorDiv(t, day))
	row := rawRow{t: t, server: st.id, vantage: clean(smp.Vantage, maxNameText)}
	if smp.Up {
		row.up = 1
		row.players = orNull(int64(smp.Players))
		row.maxPlayers = orNull(int64(smp.MaxPlayers))
		row.bots = orNull(int64(smp.Bots))
		if smp.Ping >= 0 {
			row.ping = orNull(min(smp.Ping.Microseconds(), math.MaxInt32))
		}
		row.mapText = p.text(st, t, clean(smp.Map, maxText), st.lastMap, b)
		row.versionText = p.text(st, t, clean(smp.Version, maxText), st.lastVer, b)
		for _, v := range []string{row.mapText, row.versionText} {
			if v != "" {
				p.strs[v] = true
			}
		}
	}
	// The first sample of a key stays, in a batch as in the table.
	key := rawKey{t, st.id, row.vantage}
	if _, dup := p.raw[key]; !dup {
		p.rawKeys = append(p.rawKeys, key)
		p.raw[key] = row
	}
	if t < rolledMinute {
		if old, ok := p.late[st.id]; !ok || t < old {
			p.late[st.id] = t
		}
	}
	p.sessions(st, smp, t, b)
	p.incidents(st, smp, t)
	if t <= st.lastT {
		return // an older sample adds history, and changes nothing else
	}
	st.lastT = t
	if !smp.Up {
		return
	}
	if name := clean(smp.Name, maxNameText); name != "" && name != st.announced {
		st.announced = name
		p.announced = append(p.announced, []any{st.id, name})
	}
	if n := int64(smp.Players); n >= 0 && n > st.record {
		st.record, st.recordAt = n, t
		p.records = append(p.records, []any{st.id, n, t})
	}
	if row.mapText != "" && row.mapText != st.lastMap {
		st.lastMap = row.mapText
		p.maps = append(p.maps, []any{st.id, t, row.mapText})
	}
	if row.versionText != "" {
		st.lastVer = row.versionText
	}
}

// text is a map or version text a sample at t reports, last the
// server's latest: kept as it is when it did not change, and when it did
// while the server's changes of the hour allow; otherwise refused ("").
func (p *roundPlan) text(st *serverState, t int64, text, last string, b Budget) string {
	if text == "" || text == last || st.spent.change(t, b) {
		return text
	}
	p.refuse(st, t, changesOf)
	return ""
}

// sessions opens and ends a server's sessions as a sample's changes
// say, and gives the open sessions the scores of its player list. A join
// beyond the server's sessions of the hour (its Budget) opens nothing. Several
// sessions of one name are matched longest-on first: a leave ends the
// newest, and the highest scores go to the oldest.
func (p *roundPlan) sessions(st *serverState, smp *Sample, t int64, b Budget) {
	for _, c := range smp.Sessions {
		name := clean(c.Player, maxText)
		if name == "" {
			continue
		}
		at := t
		if !c.Time.IsZero() {
			at = c.Time.Unix()
		}
		if !c.Left {
			if !st.spent.session(at, b) {
				p.refuse(st, at, sessionsOf)
				continue
			}
			if len(st.open) < maxOpenSessions {
				o := &openSession{player: name, joined: at, saved: at}
				st.open = append(st.open, o)
				p.joins = append(p.joins, sessionJoin{st.id, o})
			}
			continue
		}
		sortSessions(st.open)
		for i := len(st.open) - 1; i >= 0; i-- {
			if o := st.open[i]; o.player == name {
				o.left = max(at, o.joined)
				p.touch(o, at)
				st.open = slices.Delete(st.open, i, i+1)
				break
			}
		}
	}
	sortSessions(st.open)
	if smp.PlayerList == nil || st.lastObs != 0 && t <= st.lastObs {
		return
	}
	scores := make(map[string][]int64)
	for i, pl := range smp.PlayerList {
		if i == maxOpenSessions {
			break
		}
		if name := clean(pl.Name, maxText); name != "" {
			scores[name] = append(scores[name], pl.Score)
		}
	}
	for _, list := range scores {
		slices.SortFunc(list, func(a, b int64) int { return cmp.Compare(b, a) })
	}
	for _, o := range st.open { // oldest first
		list := scores[o.player]
		if len(list) == 0 {
			continue
		}
		o.score, scores[o.player] = list[0], list[1:]
		switch {
		case o.id == 0: // opened by this round: inserted with its score
			o.savedScore = o.score
		case o.score != o.savedScore && t-o.saved >= scoreEvery:
			p.touch(o, t)
		}
	}
	st.lastObs = t
	p.observed[st.id] = t
}

// touch notes that a tracked session is to be written as it is now, at
// t; one the round opens is written whole when it is inserted.
func (p *roundPlan) touch(o *openSession, t int64) {
	if o.id != 0 {
		p.dirty[o] = true
	}
	o.saved, o.savedScore = t, o.score
}

// exec writes the plan in tx, and returns the interned strings to cache.
func (p *roundPlan) exec(ctx context.Context, s *db, tx *sql.Tx) (map[string]internedString, error) {
	// In one order: two workers of a fleet that add the same new texts
	// at once wait for one another instead of deadlocking.
	texts := slices.Sorted(maps.Keys(p.strs))
	ids, cached, err := s.internStrings(ctx, tx, texts, p.day)
	if err != nil {
		return nil, err
	}
	textID := func(v string) *int64 {
		if v == "" {
			return nil
		}
		id := ids[v]
		return &id
	}
	// Every batch below goes in one order (by server, then time): two
	// writers of a shared database that touch the same rows (the regions
	// of a fleet writing one server's state; a taker and the worker it
	// took from) wait for one another instead of deadlocking.
	slices.SortFunc(p.rawKeys, func(a, b rawKey) int {
		return cmp.Or(cmp.Compare(a.server, b.server), cmp.Compare(a.t, b.t), cmp.Compare(a.vantage, b.vantage))
	})
	rows := make([]rawRow, len(p.rawKeys))
	for i, k := range p.rawKeys {
		rows[i] = p.raw[k]
	}
	if err := s.insertSamples(ctx, tx, rows, textID); err != nil {
		return nil, err
	}
	var args []any
	if len(p.maps) > 0 {
		slices.SortFunc(p.maps, func(a, b []any) int {
			return cmp.Or(cmp.Compare(a[0].(int64), b[0].(int64)), cmp.Compare(a[1].(int64), b[1].(int64)))
		})
		for _, m := range p.maps {
			args = append(args, m[0], m[1], ids[m[2].(string)])
		}
		if err := s.execRows(ctx, tx, "INSERT INTO maps (server, t, map)", "ON CONFLICT (server, t) DO UPDATE SET map = excluded.map", 3, args); err != nil {
			return nil, err
		}
	}
	if err := s.updateByID(ctx, tx, "servers", []string{"announced TEXT"}, p.announced); err != nil {
		return nil, err
	}
	if err := s.updateByID(ctx, tx, "servers", []string{"record INTEGER", "record_at BIGINT"}, p.records); err != nil {
		return nil, err
	}
	if len(p.observed) > 0 {
		args = args[:0]
		for _, id := range slices.Sorted(maps.Keys(p.observed)) {
			args = append(args, id, p.observed[id])
		}
		if err := s.execRows(ctx, tx, "INSERT INTO observed (server, t)", "ON CONFLICT (server) DO UPDATE SET t = excluded.t", 2, args); err != nil {
			return nil, err
		}
	}
	players, err := p.limitNames(ctx, s, tx)
	if err != nil {
		return nil, err
	}
	if err := s.writeSessions(ctx, tx, p.dirty, p.joins, players); err != nil {
		return nil, err
	}
	if err := s.writeIncidents(ctx, tx, p.incidentChanges); err != nil {
		return nil, err
	}
	return cached, nil
}

// writeSessions updates the tracked sessions that changed and inserts
// the new ones, giving them their ids; players are the ids of the player
// names already looked up.
func (s *db) writeSessions(ctx context.Context, tx *sql.Tx, dirty map[*openSession]bool, joins []sessionJoin, players map[string]int64) error {
	// Scores apart from ends: setting left_at updates two indexes.
	var ended, scores [][]any
	for o := range dirty {
		if o.left != 0 {
			ended = append(ended, []any{o.id, o.left, o.score})
		} else {
			scores = append(scores, []any{o.id, o.score})
		}
	}
	if err := s.updateByID(ctx, tx, "sessions", []string{"left_at BIGINT", "score BIGINT"}, ended); err != nil {
		return err
	}
	if err := s.updateByID(ctx, tx, "sessions", []string{"score BIGINT"}, scores); err != nil {
		return err
	}
	if len(joins) == 0 {
		return nil
	}
	var names []string
	for _, j := range joins {
		if _, ok := players[j.s.player]; !ok {
			names = append(names, j.s.player)
		}
	}
	added, err := s.intern(ctx, tx, "players", "name", names, -1)
	if err != nil {
		return err
	}
	maps.Copy(added, players)
	players = added
	type key struct{ server, player, joined int64 }
	pending := make(map[key][]*openSession)
	args := make([]any, 0, len(joins)*5)
	for _, j := range joins {
		pid := players[j.s.player]
		var left any
		if j.s.left != 0 {
			left = j.s.left
		}
		args = append(args, j.server, pid, j.s.joined, left, j.s.score)
		k := key{j.server, pid, j.s.joined}
		pending[k] = append(pending[k], j.s)
	}
	per := s.chunkRows(5)
	for len(args) > 0 {
		n := min(per, len(args)/5)
		query := "INSERT INTO sessions (server, player, joined_at, left_at, score) VALUES " + valuesRows(n, 5) +
			" RETURNING id, server, player, joined_at"
		// Rows come back in no set order; sessions with the same server,
		// player and join time are alike, so any of their ids will do.
		err := eachRow(ctx, tx, s.q(query), args[:n*5], func(r *sql.Rows) error {
			var id int64
			var k key
			if err := r.Scan(&id, &k.server, &k.player, &k.joined); err != nil {
				return err
			}
			if list := pending[k]; len(list) > 0 {
				list[0].id = id
				pending[k] = list[1:]
			}
			return nil
		})
		if err != nil {
			return err
		}
		args = args[n*5:]
	}
	return nil
}

// internStrings returns the ids of map and version texts, adding the
// missing ones, and marks them used on day. It returns the cache
// entries to keep once the transaction commits.
func (s *db) internStrings(ctx context.Context, tx *sql.Tx, values []string, day int64) (map[string]int64, map[string]internedString, error) {
	ids := make(map[string]int64, len(values))
	cache := make(map[string]internedString)
	var stale []any
	var missing []string
	for _, v := range values {
		c, ok := s.w.strs[v]
		switch {
		case !ok:
			missing = append(missing, v)
		case c.seen < day:
			stale = append(stale, c.id)
			fallthrough
		default:
			ids[v] = c.id
		}
	}
	found, err := s.intern(ctx, tx, "strings", "value", missing, day)
	if err != nil {
		return nil, nil, err
	}
	for v, id := range found {
		ids[v] = id
		stale = append(stale, id)
	}
	for len(stale) > 0 {
		n := min(500, len(stale))
		args := append([]any{day}, stale[:n]...)
		args = append(args, day)
		if _, err := tx.ExecContext(ctx, s.q("UPDATE strings SET seen = ? WHERE id IN "+inList(n)+" AND seen < ?"), args...); err != nil {
			return nil, nil, err
		}
		stale = stale[n:]
	}
	for _, v := range values {
		if c, ok := s.w.strs[v]; !ok || c.seen < day {
			cache[v] = internedString{ids[v], day}
		}
	}
	return ids, cache, nil
}

// lookup returns the ids of the values of table's column col that it
// has.
func (s *db) lookup(ctx context.Context, tx *sql.Tx, table, col string, values []string) (map[string]int64, error) {
	ids := make(map[string]int64, len(values))
	for rest := values; len(rest) > 0; {
		n := min(500, len(rest))
		args := make([]any, n)
		for i, v := range rest[:n] {
			args[i] = v
		}
		if err := eachRow(ctx, tx, s.q("SELECT id, "+col+" FROM "+table+" WHERE "+col+" IN "+inList(n)), args, scanIDs(ids)); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	return ids, nil
}

// scanIDs reads rows of an id and a value into ids, by value.
func scanIDs(ids map[string]int64) func(*sql.Rows) error {
	return func(r *sql.Rows) error {
		var id int64
		var v string
		if err := r.Scan(&id, &v); err != nil {
			return err
		}
		ids[v] = id
		return nil
	}
}

// intern returns the ids of values in table's column col, inserting the
// missing ones (with seen, when it is not negative).
func (s *db) intern(ctx context.Context, tx *sql.Tx, table, col string, values []string, seen int64) (map[string]int64, error) {
	ids, err := s.lookup(ctx, tx, table, col, values)
	if err != nil {
		return nil, err
	}
	scan := scanIDs(ids)
	var add []any
	added := make(map[string]bool)
	// Sorted: writers that add the same new values wait for one another
	// instead of deadlocking on the unique index.
	for _, v := range slices.Sorted(slices.Values(values)) {
		if _, ok := ids[v]; !ok && !added[v] {
			added[v] = true
			add = append(add, v)
			if seen >= 0 {
				add = append(add, seen)
			}
		}
	}
	cols, head := 1, "INSERT INTO "+table+" ("+col+") VALUES "
	if seen >= 0 {
		cols, head = 2, "INSERT INTO "+table+" ("+col+", seen) VALUES "
	}
	per := s.chunkRows(cols)
	for len(add) > 0 {
		n := min(per, len(add)/cols)
		if err := eachRow(ctx, tx, s.q(head+valuesRows(n, cols)+" ON CONFLICT ("+col+") DO NOTHING RETURNING id, "+col), add[:n*cols], scan); err != nil {
			return nil, err
		}
		add = add[n*cols:]
	}
	// Another writer of the database (a worker of a fleet that shares
	// it) may have added some of them since the lookup: theirs stand,
	// and are read.
	var theirs []string
	for v := range added {
		if _, ok := ids[v]; !ok {
			theirs = append(theirs, v)
		}
	}
	if len(theirs) > 0 {
		found, err := s.lookup(ctx, tx, table, col, theirs)
		if err != nil {
			return nil, err
		}
		maps.Copy(ids, found)
	}
	return ids, nil
}

// updateByID sets columns of rows of table by id: each row is the id and
// a value per column; cols are "name TYPE".
func (s *db) updateByID(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	// By id: writers that update the same rows lock them in one order.
	slices.SortFunc(rows, func(a, b []any) int { return cmp.Compare(a[0].(int64), b[0].(int64)) })
	if !s.d.joinUpdates() {
		return s.updateEach(ctx, tx, table, cols, rows)
	}
	var set []string
	row := "CAST(? AS BIGINT)"
	for i, c := range cols {
		name, typ, _ := strings.Cut(c, " ")
		set = append(set, fmt.Sprintf("%s = v.column%d", name, i+2))
		row += ", CAST(? AS " + typ + ")"
	}
	width := len(cols) + 1
	per := s.chunkRows(width)
	for len(rows) > 0 {
		n := min(per, len(rows))
		args := make([]any, 0, n*width)
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		values := strings.TrimSuffix(strings.Repeat("("+row+"), ", n), ", ")
		query := "UPDATE " + table + " SET " + strings.Join(set, ", ") + " FROM (VALUES " + values + ") AS v WHERE " + table + ".id = v.column1"
		if _, err := tx.ExecContext(ctx, s.q(query), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// updateEach is updateByID one row at a time, with one prepared
// statement: for SQLite, where a statement is no round trip and the
// planner does not turn a join with VALUES into lookups by id.
func (s *db) updateEach(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	var set []string
	for _, c := range cols {
		name, _, _ := strings.Cut(c, " ")
		set = append(set, name+" = ?")
	}
	stmt, err := tx.PrepareContext(ctx, s.q("UPDATE "+table+" SET "+strings.Join(set, ", ")+" WHERE id = ?"))
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, len(cols)+1)
	for _, r := range rows {
		copy(args, r[1:])
		args[len(cols)] = r[0]
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}
