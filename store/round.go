package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
)

// rawRow is a sample as the samples table keeps it; nil is NULL.
type rawRow struct {
	t, server                       int64
	up                              int64
	players, maxPlayers, bots, ping any
	mapText, versionText            string
}

// sessionJoin is a session a round opens.
type sessionJoin struct {
	server int64
	s      *openSession
}

// roundPlan is what one Write changes: the rows to write, and the
// writer's state once they are committed.
type roundPlan struct {
	rawKeys   [][2]int64
	raw       map[[2]int64]rawRow
	states    map[string]*serverState // by name: copies, in place once committed
	strs      map[string]bool         // map and version texts used
	day       int64                   // Unix day of the round's latest sample
	maps      [][]any                 // server, t, map text
	announced [][]any                 // id, name
	records   [][]any                 // id, record, record_at
	observed  map[int64]int64
	dirty     map[*openSession]bool // tracked sessions whose score or end changed
	joins     []sessionJoin
	late      map[int64]int64
}

func newRoundPlan() *roundPlan {
	return &roundPlan{
		raw:      make(map[[2]int64]rawRow),
		states:   make(map[string]*serverState),
		strs:     make(map[string]bool),
		observed: make(map[int64]int64),
		dirty:    make(map[*openSession]bool),
		late:     make(map[int64]int64),
	}
}

// orNull is n, or NULL when it is negative (not reported).
func orNull(n int64) any {
	if n < 0 {
		return nil
	}
	return n
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
		return cmp.Or(cmp.Compare(a.st.id, b.st.id), a.smp.Time.Compare(b.smp.Time))
	})
	p := newRoundPlan()
	for _, it := range items {
		st := p.states[it.name]
		if st == nil {
			st = it.st.clone()
			p.states[it.name] = st
		}
		p.add(st, it.smp, s.w.marks.rolled[LevelMinute], int64(s.opts.sessionGap.Seconds()))
	}
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("write", err)
	}
	defer tx.Rollback()
	strs, err := p.exec(ctx, s, tx)
	if err != nil {
		return s.fail("write", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("write", err)
	}
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

// add plans one sample of a server, st being the plan's copy of its state.
func (p *roundPlan) add(st *serverState, smp *Sample, rolledMinute, gap int64) {
	t := smp.Time.Unix()
	p.day = max(p.day, floorDiv(t, day))
	row := rawRow{t: t, server: st.id}
	if smp.Up {
		row.up = 1
		row.players = orNull(int64(smp.Players))
		row.maxPlayers = orNull(int64(smp.MaxPlayers))
		row.bots = orNull(int64(smp.Bots))
		if smp.Ping >= 0 {
			row.ping = min(smp.Ping.Microseconds(), math.MaxInt32)
		}
		row.mapText = clean(smp.Map, maxText)
		row.versionText = clean(smp.Version, maxText)
		for _, v := range []string{row.mapText, row.versionText} {
			if v != "" {
				p.strs[v] = true
			}
		}
	}
	key := [2]int64{t, st.id}
	if _, dup := p.raw[key]; !dup {
		p.rawKeys = append(p.rawKeys, key)
	}
	p.raw[key] = row
	if t < rolledMinute {
		if old, ok := p.late[st.id]; !ok || t < old {
			p.late[st.id] = t
		}
	}
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
	if smp.PlayerList != nil {
		p.observe(st, t, smp.PlayerList, gap)
	}
}

// observe follows a server's sessions through a poll at t that listed
// players. Players are told apart by name only; several players of the
// same name are as many sessions, matched longest-on first (the first
// to leave ends the newest session) and given the highest scores first.
func (p *roundPlan) observe(st *serverState, t int64, list []PlayerSeen, gap int64) {
	if st.lastObs != 0 && t <= st.lastObs {
		return
	}
	if len(st.open) > 0 && (st.lastObs == 0 || t-st.lastObs > gap) {
		// Unseen for longer than the gap: they left when last seen.
		for _, o := range st.open {
			o.left = max(st.lastObs, o.joined)
			p.touch(o, t)
		}
		st.open = nil
	}
	seen := make(map[string][]int64)
	for i, pl := range list {
		if i == maxPlayerList {
			break
		}
		if name := clean(pl.Name, maxText); name != "" {
			seen[name] = append(seen[name], pl.Score)
		}
	}
	for _, scores := range seen {
		slices.SortFunc(scores, func(a, b int64) int { return cmp.Compare(b, a) })
	}
	byName := make(map[string][]*openSession)
	for _, o := range st.open { // oldest first
		byName[o.player] = append(byName[o.player], o)
	}
	var open []*openSession
	for name, sessions := range byName {
		scores := seen[name]
		for i, o := range sessions {
			if i >= len(scores) {
				o.left = t
				p.touch(o, t)
				continue
			}
			o.score = scores[i]
			if o.score != o.savedScore && t-o.saved >= scoreEvery {
				p.touch(o, t)
			}
			open = append(open, o)
		}
	}
	for name, scores := range seen {
		for _, score := range scores[min(len(byName[name]), len(scores)):] {
			o := &openSession{player: name, joined: t, score: score, saved: t, savedScore: score}
			open = append(open, o)
			p.joins = append(p.joins, sessionJoin{st.id, o})
		}
	}
	sortSessions(open)
	st.open = open
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
	texts := make([]string, 0, len(p.strs))
	for v := range p.strs {
		texts = append(texts, v)
	}
	ids, cached, err := s.internStrings(ctx, tx, texts, p.day)
	if err != nil {
		return nil, err
	}
	textID := func(v string) any {
		if v == "" {
			return nil
		}
		return ids[v]
	}
	args := make([]any, 0, len(p.rawKeys)*9)
	for _, k := range p.rawKeys {
		r := p.raw[k]
		args = append(args, r.t, r.server, r.up, r.players, r.maxPlayers, r.bots, textID(r.mapText), textID(r.versionText), r.ping)
	}
	err = s.execRows(ctx, tx, "INSERT INTO samples (t, server, up, players, max_players, bots, map, version, ping)",
		"ON CONFLICT (t, server) DO UPDATE SET up = excluded.up, players = excluded.players, max_players = excluded.max_players, "+
			"bots = excluded.bots, map = excluded.map, version = excluded.version, ping = excluded.ping", 9, args)
	if err != nil {
		return nil, err
	}
	if len(p.maps) > 0 {
		args = args[:0]
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
		for id, t := range p.observed {
			args = append(args, id, t)
		}
		if err := s.execRows(ctx, tx, "INSERT INTO observed (server, t)", "ON CONFLICT (server) DO UPDATE SET t = excluded.t", 2, args); err != nil {
			return nil, err
		}
	}
	if err := s.writeSessions(ctx, tx, p.dirty, p.joins); err != nil {
		return nil, err
	}
	return cached, nil
}

// writeSessions updates the tracked sessions that changed and inserts
// the new ones, giving them their ids.
func (s *db) writeSessions(ctx context.Context, tx *sql.Tx, dirty map[*openSession]bool, joins []sessionJoin) error {
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
	names := make([]string, 0, len(joins))
	for _, j := range joins {
		names = append(names, j.s.player)
	}
	players, err := s.intern(ctx, tx, "players", "name", names, -1)
	if err != nil {
		return err
	}
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

// intern returns the ids of values in table's column col, inserting the
// missing ones (with seen, when it is not negative).
func (s *db) intern(ctx context.Context, tx *sql.Tx, table, col string, values []string, seen int64) (map[string]int64, error) {
	ids := make(map[string]int64, len(values))
	scan := func(r *sql.Rows) error {
		var id int64
		var v string
		if err := r.Scan(&id, &v); err != nil {
			return err
		}
		ids[v] = id
		return nil
	}
	for rest := values; len(rest) > 0; {
		n := min(500, len(rest))
		args := make([]any, n)
		for i, v := range rest[:n] {
			args[i] = v
		}
		if err := eachRow(ctx, tx, s.q("SELECT id, "+col+" FROM "+table+" WHERE "+col+" IN "+inList(n)), args, scan); err != nil {
			return nil, err
		}
		rest = rest[n:]
	}
	var add []any
	added := make(map[string]bool)
	for _, v := range values {
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
		if err := eachRow(ctx, tx, s.q(head+valuesRows(n, cols)+" RETURNING id, "+col), add[:n*cols], scan); err != nil {
			return nil, err
		}
		add = add[n*cols:]
	}
	return ids, nil
}

// updateByID sets columns of rows of table by id: each row is the id and
// a value per column; cols are "name TYPE".
func (s *db) updateByID(ctx context.Context, tx *sql.Tx, table string, cols []string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
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
