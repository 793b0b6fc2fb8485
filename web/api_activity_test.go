package web

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
)

// writeEvery writes a sample of server every step over [from, to), each
// made by fn.
func writeEvery(t *testing.T, st store.Store, server string, from, to time.Time, step time.Duration, fn func(at time.Time) store.Sample) {
	t.Helper()
	var batch []store.Sample
	for at := from; at.Before(to); at = at.Add(step) {
		s := fn(at)
		s.Server, s.Time = server, at
		batch = append(batch, s)
	}
	if err := st.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
}

// rollUp rolls the history up and drops the raw samples past their
// retention, as the monitor does.
func rollUp(t *testing.T, st store.Store) {
	t.Helper()
	if err := st.Maintain(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestAPIHeatmap: 15 days of a server whose players are the hour of the
// day in Tokyo, a hundred more on Sundays there, and one hour down: the
// heatmap in Tokyo's zone has each cell's figure from its two hours of
// the 14 days asked, and the hour down counts as no players.
func TestAPIHeatmap(t *testing.T) {
	t.Parallel()
	st := newTestStore(t)
	if err := st.SyncServers(context.Background(), []store.Server{{Name: "alpha", Target: "127.0.0.1:27015", Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no time zone database:", err)
	}
	now := time.Now()
	outage := now.Truncate(time.Hour).Add(-100 * time.Hour)
	players := func(at time.Time) int {
		l := at.In(tokyo)
		n := l.Hour()
		if l.Weekday() == time.Sunday {
			n += 100
		}
		return n
	}
	writeEvery(t, st, "alpha", now.Add(-15*24*time.Hour).Truncate(time.Hour), now, 10*time.Minute, func(at time.Time) store.Sample {
		up := at.Before(outage) || !at.Before(outage.Add(time.Hour))
		return store.Sample{Up: up, Players: players(at), MaxPlayers: 200, Bots: -1}
	})
	rollUp(t, st)
	srv, _ := newTestServer(t, st, newTestLive(upState("alpha", 1, 200, "x")), Options{TimeZone: time.UTC})

	var body heatmapBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/heatmap?days=14&tz=Asia/Tokyo", "", 200, &body)
	if body.TimeZone != "Asia/Tokyo" || body.Days != 14 {
		t.Fatalf("zone %q, days %d", body.TimeZone, body.Days)
	}
	lo := outage.In(tokyo)
	od, oh := (int(lo.Weekday())+6)%7, lo.Hour()
	for d := range 7 {
		for h := range 24 {
			if body.Hours[d][h] != 2 {
				t.Errorf("day %d hour %d: %d hours, want 2 of 14 days", d, h, body.Hours[d][h])
			}
			want := float64(h)
			if d == 6 {
				want += 100
			}
			if d == od && h == oh {
				want /= 2 // one of its two hours was down
			}
			if got := body.AvgPlayers[d][h]; got == nil || math.Abs(*got-want) > 0.01 {
				t.Errorf("day %d hour %d: %v players, want %v", d, h, got, want)
			}
		}
	}
	if body.Max != 123 {
		t.Errorf("max %v, want 123 (Sunday 23:00)", body.Max)
	}

	// The handler's zone by default: UTC here, so Tokyo's Sunday shifts
	// by 9 hours.
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/heatmap?days=14", "", 200, &body)
	if body.TimeZone != "UTC" {
		t.Errorf("default zone %q, want the handler's UTC", body.TimeZone)
	}
	// Sunday 00:00 in Tokyo is Saturday 15:00 UTC.
	if got := body.AvgPlayers[5][15]; got == nil || *got != 100 {
		t.Errorf("Saturday 15:00 UTC: %v players, want Sunday 00:00 in Tokyo's 100", got)
	}

	for _, bad := range []string{"tz=Mars/Olympus", "tz=Local", "days=0", "days=92", "days=x"} {
		var e errorBody
		testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/heatmap?"+bad, "", http.StatusBadRequest, &e)
		if e.Error.Code != "bad_parameter" {
			t.Errorf("%s: %+v", bad, e)
		}
	}
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/nobody/heatmap", "", http.StatusNotFound, &e)
}

// TestAPIMapStats: the fixture's two hours, de_dust2 then de_inferno
// with ten minutes down: each map's time up and average players.
func TestAPIMapStats(t *testing.T) {
	t.Parallel()
	st, live, hour := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})
	var body mapStatsBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/map-stats?from=-3h", "", 200, &body)
	if body.StepSeconds != 60 || len(body.Maps) != 2 {
		t.Fatalf("step %v, maps %+v", body.StepSeconds, body.Maps)
	}
	// de_dust2: the polls 120 to 60 minutes before the hour, all up;
	// de_inferno: 59 to 1, less 50 to 41, down.
	avg := func(from, to int, skip func(int) bool) float64 {
		var sum, n float64
		for i := from; i <= to; i++ {
			if !skip(i) {
				sum += float64(i % 10)
				n++
			}
		}
		return math.Round(sum/n*100) / 100
	}
	want := []mapStat{
		{Map: "de_dust2", Seconds: 61 * 60, AvgPlayers: avg(60, 120, func(int) bool { return false })},
		{Map: "de_inferno", Seconds: 49 * 60, AvgPlayers: avg(1, 59, func(i int) bool { return i >= 41 && i <= 50 })},
	}
	for i, w := range want {
		w.Share = math.Round(w.Seconds/(110*60)*10000) / 10000
		if body.Maps[i] != w {
			t.Errorf("map %d: %+v, want %+v", i, body.Maps[i], w)
		}
	}
	// A range within de_inferno's time: all of it is de_inferno's, though
	// the change was before it.
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/map-stats?from="+strconv.FormatInt(hour.Add(-30*time.Minute).Unix(), 10), "", 200, &body)
	if len(body.Maps) != 1 || body.Maps[0].Map != "de_inferno" || body.Maps[0].Seconds != 30*60 {
		t.Errorf("the last 30 minutes: %+v", body.Maps)
	}
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/map-stats?from=-400d", "", http.StatusBadRequest, &e)
}

// TestAPIRank: three servers of one game and one of another, ranked by
// their average players over 7 days, a poll down counting as none; the
// history shows the rank before a busier server came.
func TestAPIRank(t *testing.T) {
	t.Parallel()
	st := newTestStore(t)
	var known []store.Server
	for _, n := range []string{"a", "b", "c", "d"} {
		known = append(known, store.Server{Name: n, Target: "127.0.0.1:1", Protocol: "a2s"})
	}
	if err := st.SyncServers(context.Background(), known); err != nil {
		t.Fatal(err)
	}
	end := time.Now().UTC().Truncate(24 * time.Hour)
	now := time.Now()
	hourly := func(players int, down func(time.Time) bool) func(time.Time) store.Sample {
		return func(at time.Time) store.Sample {
			return store.Sample{Up: !down(at), Players: players, MaxPlayers: 100, Bots: -1}
		}
	}
	never := func(time.Time) bool { return false }
	writeEvery(t, st, "a", end.Add(-10*24*time.Hour), now, time.Hour, hourly(10, never))
	// b has more players, but is down every other hour: 6 on average.
	writeEvery(t, st, "b", end.Add(-10*24*time.Hour), now, time.Hour, hourly(12, func(at time.Time) bool { return at.Hour()%2 == 0 }))
	writeEvery(t, st, "c", end.Add(-3*24*time.Hour), now, time.Hour, hourly(20, never))
	writeEvery(t, st, "d", end.Add(-10*24*time.Hour), now, time.Hour, hourly(100, never))
	rollUp(t, st)

	other := upState("d", 100, 100, "x")
	other.Summary.Game = ptr("Rust")
	live := newTestLive(upState("a", 1, 100, "x"), upState("b", 1, 100, "x"), upState("c", 1, 100, "x"), other)
	srv, h := newTestServer(t, st, live, Options{})

	var body rankBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/a/rank", "", 200, &body)
	if body.Game != "Counter-Strike 2" || body.By != "game" || len(body.History) != 30 {
		t.Fatalf("game %q by %q, %d days", body.Game, body.By, len(body.History))
	}
	if body.Rank == nil || *body.Rank != 2 || body.Of != 3 || body.AvgPlayers == nil || *body.AvgPlayers != 10 {
		t.Errorf("yesterday: rank %v of %d, avg %v; want 2 of 3 (c is busier), 10", body.Rank, body.Of, body.AvgPlayers)
	}
	if got := time.Time(body.Day); !got.Equal(end.Add(-24 * time.Hour)) {
		t.Errorf("the rank is for %v, want yesterday %v", got, end.Add(-24*time.Hour))
	}
	hist := body.History
	// Five days ago c had no poll in the week to it.
	if d := hist[len(hist)-5]; d.Rank == nil || *d.Rank != 1 || d.Of != 2 {
		t.Errorf("five days ago: rank %v of %d, want 1 of 2", d.Rank, d.Of)
	}
	// Twelve days ago a had no poll in the week to it.
	if d := hist[len(hist)-12]; d.Rank != nil || d.Of != 0 {
		t.Errorf("twelve days ago: rank %v of %d, want none of 0", d.Rank, d.Of)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/b/rank?days=3", "", 200, &body)
	if body.Rank == nil || *body.Rank != 3 || body.AvgPlayers == nil || *body.AvgPlayers != 6 || len(body.History) != 3 {
		t.Errorf("b: rank %v avg %v, %d days; want 3, 6 (half its polls down), 3", body.Rank, body.AvgPlayers, len(body.History))
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/d/rank", "", 200, &body)
	if body.Game != "Rust" || body.Rank == nil || *body.Rank != 1 || body.Of != 1 {
		t.Errorf("d: %q rank %v of %d, want Rust 1 of 1", body.Game, body.Rank, body.Of)
	}
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/a/rank?days=91", "", http.StatusBadRequest, &e)
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/nobody/rank", "", http.StatusNotFound, &e)

	// The day after, the ranks of the day before are answered at once,
	// and read again in the background.
	h.ranks.mu.Lock()
	h.ranks.end -= 86400
	h.ranks.tried = time.Time{}
	h.ranks.mu.Unlock()
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/a/rank", "", 200, &body)
	if got := time.Time(body.Day); !got.Equal(end.Add(-48 * time.Hour)) {
		t.Errorf("from the old days: the rank is for %v, want %v", got, end.Add(-48*time.Hour))
	}
	deadline := time.Now().Add(testutil.Bound)
	for {
		testutil.GetJSON(t, srv.URL+"/api/v1/servers/a/rank", "", 200, &body)
		if time.Time(body.Day).Equal(end.Add(-24 * time.Hour)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ranks were not read again: still for %v", time.Time(body.Day))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// UnmarshalJSON reads a jsonTime back, for the tests.
func (t *jsonTime) UnmarshalJSON(b []byte) error {
	var tt *time.Time
	if err := json.Unmarshal(b, &tt); err != nil {
		return err
	}
	if tt != nil {
		*t = jsonTime(*tt)
	}
	return nil
}

// TestAPISparklines: the list's rows ask for several servers' last 24
// hours by hour at once; each hour is the average of its polls up.
func TestAPISparklines(t *testing.T) {
	t.Parallel()
	st, live, hour := apiFixture(t)
	a, _ := live.Server("alpha")
	a.RecentPolls = "1101"
	live.set(a)
	srv, _ := newTestServer(t, st, live, Options{})
	var body sparklinesBody
	testutil.GetJSON(t, srv.URL+"/api/v1/sparklines?server=alpha&server=retired&server=nobody", "", 200, &body)
	line := body.Servers["alpha"]
	if len(body.Servers) != 2 || len(line) != 24 || body.Servers["retired"] == nil {
		t.Fatalf("servers %v; alpha %d hours", body.Servers, len(line))
	}
	avg := func(from, to int) float64 {
		var sum, n float64
		for i := from; i <= to; i++ {
			if i < 41 || i > 50 {
				sum += float64(i % 10)
				n++
			}
		}
		return math.Round(sum/n*10) / 10
	}
	// The whole hours end at the current hour's start, the fixture's
	// polls a minute before the hour of its making: the same hour, or
	// the one before.
	last := 23
	if time.Now().Truncate(time.Hour).After(hour) {
		last = 22
		if line[23] != nil {
			t.Errorf("the hour after the polls: %v", *line[23])
		}
	}
	for i, want := range map[int]float64{last: avg(1, 60), last - 1: avg(61, 120)} {
		if line[i] == nil || *line[i] != want {
			t.Errorf("hour %d: %v, want %v", i, line[i], want)
		}
	}
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/sparklines", "", http.StatusBadRequest, &e)
	many := "server=a"
	for range maxSparklines {
		many += "&server=a"
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/sparklines?"+many, "", http.StatusBadRequest, &e)

	// The bar of the last polls comes with the list.
	var list struct{ Servers []map[string]any }
	testutil.GetJSON(t, srv.URL+"/api/v1/servers", "", 200, &list)
	if list.Servers[0]["recent_polls"] != "1101" {
		t.Errorf("alpha's recent_polls %v, want 1101", list.Servers[0]["recent_polls"])
	}
	if _, ok := list.Servers[1]["recent_polls"]; ok {
		t.Error("beta, never polled by the monitor, has recent_polls")
	}
}
