package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// usedBytes is the space the database's rows take: SQLite's pages in
// use (free pages apart), or PostgreSQL's tables, indexes and TOAST of
// the store's schema after a VACUUM FULL (a simulation writes faster
// than autovacuum keeps up).
func usedBytes(tb testing.TB, s *db) int64 {
	tb.Helper()
	ctx := context.Background()
	var n int64
	if _, ok := s.d.(sqliteDialect); ok {
		var pages, free, size int64
		for q, dst := range map[string]*int64{"PRAGMA page_count": &pages, "PRAGMA freelist_count": &free, "PRAGMA page_size": &size} {
			if err := s.wdb.QueryRowContext(ctx, q).Scan(dst); err != nil {
				tb.Fatal(err)
			}
		}
		return (pages - free) * size
	}
	// The schema's tables only: a VACUUM FULL of the whole database
	// waits on, and deadlocks with, whatever else uses it.
	tables, err := column[string](ctx, s.wdb, `SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := s.wdb.ExecContext(ctx, "VACUUM FULL "+strings.Join(tables, ", ")); err != nil {
		tb.Fatal(err)
	}
	err = s.wdb.QueryRowContext(ctx, `SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'`).Scan(&n)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// hostile is a server that answers every poll with a new map, a new
// version and 64 new player names, each as long as the store keeps
// (256 bytes): the most a server can make the store keep per poll.
type hostile struct {
	name string
	n    int
}

func (h *hostile) poll(at time.Time) Sample {
	text := func() string {
		h.n++
		s := fmt.Sprintf("%s-%d-", h.name, h.n)
		return s + strings.Repeat("x", maxText-len(s))
	}
	smp := up(h.name, at, 64)
	smp.Map, smp.Version = text(), text()
	smp.PlayerList = make([]PlayerSeen, 64)
	for i := range smp.PlayerList {
		smp.PlayerList[i] = PlayerSeen{Name: text(), Score: int64(i)}
	}
	return smp
}

// worst is the server that makes the store keep the most its budget
// allows: every poll lists 32 new names of 256 bytes (spending the hour's
// name bytes), then 32 short names it listed two polls before (their
// sessions start again: spending the hour's sessions on names the store
// has), and a new map and version (spending its changes).
type worst struct {
	hostile
	polls int
}

func (w *worst) poll(at time.Time) Sample {
	smp := w.hostile.poll(at)
	w.polls++
	smp.PlayerList = smp.PlayerList[:32]
	for i := range 32 {
		smp.PlayerList = append(smp.PlayerList, PlayerSeen{Name: fmt.Sprintf("%s-%d-%d", w.name, w.polls%2, i)})
	}
	return smp
}

// honest is a busy server: 100 slots always full, players who stay 20
// minutes on average (a new player in 3 of 10 joins, else one of 3,000
// regulars), and a map change every 10 minutes whose first poll lists
// no one (the map loading): every session ends there and starts again.
// It keeps what each poll listed, to tell what the sessions must be.
type honest struct {
	name   string
	rng    *rand.Rand
	on     map[string]time.Time // player: leaves at
	newID  int
	maps   int
	lists  [][]string
	times  []time.Time
	mapsAt []time.Time
}

func newHonest(name string, seed uint64) *honest {
	return &honest{name: name, rng: rand.New(rand.NewPCG(seed, 1)), on: make(map[string]time.Time)}
}

func (h *honest) poll(at time.Time) Sample {
	for p, leave := range h.on {
		if !at.Before(leave) {
			delete(h.on, p)
		}
	}
	for len(h.on) < 100 {
		name := fmt.Sprintf("regular-%04d", h.rng.IntN(3000))
		if h.rng.IntN(10) < 3 {
			h.newID++
			name = fmt.Sprintf("newcomer-%s-%d", h.name, h.newID)
		}
		if _, dup := h.on[name]; !dup {
			h.on[name] = at.Add(time.Duration(h.rng.ExpFloat64() * float64(20*time.Minute)))
		}
	}
	smp := up(h.name, at, len(h.on))
	change := at.Sub(t0)%(10*time.Minute) == 0
	if change {
		h.maps++
		h.mapsAt = append(h.mapsAt, at)
	}
	smp.Map = fmt.Sprintf("de_map%d", h.maps%7)
	list := []string{}
	if !change {
		for p := range h.on {
			list = append(list, p)
		}
		slices.Sort(list)
	}
	smp.PlayerList = make([]PlayerSeen, len(list))
	for i, p := range list {
		smp.PlayerList[i] = PlayerSeen{Name: p, Score: int64(i)}
	}
	h.lists = append(h.lists, list)
	h.times = append(h.times, at)
	return smp
}

// sessions are the sessions the polls make, as sessionsText writes
// them but in seconds from t0: a player's session runs from the first
// poll that lists them to the first that does not.
func (h *honest) sessions() []string {
	var out []string
	open := map[string]time.Time{}
	for i, list := range h.lists {
		at := h.times[i]
		now := map[string]bool{}
		for _, p := range list {
			now[p] = true
			if _, ok := open[p]; !ok {
				open[p] = at
			}
		}
		for p, joined := range open {
			if !now[p] {
				out = append(out, fmt.Sprintf("%s %d-%d", p, joined.Sub(t0)/time.Second, at.Sub(t0)/time.Second))
				delete(open, p)
			}
		}
	}
	for p, joined := range open {
		out = append(out, fmt.Sprintf("%s %d--", p, joined.Sub(t0)/time.Second))
	}
	slices.Sort(out)
	return out
}

// storedSessions are the server's sessions in the store, as sessions
// writes them.
func storedSessions(t testing.TB, st Store, server string, to time.Time) []string {
	t.Helper()
	list, err := st.Sessions(context.Background(), SessionQuery{Server: server, To: to, Limit: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(list))
	for i, x := range list {
		left := "-"
		if x.Left != nil {
			left = fmt.Sprint(int64(x.Left.Sub(t0) / time.Second))
		}
		out[i] = fmt.Sprintf("%s %d-%s", x.Player, x.Joined.Sub(t0)/time.Second, left)
	}
	slices.Sort(out)
	return out
}

// presence turns each server's player lists into the session changes
// the monitor's Tracker makes of them, as the store receives them: a
// multiset difference from the server's previous list, and everyone
// leaving when last listed after a gap of more than five minutes. A
// sample no newer than the server's last makes none.
type presence struct {
	on   map[string][]string // by server: the names listed last
	last map[string]time.Time
}

func newPresence() *presence {
	return &presence{on: make(map[string][]string), last: make(map[string]time.Time)}
}

func (pr *presence) changes(smp *Sample) {
	last := pr.last[smp.Server]
	if !smp.Time.After(last) {
		return
	}
	before := pr.on[smp.Server]
	if !last.IsZero() && smp.Time.Sub(last) > 5*time.Minute {
		for _, name := range before {
			smp.Sessions = append(smp.Sessions, SessionChange{Player: name, Left: true, Time: last})
		}
		before = nil
	}
	count := make(map[string]int)
	for _, name := range before {
		count[name]++
	}
	var now []string
	for _, p := range smp.PlayerList {
		now = append(now, p.Name)
		if count[p.Name] > 0 {
			count[p.Name]--
			continue
		}
		smp.Sessions = append(smp.Sessions, SessionChange{Player: p.Name})
	}
	for _, name := range before {
		if count[name] > 0 {
			count[name]--
			smp.Sessions = append(smp.Sessions, SessionChange{Player: name, Left: true})
		}
	}
	pr.on[smp.Server], pr.last[smp.Server] = now, smp.Time
}

// pollEvery10s polls servers every 10 s from t0 for d, a Write a round and
// Maintain every minute, as the monitor does.
func pollEvery10s(tb testing.TB, st Store, d time.Duration, polls ...func(time.Time) Sample) {
	tb.Helper()
	pollFrom(tb, st, newPresence(), t0, d, polls...)
}

// pollFrom is pollEvery10s from a time, with the session changes made
// from what the servers listed before.
func pollFrom(tb testing.TB, st Store, pr *presence, from time.Time, d time.Duration, polls ...func(time.Time) Sample) {
	tb.Helper()
	ctx := context.Background()
	for at := from; at.Before(from.Add(d)); at = at.Add(10 * time.Second) {
		round := make([]Sample, len(polls))
		for i, poll := range polls {
			round[i] = poll(at)
			pr.changes(&round[i])
		}
		if err := st.Write(ctx, round); err != nil {
			tb.Fatal(err)
		}
		if at.Sub(t0)%time.Minute == 0 {
			if err := st.Maintain(ctx, at); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// TestHostileServerCannotGrowTheStoreWithoutBound: for two simulated
// hours, one server answers every poll with 64 new player names of 256
// bytes, a new map and a new version (hostile), another spends every
// budget it has (worst), and a busy honest server is polled beside them.
// The hostile ones get what their budget allows an hour and no more,
// what they lose is counted and logged once a server an hour, the worst
// one grows the database by at most 5 MB a day (9 MB in PostgreSQL), and
// the honest server's history is exact.
func TestHostileServerCannotGrowTheStoreWithoutBound(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		var mu sync.Mutex
		var lines []string
		st := e.open(t, WithLogf(func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		}))
		syncNames(t, st, "hostile", "worst", "fair")
		fair := newHonest("fair", 3)
		pollEvery10s(t, st, 2*time.Hour, (&hostile{name: "hostile"}).poll, (&worst{hostile: hostile{name: "worst"}}).poll, fair.poll)
		end := t0.Add(2 * time.Hour)

		b, polls := DefaultBudget, int64(2*360)
		count := func(server string) (sessions, maps int) {
			list, err := st.Sessions(ctx, SessionQuery{Server: server, To: end, Limit: 1 << 30})
			must(t, err)
			changes, err := st.Maps(ctx, server, t0, end)
			must(t, err)
			return len(list), len(changes)
		}
		refused := st.Refused()
		// Every poll changes the map and the version: 15 polls an hour
		// keep both.
		if n, m := count("hostile"); n != 2*b.NameBytes/maxText || m != b.Changes {
			t.Errorf("hostile: %d sessions and %d map changes, want %d and %d", n, m, 2*b.NameBytes/maxText, b.Changes)
		}
		if r := refused["hostile"]; r.Names != 64*polls-int64(2*b.NameBytes/maxText) || r.Sessions != 0 || r.Changes != 2*polls-int64(2*b.Changes) {
			t.Errorf("hostile: refused %+v", r)
		}
		if n, m := count("worst"); n > 2*b.Sessions || n < 2*b.Sessions-64 || m != b.Changes {
			t.Errorf("worst: %d sessions and %d map changes, want %d and %d", n, m, 2*b.Sessions, b.Changes)
		}
		if r := refused["worst"]; r.Names == 0 || r.Sessions == 0 || r.Changes != 2*polls-int64(2*b.Changes) {
			t.Errorf("worst: refused %+v", r)
		}
		if r, ok := refused["fair"]; ok {
			t.Errorf("the honest server had %+v refused", r)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(lines) != 4 || !strings.Contains(lines[0], "went over its budget for the hour from 2026-03-02 00:00 UTC") {
			t.Errorf("log: %d lines, want one a hostile server an hour:\n%s", len(lines), strings.Join(lines, "\n"))
		}
		if got, want := storedSessions(t, st, "fair", end), fair.sessions(); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("the honest server has %d sessions stored, its polls made %d", len(got), len(want))
			for i := range min(len(got), len(want)) {
				if got[i] != want[i] {
					t.Errorf("first difference: stored %q, made %q", got[i], want[i])
					break
				}
			}
		}
		if _, m := count("fair"); m != len(fair.mapsAt) {
			t.Errorf("the honest server has %d map changes stored, it made %d", m, len(fair.mapsAt))
		}
		must(t, st.Check(ctx))

		// The worst server alone, in a database of its own: 24 times its
		// growth in its second hour is its day (the first pays for the
		// tables' first pages; BenchmarkServerDay measures a whole day).
		// PostgreSQL keeps the same rows in more space: its tuple headers
		// and separate indexes.
		alone, limit := filepath.Join(t.TempDir(), "alone.db"), int64(5_000_000)
		if e.name == "postgres" {
			alone, limit = postgresTestDSN(t, ""), 9_000_000
		}
		st2 := engine{name: e.name, dsn: alone}.open(t)
		syncNames(t, st2, "worst")
		w, pr := &worst{hostile: hostile{name: "worst"}}, newPresence()
		pollFrom(t, st2, pr, t0, time.Hour, w.poll)
		before := usedBytes(t, st2)
		pollFrom(t, st2, pr, t0.Add(time.Hour), time.Hour, w.poll)
		perDay := (usedBytes(t, st2) - before) * 24
		t.Logf("the worst server adds %d bytes a day", perDay)
		if perDay > limit {
			t.Errorf("the worst server adds %d bytes a day, more than %d", perDay, limit)
		}
	})
}

// BenchmarkServerDay measures what one server adds to the store in a
// simulated day of polls every 10 s (Maintain every minute): a hostile
// one (64 new names of 256 bytes, a new map and a new version every
// poll), the worst one (spending every budget), and a busy honest one,
// each in a database of its own; and, for comparison, an hour of the
// hostile one with no budget.
//
//	GSQ_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test ./store/ -run '^$' -bench ServerDay -benchtime 1x
func BenchmarkServerDay(b *testing.B) {
	for _, name := range benchEngines() {
		for _, kind := range []string{"hostile", "worst", "honest", "hostile-no-budget"} {
			b.Run(name+"/"+kind, func(b *testing.B) {
				for range b.N {
					e := newDatabase(b, name)
					span, unit, budget := 24*time.Hour, "bytes/server/day", Budget{}
					if kind == "hostile-no-budget" {
						span, unit, budget = time.Hour, "bytes/server/hour", Budget{Sessions: -1, NameBytes: -1, Changes: -1}
					}
					st, err := Open(context.Background(), e.dsn, WithBudget(budget))
					if err != nil {
						b.Fatal(err)
					}
					if err := st.SyncServers(context.Background(), []Server{{Name: kind}}); err != nil {
						b.Fatal(err)
					}
					before := usedBytes(b, st.(*db))
					poll := (&hostile{name: kind}).poll
					var fair *honest
					switch kind {
					case "worst":
						poll = (&worst{hostile: hostile{name: kind}}).poll
					case "honest":
						fair = newHonest(kind, 3)
						poll = fair.poll
					}
					pollEvery10s(b, st, span, poll)
					b.ReportMetric(float64(usedBytes(b, st.(*db))-before), unit)
					list, err := st.Sessions(context.Background(), SessionQuery{Server: kind, To: t0.Add(span), Limit: 1 << 30})
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(float64(len(list)), "sessions")
					if fair != nil && len(list) != len(fair.sessions()) {
						b.Errorf("the honest server has %d sessions stored, its polls made %d", len(list), len(fair.sessions()))
					}
					st.Close()
				}
			})
		}
	}
}

// TestBudgetIsPerClockHour: a budget of 3 sessions, 12 bytes of new
// names and 2 changes an hour. What goes over is refused and counted,
// known names cost no name bytes, the next clock hour starts afresh, and
// a negative budget is none.
func TestBudgetIsPerClockHour(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t, WithBudget(Budget{Sessions: 3, NameBytes: 12, Changes: 2}))
		syncNames(t, st, "s", "free")
		sessions := func(st Store, server string) []Session {
			list, err := st.Sessions(ctx, SessionQuery{Server: server, To: min_(70)})
			must(t, err)
			return list
		}
		pr := newPresence()
		poll := func(at time.Time, m string, players ...string) {
			smp := withPlayers("s", at, players...)
			smp.Map = m
			pr.changes(&smp)
			must(t, st.Write(ctx, []Sample{smp}))
		}
		poll(min_(0), "a", "alice", "bob", "carol")  // the map and version: 2 changes; carol's 5 bytes are 1 too many
		poll(min_(1), "b", "alice", "bob", "dave")   // the change refused; dave is the 3rd session, 12th byte
		poll(min_(2), "a", "alice")                  // back to a: no change
		poll(min_(3), "a", "alice", "bob")           // bob is known, but the sessions are spent
		poll(min_(60), "b", "alice", "bob", "carol") // a new hour (and a gap: alice left at 3)
		poll(min_(61), "c", "alice", "bob", "carol")
		poll(min_(62), "d", "alice", "bob", "carol") // the hour's 2 changes are spent
		poll(min_(10), "z", "alice")                 // a late sample starts no hour afresh
		want := "alice 0-3 0\nalice 60-- 0\nbob 0-2 0\nbob 60-- 0\ncarol 60-- 0\ndave 1-2 0"
		if got := sessionsText(sessions(st, "s")); got != want {
			t.Errorf("sessions:\n%s\nwant\n%s", got, want)
		}
		changes, err := st.Maps(ctx, "s", t0, min_(70))
		must(t, err)
		var got []string
		for _, m := range changes {
			got = append(got, fmt.Sprintf("%s@%d", m.Map, m.Time.Sub(t0)/time.Minute))
		}
		if strings.Join(got, " ") != "a@0 b@60 c@61" {
			t.Errorf("map changes: %v", got)
		}
		var maps []string
		must(t, st.EachSample(ctx, Span{Server: "s"}, func(smp Sample) error { maps = append(maps, smp.Map); return nil }))
		if strings.Join(maps, ",") != "a,,a,a,,b,c," {
			t.Errorf("the samples' maps: %q (a change refused keeps none)", maps)
		}
		if r := st.Refused()["s"]; r != (Refusals{Sessions: 1, Names: 1, Changes: 3}) {
			t.Errorf("refused %+v, want 1 session (bob at 3), 1 name (carol at 0), 3 changes (b at 1, d at 62, z at 10)", r)
		}

		free := e.open(t, WithBudget(Budget{Sessions: -1, NameBytes: -1, Changes: -1}))
		var round []Sample
		for i := range 50 {
			smp := withPlayers("free", min_(i), fmt.Sprint("player-", i))
			smp.Map = fmt.Sprint("map-", i)
			pr.changes(&smp)
			round = append(round, smp)
		}
		must(t, free.Write(ctx, round))
		if n := len(sessions(free, "free")); n != 50 || len(free.Refused()) != 0 {
			t.Errorf("no budget: %d sessions, refused %v", n, free.Refused())
		}
	})
}
