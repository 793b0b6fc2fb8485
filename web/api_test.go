package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// apiFixture is a store with two hours of history for "alpha" at one
// poll a minute: up with 0..9 players, except down from 50 to 41 minutes
// ago; Alice and Bob played, and the map changed once.
func apiFixture(t *testing.T) (store.Store, *testLive, time.Time) {
	t.Helper()
	st := newTestStore(t)
	now := time.Now().Truncate(time.Hour)
	if err := st.SyncServers(context.Background(), []store.Server{{Name: "alpha", Target: "127.0.0.1:27015", Protocol: "a2s"}, {Name: "retired", Target: "127.0.0.1:27016", Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	var online []string
	for i := 120; i >= 1; i-- {
		at := now.Add(-time.Duration(i) * time.Minute)
		s := store.Sample{Server: "alpha", Time: at, Up: i < 41 || i > 50, Players: i % 10, MaxPlayers: 16, Map: "de_dust2"}
		if i < 60 {
			s.Map = "de_inferno"
		}
		var names []string
		if s.Up {
			s.PlayerList = []store.PlayerSeen{{Name: "Alice", Score: int64(i)}}
			names = []string{"Alice"}
			if i < 30 {
				s.PlayerList = append(s.PlayerList, store.PlayerSeen{Name: "Bob", Score: 1})
				names = append(names, "Bob")
			}
		}
		joined, left := testutil.Diff(online, names)
		for _, n := range left { // down: they left when last listed
			s.Sessions = append(s.Sessions, store.SessionChange{Player: n, Left: true, Time: at.Add(-time.Minute)})
		}
		for _, n := range joined {
			s.Sessions = append(s.Sessions, store.SessionChange{Player: n})
		}
		online = names
		if err := st.Write(context.Background(), []store.Sample{s}); err != nil {
			t.Fatal(err)
		}
	}
	live := newTestLive(upState("alpha", 9, 16, "de_inferno"), downState("beta"))
	return st, live, now
}

func TestAPIServers(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})

	var list struct {
		Time    string
		Servers []map[string]any
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers", "", 200, &list)
	if len(list.Servers) != 2 || list.Servers[0]["name"] != "alpha" || list.Servers[1]["name"] != "beta" {
		t.Fatalf("servers: %v", list.Servers)
	}
	a := list.Servers[0]
	sum := a["summary"].(map[string]any)
	if a["status"] != "up" || sum["players"] != 9.0 || sum["max_players"] != 16.0 || sum["map"] != "de_inferno" {
		t.Errorf("alpha: %v", a)
	}
	if a["ping_ms"] != 23.0 || a["uptime_24h"] != 0.995 {
		t.Errorf("alpha ping_ms %v uptime_24h %v", a["ping_ms"], a["uptime_24h"])
	}
	if _, ok := a["players"]; ok {
		t.Error("the list carries player lists")
	}
	b := list.Servers[1]
	if b["status"] != "down" || b["consecutive_failures"] != 7.0 || b["last_error"].(map[string]any)["kind"] != "timeout" {
		t.Errorf("beta: %v", b)
	}

	// One server, with who is online.
	s := upState("alpha", 1, 16, "de_inferno")
	s.Players = []monitor.Player{{Name: "Alice", Score: 5, Duration: time.Minute}}
	live.set(s)
	var one map[string]any
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha", "", 200, &one)
	players, _ := one["players"].([]any)
	if len(players) != 1 || players[0].(map[string]any)["name"] != "Alice" || players[0].(map[string]any)["duration_seconds"] != 60.0 {
		t.Errorf("alpha players: %v", one["players"])
	}
}

func TestAPIHistory(t *testing.T) {
	t.Parallel()
	st, live, now := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})
	var h struct {
		Server      string
		StepSeconds float64 `json:"step_seconds"`
		Points      []store.Point
	}
	from, to := now.Add(-120*time.Minute).Format(time.RFC3339), now.Format(time.RFC3339)
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/history?from="+url.QueryEscape(from)+"&to="+url.QueryEscape(to)+"&step=10m", "", 200, &h)
	if h.StepSeconds != 600 || len(h.Points) != 12 {
		t.Fatalf("step %v, %d points; want 600 and 12", h.StepSeconds, len(h.Points))
	}
	var sawDown, sawUp bool
	for _, p := range h.Points {
		if !p.Up && p.Samples > 0 {
			sawDown = true
		}
		if p.Up && p.MinPlayers == 0 && p.MaxPlayers == 9 && p.AvgPlayers > 0 {
			sawUp = true
		}
	}
	if !sawDown || !sawUp {
		t.Errorf("points: %+v", h.Points)
	}

	// An automatic step for 24 hours: 5 minutes.
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/history?from=-24h", "", 200, &h)
	if h.StepSeconds != 300 {
		t.Errorf("automatic step over 24 h: %v s", h.StepSeconds)
	}
	// A server no longer monitored but with history in the store.
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/retired/history", "", 200, &h)
}

func TestAPIUptimeRecordsMapsSessions(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})

	var up struct {
		Day struct {
			Uptime *float64
			Polls  int
		} `json:"24h"`
		Month struct{ Polls int } `json:"30d"`
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/uptime", "", 200, &up)
	if up.Day.Polls != 120 || up.Day.Uptime == nil || *up.Day.Uptime != 110.0/120 || up.Month.Polls != 120 {
		t.Errorf("uptime: %+v", up)
	}

	var rec struct {
		AllTime int    `json:"all_time"`
		At      string `json:"all_time_at"`
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/records", "", 200, &rec)
	if rec.AllTime != 9 || rec.At == "" {
		t.Errorf("records: %+v", rec)
	}

	var maps struct{ Maps []store.MapChange }
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/maps", "", 200, &maps)
	if len(maps.Maps) != 2 || maps.Maps[0].Map != "de_dust2" || maps.Maps[1].Map != "de_inferno" {
		t.Errorf("maps: %+v", maps.Maps)
	}

	var sess struct {
		Sessions []struct {
			Player          string
			Online          bool
			Left            *string
			DurationSeconds float64 `json:"duration_seconds"`
		}
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/sessions", "", 200, &sess)
	// Newest first: Bob; Alice again after the outage (her session ended
	// when the server went down); Alice before it.
	if len(sess.Sessions) != 3 || sess.Sessions[1].Player != "Alice" || !sess.Sessions[1].Online ||
		sess.Sessions[2].Player != "Alice" || sess.Sessions[2].Online || sess.Sessions[2].Left == nil {
		t.Fatalf("sessions: %+v", sess.Sessions)
	}
	if s := sess.Sessions[0]; s.Player != "Bob" || !s.Online || s.Left != nil || s.DurationSeconds <= 0 {
		t.Errorf("newest session: %+v", s)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/sessions?player=Bob", "", 200, &sess)
	if len(sess.Sessions) != 1 || sess.Sessions[0].Player != "Bob" {
		t.Errorf("Bob's sessions: %+v", sess.Sessions)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/sessions?limit=1", "", 200, &sess)
	if len(sess.Sessions) != 1 {
		t.Errorf("limit=1: %d sessions", len(sess.Sessions))
	}
}

func TestAPIErrors(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})
	for _, c := range []struct {
		path   string
		status int
		code   string
	}{
		{"/api/v1/servers/nobody", 404, "not_found"},
		{"/api/v1/servers/nobody/history", 404, "not_found"},
		{"/api/v1/servers/alpha/history?from=yesterday", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/history?from=-1h&to=-2h", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/history?step=0", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/history?step=1s&from=-720h", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/history?step=fast", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/sessions?limit=0", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/sessions?limit=5000", 400, "bad_parameter"},
		{"/api/v1/servers/alpha/maps?to=1e300", 400, "bad_parameter"},
		{"/api/v1/events?kind=explode", 400, "bad_parameter"},
		{"/api/v1/nothing", 404, "not_found"},
	} {
		var e errorBody
		testutil.GetJSON(t, srv.URL+c.path, "", c.status, &e)
		if e.Error.Status != c.status || e.Error.Code != c.code || e.Error.Message == "" {
			t.Errorf("%s: %+v", c.path, e)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/servers", strings.NewReader("{}"))
	if status, _, body := testutil.Do(t, req); status != http.StatusMethodNotAllowed {
		t.Errorf("POST /api/v1/servers: %d %s", status, body)
	}

	// A failing store (closed: its errors name the file) is a 500 with a
	// message that does not leak its error.
	st.Close()
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/records", "", 500, &e)
	if e.Error.Code != "internal" || strings.Contains(e.Error.Message, "monitor.db") || strings.Contains(e.Error.Message, "closed") {
		t.Errorf("store failure: %+v", e)
	}
}

// TestAPITimeOverflow asks for times beyond what the API can count (issue
// 19, attacker row 5): ?from=9300000000 wrapped to the year 1677 and was
// answered 200. Each is a 400 that names the parameter.
func TestAPITimeOverflow(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	srv, _ := newTestServer(t, st, live, Options{})
	for _, q := range []string{
		"/api/v1/servers/alpha/history?from=9300000000",
		"/api/v1/servers/alpha/history?from=0&to=9300000000",
		"/api/v1/servers/alpha/history?from=1e19",
		"/api/v1/servers/alpha/maps?to=9999-12-31T00:00:00Z",
		"/api/v1/servers/alpha/sessions?from=1000-01-01T00:00:00Z",
		"/api/v1/sessions?from=9300000000",
	} {
		var e errorBody
		testutil.GetJSON(t, srv.URL+q, "", 400, &e)
		param, _, _ := strings.Cut(q[strings.Index(q, "?")+1:], "=")
		if strings.Contains(q, "&to=") {
			param = "to"
		}
		if e.Error.Code != "bad_parameter" || !strings.HasPrefix(e.Error.Message, param+": ") || !strings.Contains(e.Error.Message, "out of range") {
			t.Errorf("GET %s: %+v", q, e.Error)
		}
	}
	// The largest Unix second that nanoseconds hold is still a time.
	var h struct{ To string }
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/history?from=0&to=9223372035", "", 200, &h)
	if h.To != "2262-04-11T23:47:15.000Z" {
		t.Errorf("to=9223372035 answered to %q", h.To)
	}
}
