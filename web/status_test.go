package web

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// statusFixture is a monitor with a token and a status page for the
// servers labelled public: alpha (up, an outage and a maintenance
// incident in its history) and beta (down), not gamma.
func statusFixture(t *testing.T) (*testLive, store.Store, *monitor.Config, *monitor.Maintenance) {
	t.Helper()
	st, _, now := apiFixture(t)
	ctx := context.Background()
	cfg, err := monitor.Parse([]byte(`
status_page:
  path: /public
  title: Our <servers>
  text: We restart at 04:00.
  labels: {public: "yes"}
maintenance:
  - {servers: [beta], every: "every day 00:00-23:59 UTC", reason: all day}
servers:
  - {name: alpha, address: 127.0.0.1:27015, labels: {public: "yes"}}
  - {name: beta, address: 127.0.0.1:27016, labels: {public: "yes"}}
  - {name: gamma, address: 127.0.0.1:27017}
`), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mt := &monitor.Maintenance{}
	mt.SetConfig(cfg.Maintenance)
	a := upState("alpha", 9, 16, "de_inferno")
	a.Labels = map[string]string{"public": "yes"}
	b := downState("beta")
	b.Labels = map[string]string{"public": "yes"}
	g := upState("gamma", 1, 8, "secret_map")
	live := newTestLive(a, b, g)
	if err := st.SyncServers(ctx, []store.Server{{Name: "alpha", Target: "127.0.0.1:27015", Protocol: "a2s"}, {Name: "beta", Target: "127.0.0.1:27016", Protocol: "a2s"}, {Name: "gamma", Target: "127.0.0.1:27017", Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	// The fixture's outage of alpha (50 to 41 minutes ago) as an
	// incident in maintenance, so that it is left out of the uptime.
	for _, smp := range []store.Sample{
		{Server: "alpha", Time: now.Add(-49 * time.Minute), Outage: &store.Outage{Since: now.Add(-50 * time.Minute), Cause: "timeout", Maintenance: true}},
		{Server: "alpha", Time: now.Add(-40*time.Minute + time.Second), Up: true, Players: 1, MaxPlayers: 16, Recovered: true},
	} {
		if err := st.Write(ctx, []store.Sample{smp}); err != nil {
			t.Fatal(err)
		}
	}
	return live, st, cfg, mt
}

func TestStatusPage(t *testing.T) {
	t.Parallel()
	live, st, cfg, mt := statusFixture(t)
	srv, _ := newTestServer(t, st, live, Options{Token: testToken, Config: func() *monitor.Config { return cfg }, Maintenance: mt})

	status, hdr, body := testutil.Get(t, srv.URL+"/public", "")
	if status != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("/public without a token: %d %q", status, hdr.Get("Content-Type"))
	}
	for _, want := range []string{"Our &lt;servers&gt;", "We restart at 04:00.", "de_inferno", "9 / 16 players", "Down · maintenance", "all day",
		"All servers are up.", `class="d d-`} {
		if !strings.Contains(body, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}
	for _, secret := range []string{"gamma", "secret_map", "127.0.0.1", "Alice", "<script"} {
		if strings.Contains(body, secret) {
			t.Errorf("the status page shows %q", secret)
		}
	}
	// The API stays behind the token; the page's path is the config's.
	if status, _, _ := testutil.Get(t, srv.URL+"/api/v1/servers", ""); status != http.StatusUnauthorized {
		t.Errorf("/api/v1/servers without a token: %d", status)
	}
	if status, _, _ := testutil.Get(t, srv.URL+"/status", ""); status != http.StatusNotFound {
		t.Errorf("/status when the page is at /public: %d", status)
	}
	// No status page configured: nothing public.
	srv2, _ := newTestServer(t, st, live, Options{Token: testToken, Config: func() *monitor.Config { return &monitor.Config{} }})
	if status, _, _ := testutil.Get(t, srv2.URL+"/status", ""); status != http.StatusNotFound {
		t.Errorf("/status with none configured: %d", status)
	}
}

// TestUptimeLeavesOutMaintenance: the fixture's 10 polls down are inside
// a maintenance incident, so the uptime counts only the 110 others.
func TestUptimeLeavesOutMaintenance(t *testing.T) {
	t.Parallel()
	live, st, cfg, mt := statusFixture(t)
	srv, _ := newTestServer(t, st, live, Options{Config: func() *monitor.Config { return cfg }, Maintenance: mt})
	var u struct {
		Day struct {
			Uptime *float64
			Polls  int
		} `json:"24h"`
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/servers/alpha/uptime", "", 200, &u)
	if u.Day.Uptime == nil || *u.Day.Uptime != 1 || u.Day.Polls < 109 || u.Day.Polls > 111 {
		t.Errorf("alpha's uptime %v over %d polls; want 1 over the 110 polls outside maintenance", u.Day.Uptime, u.Day.Polls)
	}
}

func TestBanner(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	s := upState("alpha", 9, 16, `<b>de_"inferno"</b>`)
	s.Summary.Name = ptr(`EU & "friends" <script>`)
	live.set(s)
	srv, _ := newTestServer(t, st, live, Options{Token: testToken})
	status, hdr, body := testutil.Get(t, srv.URL+"/banner/alpha.svg", "")
	if status != http.StatusOK || hdr.Get("Content-Type") != "image/svg+xml; charset=utf-8" {
		t.Fatalf("banner: %d %q", status, hdr.Get("Content-Type"))
	}
	for _, want := range []string{"EU &amp; &#34;friends&#34; &lt;script&gt;", "9/16 players", "&lt;b&gt;de_&#34;inferno&#34;", "<path d=\"M"} {
		if !strings.Contains(body, want) {
			t.Errorf("the banner lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "<b>") {
		t.Errorf("the banner carries markup from the server:\n%s", body)
	}
	if status, _, _ := testutil.Get(t, srv.URL+"/banner/nobody.svg", ""); status != http.StatusNotFound {
		t.Errorf("unknown server: %d", status)
	}
	srv2, _ := newTestServer(t, st, live, Options{Token: testToken, GuardBadges: true})
	if status, _, _ := testutil.Get(t, srv2.URL+"/banner/alpha.svg", ""); status != http.StatusUnauthorized {
		t.Errorf("guarded banner without a token: %d", status)
	}
}

func TestAPIMaintenance(t *testing.T) {
	t.Parallel()
	st, live, _ := apiFixture(t)
	mt := &monitor.Maintenance{}
	srv, _ := newTestServer(t, st, live, Options{Token: testToken, Maintenance: mt})
	post := func(body, ctype, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/maintenance", strings.NewReader(body))
		req.Header.Set("Content-Type", ctype)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		status, _, b := testutil.Do(t, req)
		return status, b
	}
	if status, _ := post(`{"servers":["alpha"],"every":"every day 00:00-00:00"}`, "application/json", ""); status != http.StatusUnauthorized {
		t.Errorf("without the token: %d", status)
	}
	if status, _ := post(`{"servers":["alpha"],"every":"every day 00:00-00:00"}`, "text/plain", testToken); status != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d", status)
	}
	for _, bad := range []string{`{"every":"day 01:00-02:00"}`, `{"servers":["a"]}`, `{"servers":["a"],"every":"whenever"}`, `{"servers":["a"],"nope":1}`, `[`} {
		if status, body := post(bad, "application/json", testToken); status != http.StatusBadRequest {
			t.Errorf("%s: %d %s", bad, status, body)
		}
	}
	status, body := post(`{"servers":["alpha"],"every":"every day 00:00-00:00","reason":"all the time"}`, "application/json", testToken)
	if status != http.StatusCreated || !strings.Contains(body, `"source":"api"`) || !strings.Contains(body, `"active":true`) {
		t.Fatalf("add: %d %s", status, body)
	}
	if _, in := mt.In("alpha", nil, time.Now()); !in {
		t.Error("alpha is not in maintenance after the window was added")
	}
	var list struct {
		Windows []struct {
			ID     int64
			Reason string
		}
	}
	testutil.GetJSON(t, srv.URL+"/api/v1/maintenance", testToken, 200, &list)
	if len(list.Windows) != 1 || list.Windows[0].Reason != "all the time" {
		t.Fatalf("windows: %+v", list)
	}
	// A monitor started again reads it from the store.
	mt2 := &monitor.Maintenance{}
	h2 := New(st, live, Options{Maintenance: mt2})
	if err := h2.LoadMaintenance(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(mt2.Windows()) != 1 {
		t.Errorf("reloaded %d windows", len(mt2.Windows()))
	}

	req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/api/v1/maintenance/"+strconv.FormatInt(list.Windows[0].ID, 10), nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	if status, _, body := testutil.Do(t, req); status != http.StatusOK {
		t.Errorf("delete: %d %s", status, body)
	}
	if status, _, _ := testutil.Do(t, req); status != http.StatusNotFound {
		t.Errorf("delete again: %d", status)
	}
	if _, in := mt.In("alpha", nil, time.Now()); in {
		t.Error("alpha is still in maintenance")
	}
}
