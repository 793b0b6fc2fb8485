package web

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// TestAPIPlayers: the fixture's Alice and Bob are found by search, a
// player's page adds up their sessions, the regulars rank them, and a
// server whose player_data is off is left out of all of it.
func TestAPIPlayers(t *testing.T) {
	t.Parallel()
	st, live, now := apiFixture(t)
	// "quiet" keeps no player data; Alice played there too.
	if err := st.SyncServers(context.Background(), []store.Server{
		{Name: "alpha", Target: "127.0.0.1:27015", Protocol: "a2s"}, {Name: "retired", Target: "127.0.0.1:27016", Protocol: "a2s"},
		{Name: "quiet", Target: "127.0.0.1:27017", Protocol: "a2s"},
	}); err != nil {
		t.Fatal(err)
	}
	q := store.Sample{Server: "quiet", Time: now.Add(-200 * time.Minute), Up: true, Players: 1, MaxPlayers: 8,
		Sessions: []store.SessionChange{{Player: "Alice"}, {Player: "Carol"}}}
	if err := st.Write(context.Background(), []store.Sample{q}); err != nil {
		t.Fatal(err)
	}
	cfg, err := monitor.Parse([]byte("servers:\n  - {name: alpha, address: '127.0.0.1:27015'}\n  - {name: quiet, address: '127.0.0.1:27017', player_data: false}\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newTestServer(t, st, live, Options{Config: func() *monitor.Config { return cfg }})

	var found struct {
		Query   string
		Players []struct {
			Name     string
			Sessions int
			Servers  int
			Online   bool
		}
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/players?q=ali", "", 200, &found)
	if len(found.Players) != 1 || found.Players[0].Name != "Alice" || found.Players[0].Servers != 1 || !found.Players[0].Online {
		t.Errorf("search ali: %+v", found)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/players?q=carol", "", 200, &found)
	if len(found.Players) != 0 {
		t.Errorf("Carol, seen only on a server without player data, was found: %+v", found)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/players", "", 400, &map[string]any{})

	var p struct {
		Name          string
		Sessions      int
		TotalSeconds  float64 `json:"total_seconds"`
		RecentSeconds float64 `json:"recent_seconds"`
		Online        bool
		Servers       []struct {
			Server   string
			Sessions int
		}
		Recent []struct{ Server string } `json:"recent_sessions"`
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/players/Alice", "", 200, &p)
	// Alice: on alpha from 120 to 51 minutes ago, and again from 40.
	if p.Name != "Alice" || p.Sessions != 2 || !p.Online || len(p.Servers) != 1 || p.Servers[0].Server != "alpha" || len(p.Recent) != 2 ||
		p.TotalSeconds < (69+40)*60 || p.RecentSeconds != p.TotalSeconds {
		t.Errorf("Alice: %+v", p)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/players/Carol", "", 404, &map[string]any{})
	testutil.GetJSON(t, srv.URL+"/api/v1/players/"+url.PathEscape("Nobody at all"), "", 404, &map[string]any{})

	var regs struct {
		Server     string
		PlayerData bool `json:"player_data"`
		Week       []struct {
			Player  string
			Seconds float64
		} `json:"7d"`
		Month []struct{ Player string } `json:"30d"`
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/regulars", "", 200, &regs)
	if !regs.PlayerData || len(regs.Week) != 2 || regs.Week[0].Player != "Alice" || regs.Week[1].Player != "Bob" || len(regs.Month) != 2 ||
		regs.Week[0].Seconds <= regs.Week[1].Seconds {
		t.Errorf("regulars of alpha: %+v", regs)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/quiet/regulars", "", 200, &regs)
	if regs.PlayerData || len(regs.Week) != 0 {
		t.Errorf("regulars of quiet: %+v", regs)
	}
	var sess struct {
		Sessions []struct{ Server, Player string }
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/sessions?player=Alice&from=-24h", "", 200, &sess)
	if len(sess.Sessions) != 2 || sess.Sessions[0].Server != "alpha" || sess.Sessions[1].Server != "alpha" {
		t.Errorf("Alice's sessions: %+v; want alpha's two, not quiet's", sess.Sessions)
	}
}

// TestAPIIncidents: an outage written with the samples is an incident in
// the fleet's list and the server's, and a label selector filters the
// fleet's.
func TestAPIIncidents(t *testing.T) {
	t.Parallel()
	st := newTestStore(t)
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	if err := st.SyncServers(ctx, []store.Server{
		{Name: "eu-1", Target: "127.0.0.1:1", Protocol: "a2s", Labels: map[string]string{"region": "eu"}},
		{Name: "us-1", Target: "127.0.0.1:2", Protocol: "a2s", Labels: map[string]string{"region": "us"}},
	}); err != nil {
		t.Fatal(err)
	}
	write := func(smp store.Sample) {
		t.Helper()
		if err := st.Write(ctx, []store.Sample{smp}); err != nil {
			t.Fatal(err)
		}
	}
	write(store.Sample{Server: "eu-1", Time: now.Add(-10 * time.Minute), Outage: &store.Outage{Since: now.Add(-11 * time.Minute), Cause: "timeout", Detail: "no answer in 2s"}})
	write(store.Sample{Server: "eu-1", Time: now.Add(-5 * time.Minute), Up: true, Recovered: true})
	write(store.Sample{Server: "us-1", Time: now.Add(-time.Minute), Outage: &store.Outage{Since: now.Add(-2 * time.Minute), Cause: "unreachable", Maintenance: true}})
	srv, _ := newTestServer(t, st, newTestLive(), Options{})

	type incident struct {
		Server          string
		Ongoing         bool
		Kind, Cause     string
		Message         string
		DurationSeconds float64 `json:"duration_seconds"`
	}
	type incidents struct{ Incidents []incident }
	var all incidents
	testutil.GetJSON(t, srv.URL+"/api/v1/incidents", "", 200, &all)
	if len(all.Incidents) != 2 {
		t.Fatalf("incidents: %+v", all.Incidents)
	}
	us, eu := all.Incidents[0], all.Incidents[1]
	if us.Server != "us-1" || !us.Ongoing || us.Kind != "maintenance" || us.Cause != "unreachable" {
		t.Errorf("us-1: %+v", us)
	}
	if eu.Server != "eu-1" || eu.Ongoing || eu.Kind != "outage" || eu.Cause != "timeout" || eu.Message != "no answer in 2s" || eu.DurationSeconds != 360 {
		t.Errorf("eu-1: %+v", eu)
	}
	var one incidents
	testutil.GetJSON(t, srv.URL+"/api/v1/incidents?label=region:eu", "", 200, &one)
	if len(one.Incidents) != 1 || one.Incidents[0].Server != "eu-1" {
		t.Errorf("region:eu: %+v", one.Incidents)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/us-1/incidents", "", 200, &one)
	if len(one.Incidents) != 1 || one.Incidents[0].Server != "us-1" {
		t.Errorf("us-1's: %+v", one.Incidents)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/incidents?from=-1m&to=-30s", "", 200, &one)
	if len(one.Incidents) != 1 || one.Incidents[0].Server != "us-1" {
		t.Errorf("the last minute: %+v", one.Incidents)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/nope/incidents", "", 404, &map[string]any{})
	testutil.GetJSON(t, srv.URL+"/api/v1/incidents?limit=0", "", 400, &map[string]any{})
	testutil.GetJSON(t, srv.URL+"/api/v1/incidents?label=", "", 400, &map[string]any{})
}
