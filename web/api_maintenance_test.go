package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
)

// TestAPIServerWindows: a server's maintenance stretches in a range, from
// a configured one-off window naming it, an API-posted schedule matching
// its labels, but not from a window for another server or other labels.
func TestAPIServerWindows(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	a, _ := live.Server("alpha")
	a.Labels = map[string]string{"region": "eu"}
	live.set(a)
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	mt := &monitor.Maintenance{}
	config := []monitor.Window{
		{Servers: []string{"alpha"}, From: day.Add(10 * time.Hour), To: day.Add(11 * time.Hour), Reason: "disk swap"},
		{Servers: []string{"beta"}, From: day.Add(12 * time.Hour), To: day.Add(13 * time.Hour)},
		{Labels: map[string]string{"region": "us"}, Every: "day 01:00-02:00 UTC"},
	}
	for i := range config {
		if err := config[i].Check(); err != nil {
			t.Fatal(err)
		}
	}
	mt.SetConfig(config)
	srv, _ := newTestServer(t, st, live, Options{Token: testToken, Maintenance: mt})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/maintenance", strings.NewReader(`{"labels":{"region":"eu"},"every":"day 04:00-04:15 UTC","reason":"nightly"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	if status, _, body := testutil.Do(t, req); status != http.StatusCreated {
		t.Fatalf("add: %d %s", status, body)
	}

	var got struct {
		Windows []struct {
			From, To       time.Time
			Source, Reason string
			Every          string
			ID             int64
		}
		Truncated bool
	}
	// From 03:00 on day to 12:00 the day after: two nightly stretches
	// and the one-off window, in order.
	q := "?from=" + day.Add(3*time.Hour).Format(time.RFC3339) + "&to=" + day.Add(36*time.Hour).Format(time.RFC3339)
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/maintenance"+q, testToken, 200, &got)
	want := []struct {
		from, to time.Time
		source   string
	}{
		{day.Add(4 * time.Hour), day.Add(4*time.Hour + 15*time.Minute), "api"},
		{day.Add(10 * time.Hour), day.Add(11 * time.Hour), "config"},
		{day.Add(28 * time.Hour), day.Add(28*time.Hour + 15*time.Minute), "api"},
	}
	if len(got.Windows) != len(want) || got.Truncated {
		t.Fatalf("stretches: %+v, want %v", got, want)
	}
	for i, w := range want {
		g := got.Windows[i]
		if !g.From.Equal(w.from) || !g.To.Equal(w.to) || g.Source != w.source {
			t.Errorf("stretch %d: %v-%v %s, want %v-%v %s", i, g.From, g.To, g.Source, w.from, w.to, w.source)
		}
	}
	if g := got.Windows[0]; g.Reason != "nightly" || g.Every != "day 04:00-04:15 UTC" || g.ID == 0 {
		t.Errorf("the API's window: %+v", g)
	}
	// A stretch under way at from is listed whole.
	q = "?from=" + day.Add(10*time.Hour+30*time.Minute).Format(time.RFC3339) + "&to=" + day.Add(12*time.Hour).Format(time.RFC3339)
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/maintenance"+q, testToken, 200, &got)
	if len(got.Windows) != 1 || !got.Windows[0].From.Equal(day.Add(10*time.Hour)) || got.Windows[0].Reason != "disk swap" {
		t.Errorf("from inside the window: %+v", got.Windows)
	}
	// A long range is bounded.
	q = "?from=" + day.AddDate(-20, 0, 0).Format(time.RFC3339) + "&to=" + day.Format(time.RFC3339)
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/maintenance"+q, testToken, 200, &got)
	if len(got.Windows) != maxStretches || !got.Truncated {
		t.Errorf("20 years of a nightly window: %d stretches, truncated %v", len(got.Windows), got.Truncated)
	}
	for path, want := range map[string]int{"/api/v1/servers/nobody/maintenance": http.StatusNotFound, "/api/v1/servers/alpha/maintenance?from=soon": http.StatusBadRequest} {
		if status, _, _ := testutil.Get(t, srv.URL+path, testToken); status != want {
			t.Errorf("%s: %d, want %d", path, status, want)
		}
	}
}
