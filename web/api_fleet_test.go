package web

import (
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/clustertest"
)

// TestAPIFleetEvents: the partial outage a fleet's worker recorded in
// PostgreSQL is on the server's fleet-events, newest last, with each
// vantage point's view then; a single process's SQLite store has none.
func TestAPIFleetEvents(t *testing.T) {
	t.Parallel()
	ctx := testutil.Context(t)
	st, shared := clustertest.Open(t, "")
	f := store.Fence{Region: "us", Shard: 7, Epoch: 3}
	if err := shared.TakeShard(ctx, f); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	views := `{"eu":{"server":"alpha","region":"eu","state":"up","at":"2026-11-28T09:59:58Z","ping_us":23456},` +
		`"us":{"server":"alpha","region":"us","state":"down","at":"2026-11-28T09:59:59Z"},"ap":{"region":"ap","state":"bogus"}}`
	for i, v := range []string{"not json", views} {
		if err := shared.RecordEvent(ctx, f, store.Event{Server: "alpha", At: at.Add(time.Duration(i) * time.Minute), Kind: "partial", Views: v}); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := newTestServer(t, st, newTestLive(upState("alpha", 1, 8, "de_dust2")), Options{})
	type view struct {
		Region string
		Status string
		At     *string
		PingMS *float64 `json:"ping_ms"`
	}
	var body struct {
		Fleet  bool
		Events []struct {
			At       string
			Kind     string
			Region   string
			Vantages []view
		}
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/fleet-events?limit=1", "", 200, &body)
	if !body.Fleet || len(body.Events) != 1 {
		t.Fatalf("fleet-events?limit=1: %+v, want the newest event", body)
	}
	e := body.Events[0]
	if e.Kind != "partial" || e.Region != "us" || e.At != "2026-11-28T10:01:00.000Z" || len(e.Vantages) != 3 {
		t.Fatalf("the event: %+v", e)
	}
	ap, eu, us := e.Vantages[0], e.Vantages[1], e.Vantages[2]
	if ap.Region != "ap" || ap.Status != "unknown" || eu.Region != "eu" || eu.Status != "up" || eu.PingMS == nil || *eu.PingMS != 23.46 ||
		us.Region != "us" || us.Status != "down" || us.PingMS != nil || us.At == nil || *us.At != "2026-11-28T09:59:59.000Z" {
		t.Errorf("the views: %+v %+v %+v", ap, eu, us)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/fleet-events", "", 200, &body)
	if len(body.Events) != 2 || len(body.Events[0].Vantages) != 0 || body.Events[1].At != e.At {
		t.Errorf("fleet-events: %+v, want both, oldest first, the unreadable views empty", body)
	}
	var fail struct{ Error struct{ Code string } }
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/fleet-events?limit=0", "", 400, &fail)
	if fail.Error.Code != "bad_parameter" {
		t.Errorf("limit=0: %+v", fail)
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/nobody/fleet-events", "", 404, &fail)

	one, _ := newTestServer(t, newTestStore(t), newTestLive(upState("alpha", 1, 8, "de_dust2")), Options{})
	testutil.GetJSON(t, one.URL+"/api/v1/servers/alpha/fleet-events", "", 200, &body)
	if body.Fleet || len(body.Events) != 0 {
		t.Errorf("a single process's fleet-events: %+v", body)
	}
}
