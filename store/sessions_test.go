package store

import (
	"context"
	"fmt"
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
			withPlayers("s", min_(0), "alice:1", "Player:0", "Player:5"),
			withPlayers("s", min_(1), "alice:3", "Player:7", "Player:2", "Player:0", "bob:0"),
			// A poll that did not ask for players changes nothing.
			up("s", min_(2), 5),
			withPlayers("s", min_(3), "alice:4", "Player:9", "bob:1"),
			// Down for less than the gap: sessions go on.
			down("s", min_(4)),
			withPlayers("s", min_(6), "alice:4", "bob:2", "Player:9", ""),
			withPlayers("s", min_(7), "bob:2"),
			// Down for longer than the gap (5 min): bob left when last seen.
			down("s", min_(8)),
			withPlayers("s", min_(20), "bob:0"),
			withPlayers("other", min_(2), "alice:50"),
			withPlayers("other", min_(3)),
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

func TestSessionsAcrossRestart(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t)
		syncNames(t, st, "s", "t")
		must(t, st.Write(ctx, []Sample{withPlayers("s", min_(0), "alice:1"), withPlayers("t", min_(0), "carol:1")}))
		must(t, st.Write(ctx, []Sample{withPlayers("s", min_(1), "alice:2", "bob:1"), withPlayers("t", min_(1), "carol:2")}))
		must(t, st.Close())

		// Back within the gap: sessions go on.
		st = e.open(t)
		must(t, st.Write(ctx, []Sample{withPlayers("s", min_(3), "alice:5")}))
		// The monitor stopped for an hour: t's players left when last seen.
		must(t, st.Close())
		st = e.open(t)
		must(t, st.Maintain(ctx, min_(64)))
		must(t, st.Write(ctx, []Sample{withPlayers("s", min_(65), "alice:0")}))
		for server, want := range map[string]string{
			"s": "alice 0-3 5\nalice 65-- 0\nbob 1-3 1",
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

func TestSessionGapOption(t *testing.T) {
	eachEngine(t, func(t *testing.T, e engine) {
		ctx := context.Background()
		st := e.open(t, WithSessionGap(30*time.Minute))
		syncNames(t, st, "s")
		must(t, st.Write(ctx, []Sample{withPlayers("s", min_(0), "alice:1")}))
		must(t, st.Write(ctx, []Sample{withPlayers("s", min_(20), "alice:1")}))
		must(t, st.Maintain(ctx, min_(40)))
		list, err := st.Sessions(ctx, SessionQuery{Server: "s", To: min_(100)})
		must(t, err)
		if got := sessionsText(list); got != "alice 0-- 1" {
			t.Errorf("with a 30 min gap, polls 20 min apart: %s", got)
		}
		must(t, st.Maintain(ctx, min_(51)))
		list, err = st.Sessions(ctx, SessionQuery{Server: "s", To: min_(100)})
		must(t, err)
		if got := sessionsText(list); got != "alice 0-20 1" {
			t.Errorf("31 min after the last poll: %s", got)
		}
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
