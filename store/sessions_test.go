package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// withPlayers is an up sample listing players ("name:score").
func withPlayers(server string, at time.Time, players ...string) Sample {
	smp := up(server, at, len(players))
	smp.PlayerList = []PlayerSeen{}
	for _, p := range players {
		name, score, _ := strings.Cut(p, ":")
		var n int64
		fmt.Sscan(score, &n)
		smp.PlayerList = append(smp.PlayerList, PlayerSeen{Name: name, Score: n})
	}
	return smp
}

// changes adds session changes to a sample: "+name" joined, "-name"
// left, "-name@7" left at minute 7.
func changes(smp Sample, list ...string) Sample {
	for _, c := range list {
		name, at, _ := strings.Cut(c[1:], "@")
		ch := SessionChange{Player: name, Left: c[0] == '-'}
		if at != "" {
			var m int
			fmt.Sscan(at, &m)
			ch.Time = min_(m)
		}
		smp.Sessions = append(smp.Sessions, ch)
	}
	return smp
}

// sessionsText lists sessions as "player joined-left score", times in
// minutes after t0, "-" while open, oldest first.
func sessionsText(list []Session) string {
	var lines []string
	for _, s := range list {
		left := "-"
		if s.Left != nil {
			left = fmt.Sprint(s.Left.Sub(t0).Minutes())
		}
		lines = append(lines, fmt.Sprintf("%s %v-%s %d", s.Player, s.Joined.Sub(t0).Minutes(), left, s.LastScore))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func min_(m int) time.Time { return t0.Add(time.Duration(m) * time.Minute) }

func TestSessions(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(min_(100))
		st := e.open(t, WithClock(clock.now))
		syncNames(t, st, "s", "other")
		rounds := []Sample{
			changes(withPlayers("s", min_(0), "alice:1", "Player:0", "Player:5"), "+alice", "+Player", "+Player"),
			changes(withPlayers("s", min_(1), "alice:3", "Player:7", "Player:2", "Player:0", "bob:0"), "+Player", "+bob"),
			// A poll that lists nobody and changes nothing.
			up("s", min_(2), 5),
			// Two of the three Players left: the newest sessions end.
			changes(withPlayers("s", min_(3), "alice:4", "Player:9", "bob:1"), "-Player", "-Player"),
			down("s", min_(4)),
			withPlayers("s", min_(6), "alice:4", "bob:2", "Player:9", ""),
			changes(withPlayers("s", min_(7), "bob:2"), "-alice", "-Player"),
			// Down: bob left when he was last listed.
			changes(down("s", min_(8)), "-bob@7"),
			changes(withPlayers("s", min_(20), "bob:0"), "+bob"),
			changes(withPlayers("other", min_(2), "alice:50"), "+alice"),
			changes(withPlayers("other", min_(3)), "-alice"),
			// A leave of nobody on is nothing.
			changes(withPlayers("other", min_(4)), "-carol"),
		}
		for _, smp := range rounds {
			must(t, st.Write(ctx, []Sample{smp}))
		}
		all, err := st.Sessions(ctx, SessionQuery{Server: "s"})
		must(t, err)
		want := strings.Join([]string{
			// The first Player to leave ends the newest session.
			"Player 0-3 2",
			"Player 0-7 9",
			"Player 1-3 0",
			"alice 0-7 4",
			"bob 1-7 2",
			"bob 20-- 0",
		}, "\n")
		if got := sessionsText(all); got != want {
			t.Errorf("sessions of s:\n%s\nwant\n%s", got, want)
		}
		for i := 1; i < len(all); i++ {
			if all[i].Joined.After(all[i-1].Joined) {
				t.Errorf("Sessions not newest first: %v after %v", all[i].Joined, all[i-1].Joined)
			}
		}
		online, err := st.OnlineAt(ctx, "s", min_(3))
		must(t, err)
		if got := sessionsText(online); got != "Player 0-7 9\nalice 0-7 4\nbob 1-7 2" {
			t.Errorf("online at 3 min:\n%s", got)
		}
		online, err = st.OnlineAt(ctx, "s", min_(21))
		must(t, err)
		if got := sessionsText(online); got != "bob 20-- 0" {
			t.Errorf("online at 21 min:\n%s", got)
		}
		alice, err := st.Sessions(ctx, SessionQuery{Player: "alice"})
		must(t, err)
		if got := sessionsText(alice); got != "alice 0-7 4\nalice 2-3 50" {
			t.Errorf("alice's sessions:\n%s", got)
		}
		limited, err := st.Sessions(ctx, SessionQuery{Server: "s", From: min_(5), To: min_(30), Limit: 1})
		must(t, err)
		if got := sessionsText(limited); got != "bob 20-- 0" {
			t.Errorf("newest session overlapping 5..30 min:\n%s", got)
		}
		total, n, err := st.PlayTime(ctx, SessionQuery{Player: "alice"})
		must(t, err)
		if total != 8*time.Minute || n != 2 {
			t.Errorf("alice played %v in %d sessions, want 8m in 2", total, n)
		}
		// Clipped to [From, To); an open session counts up to now (100 min).
		total, n, err = st.PlayTime(ctx, SessionQuery{Server: "s", Player: "bob", From: min_(5), To: min_(50)})
		must(t, err)
		if total != 32*time.Minute || n != 2 {
			t.Errorf("bob played %v in %d sessions over 5..50 min, want 32m in 2", total, n)
		}
		total, _, err = st.PlayTime(ctx, SessionQuery{Player: "bob"})
		must(t, err)
		if total != 86*time.Minute {
			t.Errorf("bob played %v, want 86m (6 + 80 until now)", total)
		}
		none, err := st.Sessions(ctx, SessionQuery{Player: "nobody"})
		must(t, err)
		if len(none) != 0 {
			t.Errorf("sessions of an unknown player: %v", none)
		}
		must(t, st.Check(ctx))
	})
}

// TestSessionsAcrossRestart: what a monitor that starts again resumes
// from (Present), and the end of the sessions of a server no longer
// watched.
func TestSessionsAcrossRestart(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s", "t")
		must(t, st.Write(ctx, []Sample{
			changes(withPlayers("s", min_(0), "alice:1"), "+alice"),
			changes(withPlayers("t", min_(0), "carol:1"), "+carol"),
		}))
		must(t, st.Write(ctx, []Sample{
			changes(withPlayers("s", min_(1), "alice:2", "bob:1", "bob:3"), "+bob", "+bob"),
			withPlayers("t", min_(1), "carol:2"),
		}))
		must(t, st.Close())

		st = e.open(t)
		present, err := st.Present(ctx)
		must(t, err)
		if got := fmt.Sprint(present["s"].Players); got != "[alice bob bob]" || !present["s"].Listed.Equal(min_(1)) {
			t.Errorf("present on s: %v at %v", present["s"].Players, present["s"].Listed)
		}
		if got := fmt.Sprint(present["t"].Players); got != "[carol]" || len(present) != 2 {
			t.Errorf("present: %v", present)
		}
		// t is no longer watched: carol left when last listed.
		syncNames(t, st, "s")
		must(t, st.Write(ctx, []Sample{changes(withPlayers("s", min_(3), "alice:5", "bob:3"), "-bob")}))
		must(t, st.Close())

		st = e.open(t)
		present, err = st.Present(ctx)
		must(t, err)
		if len(present) != 1 || fmt.Sprint(present["s"].Players) != "[alice bob]" {
			t.Errorf("present after t left the config: %v", present)
		}
		for server, want := range map[string]string{
			"s": "alice 0-- 5\nbob 1-- 3\nbob 1-3 1",
			"t": "carol 0-1 2",
		} {
			list, err := st.Sessions(ctx, SessionQuery{Server: server, To: min_(100)})
			must(t, err)
			if got := sessionsText(list); got != want {
				t.Errorf("sessions of %s:\n%s\nwant\n%s", server, got, want)
			}
		}
		must(t, st.Check(ctx))
	})
}

func TestRecordsAndMaps(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		clock := newClock(t0)
		st := e.open(t, WithClock(clock.now))
		syncNames(t, st, "s")
		var samples []Sample
		for m := 0; m < 3*24*60; m++ {
			// 20 players on the first day at 12:00, 12 on the third day at
			// 06:00 and 18:00.
			n := 2
			switch m {
			case 12 * 60:
				n = 20
			case 2*24*60 + 6*60, 2*24*60 + 18*60:
				n = 12
			}
			smp := up("s", min_(m), n)
			smp.Map = []string{"de_dust2", "de_inferno", "de_nuke"}[m/(8*60)%3]
			samples = append(samples, smp)
			if len(samples) == 60 {
				must(t, st.Write(ctx, samples))
				samples = samples[:0]
				clock.set(min_(m + 1))
				must(t, st.Maintain(ctx, min_(m+1)))
			}
		}
		rec, err := st.Records(ctx, "s")
		must(t, err)
		if rec.AllTime != 20 || !rec.AllTimeAt.Equal(min_(12*60)) || rec.Peak24h != 12 || !rec.Peak24hAt.Equal(min_(2*24*60+18*60)) {
			t.Errorf("Records = %+v", rec)
		}
		changes, err := st.Maps(ctx, "s", t0, min_(24*60))
		must(t, err)
		var got []string
		for _, c := range changes {
			got = append(got, fmt.Sprintf("%v %s", c.Time.Sub(t0), c.Map))
		}
		if want := "0s de_dust2, 8h0m0s de_inferno, 16h0m0s de_nuke"; strings.Join(got, ", ") != want {
			t.Errorf("map changes on day 1: %s, want %s", strings.Join(got, ", "), want)
		}
		// A restart does not record the current map again.
		must(t, st.Close())
		st = e.open(t, WithClock(clock.now))
		smp := up("s", min_(3*24*60), 1)
		smp.Map = "de_nuke"
		must(t, st.Write(ctx, []Sample{smp}))
		changes, err = st.Maps(ctx, "s", t0, min_(4*24*60))
		must(t, err)
		if len(changes) != 9 {
			t.Errorf("%d map changes over 3 days and a restart, want 9", len(changes))
		}
	})
}

// TestSessionsQueryAgreesWithEveryRow: the sessions query, which reads
// index ranges that stop at the limit (recentSessions), answers as a
// filter over every row would: the sessions of a server, or of all, that
// overlap [From, To), newest first (by join, then id), at most Limit.
// 3,000 sessions, open and closed, long and short, many joining at the
// same second, so that both ways of finding the sessions still on at
// From are taken.
func TestSessionsQueryAgreesWithEveryRow(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		now := t0.Add(10 * 24 * time.Hour)
		st := e.open(t, WithClock(func() time.Time { return now }))
		syncNames(t, st, "a", "b", "c")
		servers := map[int64]string{}
		must(t, eachRow(ctx, st.rdb, "SELECT id, name FROM servers", nil, func(r *sql.Rows) error {
			var id int64
			var name string
			err := r.Scan(&id, &name)
			servers[id] = name
			return err
		}))
		ids := slices.Sorted(maps.Keys(servers))
		rng := rand.New(rand.NewPCG(3, 4))
		var players, rows []any
		type row struct {
			id, joined int64
			left       *int64
			server     string
		}
		var all []row
		for i := range int64(3000) {
			joined := t0.Unix() + rng.Int64N(10*24*3600)/30*30 // on 30 s polls: many ties
			var left *int64
			if rng.IntN(20) > 0 {
				l := min(joined+rng.Int64N(4*3600), now.Unix())
				left = &l
			}
			server := ids[rng.IntN(len(ids))]
			players = append(players, i+1, fmt.Sprint("p", i))
			var l any
			if left != nil {
				l = *left
			}
			rows = append(rows, i+1, server, i+1, joined, l, 0)
			all = append(all, row{i + 1, joined, left, servers[server]})
		}
		tx, err := st.wdb.BeginTx(ctx, nil)
		must(t, err)
		must(t, st.execRows(ctx, tx, "INSERT INTO players (id, name)", "", 2, players))
		must(t, st.execRows(ctx, tx, "INSERT INTO sessions (id, server, player, joined_at, left_at, score)", "", 6, rows))
		must(t, tx.Commit())
		slices.SortFunc(all, func(a, b row) int { return cmp.Or(cmp.Compare(b.joined, a.joined), cmp.Compare(b.id, a.id)) })
		for i := range 40 {
			q := SessionQuery{Limit: []int{1, 10, 100, 1000}[i%4]}
			if i%3 > 0 {
				q.Server = servers[ids[i%len(ids)]]
			}
			switch i % 5 {
			case 0: // the last day
				q.From = now.Add(-24 * time.Hour)
			case 1: // a minute or an hour, somewhere
				q.From = t0.Add(time.Duration(rng.Int64N(10*24*3600)) * time.Second)
				q.To = q.From.Add([]time.Duration{time.Minute, time.Hour}[i%2])
			case 2: // the future
				q.From, q.To = now.Add(time.Hour), now.Add(2*time.Hour)
			case 3: // all time
			case 4: // a point: a second
				q.From = t0.Add(time.Duration(rng.Int64N(10*24*3600)) * time.Second)
				q.To = q.From.Add(time.Second)
			}
			to := q.To
			if to.IsZero() {
				to = now
			}
			var want []string
			for _, r := range all {
				if (q.Server == "" || r.server == q.Server) && r.joined < to.Unix() && (r.left == nil || *r.left > q.From.Unix()) && len(want) < q.Limit {
					want = append(want, fmt.Sprintf("%s p%d %d", r.server, r.id-1, r.joined))
				}
			}
			got, err := st.Sessions(ctx, q)
			must(t, err)
			var have []string
			for _, x := range got {
				have = append(have, fmt.Sprintf("%s %s %d", x.Server, x.Player, x.Joined.Unix()))
			}
			if strings.Join(have, "\n") != strings.Join(want, "\n") {
				t.Errorf("query %d %+v: %d sessions, want %d", i, q, len(have), len(want))
			}
		}
	})
}
