package web

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/store"
)

// scrape fetches and parses an exposition in the text format.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	status, hdr, body := testutil.Get(t, url, token)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, status, body)
	}
	if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	return parseExposition(t, body)
}

func parseExposition(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, body)
	}
	return fams
}

// sample returns the value of the series of family name whose labels
// include want, and whether there is exactly one such series.
func sample(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	var found []*dto.Metric
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, lp := range m.GetLabel() {
			have[lp.GetName()] = lp.GetValue()
		}
		match := true
		for k, v := range want {
			if have[k] != v {
				match = false
			}
		}
		if match {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		return 0, false
	}
	m := found[0]
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue(), true
	case m.Counter != nil:
		return m.GetCounter().GetValue(), true
	}
	return m.GetUntyped().GetValue(), true
}

func mustSample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := sample(fams, name, labels)
	if !ok {
		t.Errorf("%s%v: no single series", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func noSample(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string) {
	t.Helper()
	if v, ok := sample(fams, name, labels); ok {
		t.Errorf("%s%v = %v, want no series", name, labels, v)
	}
}

func TestMetricsExposition(t *testing.T) {
	t.Parallel()
	alpha := upState("alpha", 12, 32, "de_dust2")
	alpha.Labels = map[string]string{"region": "eu", "name": "collides", "team-owner": "ops"}
	beta := downState("beta")
	beta.Labels = map[string]string{"region": "us"}
	gamma := monitor.ServerState{Name: "gamma", Target: "127.0.0.1:27020", Protocol: "ogp", Status: monitor.StatusPending}
	hostile := upState("hostile", 1, 2, "bad\xffmap")
	hostile.Summary.Name = ptr(`<script>alert(1)</script>"` + strings.Repeat("x", 1000))
	live := newTestLive(alpha, beta, gamma, hostile)
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})

	fams := scrape(t, srv.URL+"/metrics", "")
	a := map[string]string{"server": "alpha", "target": "127.0.0.1:27015", "protocol": "a2s", "region": "eu", "label_name": "collides", "team_owner": "ops"}
	mustSample(t, fams, "gameserver_up", a, 1)
	mustSample(t, fams, "gameserver_players", a, 12)
	mustSample(t, fams, "gameserver_players_max", a, 32)
	mustSample(t, fams, "gameserver_bots", a, 0)
	mustSample(t, fams, "gameserver_query_duration_seconds", a, 0.024)
	mustSample(t, fams, "gameserver_ping_seconds", a, 0.023)
	mustSample(t, fams, "gameserver_consecutive_failures", a, 0)
	mustSample(t, fams, "gameserver_last_success_timestamp_seconds", a, unixSeconds(alpha.LastSuccess))
	mustSample(t, fams, "gameserver_info", merge(a, map[string]string{
		"name": "alpha | public", "map": "de_dust2", "game": "Counter-Strike 2", "version": "1.40.2.1"}), 1)
	mustSample(t, fams, "gameserver_queries_total", merge(a, map[string]string{"result": "ok"}), 100)
	mustSample(t, fams, "gameserver_queries_total", merge(a, map[string]string{"result": "timeout"}), 0)

	// The map is on the info series only, never on a numeric one.
	for _, m := range fams["gameserver_players"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "map" || lp.GetName() == "name" || lp.GetName() == "version" {
				t.Errorf("gameserver_players carries the label %s", lp.GetName())
			}
		}
	}

	// A server that is down: up 0, its failures and last success, and no
	// stale player counts.
	b := map[string]string{"server": "beta", "region": "us", "label_name": "", "team_owner": ""}
	mustSample(t, fams, "gameserver_up", b, 0)
	mustSample(t, fams, "gameserver_consecutive_failures", b, 7)
	mustSample(t, fams, "gameserver_last_success_timestamp_seconds", b, unixSeconds(beta.LastSuccess))
	mustSample(t, fams, "gameserver_query_duration_seconds", b, 2)
	mustSample(t, fams, "gameserver_queries_total", merge(b, map[string]string{"result": "timeout"}), 7)
	noSample(t, fams, "gameserver_players", b)
	noSample(t, fams, "gameserver_info", b)

	// A server never polled has no series at all.
	for name := range fams {
		noSample(t, fams, name, map[string]string{"server": "gamma"})
	}

	// Hostile strings stay label values: valid UTF-8, bounded.
	h := map[string]string{"server": "hostile"}
	mustSample(t, fams, "gameserver_up", h, 1)
	for _, m := range fams["gameserver_info"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if len(lp.GetValue()) > maxLabelValueBytes {
				t.Errorf("label %s is %d bytes long", lp.GetName(), len(lp.GetValue()))
			}
		}
	}
	mustSample(t, fams, "gameserver_info", map[string]string{"server": "hostile", "map": "bad\uFFFDmap"}, 1)

	// No per-player series unless asked.
	if _, ok := fams["gameserver_player_connected_seconds"]; ok {
		t.Error("per-player series without Options.PlayerMetrics")
	}
	if live.probes.Load() != 0 {
		t.Errorf("a scrape probed %d servers", live.probes.Load())
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go runtime metrics")
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func TestMetricsPlayers(t *testing.T) {
	t.Parallel()
	s := upState("alpha", 3, 10, "cp_badlands")
	s.Players = []monitor.Player{
		{Name: "Alice", Score: 10, Duration: 90 * time.Second},
		{Name: "Bob", Score: 4, Duration: 30 * time.Second},
		{Name: "Alice", Score: 1, Duration: 5 * time.Second}, // same name: one series
	}
	srv, _ := newTestServer(t, newTestStore(t), newTestLive(s), Options{PlayerMetrics: true})
	fams := scrape(t, srv.URL+"/metrics", "")
	mustSample(t, fams, "gameserver_player_connected_seconds", map[string]string{"server": "alpha", "player": "Alice"}, 90)
	mustSample(t, fams, "gameserver_player_score", map[string]string{"server": "alpha", "player": "Bob"}, 4)
	if n := len(fams["gameserver_player_score"].GetMetric()); n != 2 {
		t.Errorf("%d player score series, want 2", n)
	}
}

// TestMetricsMonitorCounters: what the monitor lost is on /metrics: each
// webhook's alerts by outcome, the subscribers it cut off, the live
// streams the handler dropped.
func TestMetricsMonitorCounters(t *testing.T) {
	t.Parallel()
	live := newTestLive(upState("alpha", 1, 2, "m"))
	live.alerts = []monitor.WebhookStats{{Webhook: "ops", Raised: 11, Sent: 3, Failed: 1, Dropped: 2, Kept: 3, Silenced: 1, Queued: 1, Messages: 2, Throttled: 4}}
	live.cut.Store(2)
	srv, h := newTestServer(t, newTestStore(t), live, Options{})
	h.hub.dropped.Store(5)
	fams := scrape(t, srv.URL+"/metrics", "")
	for result, want := range map[string]float64{"sent": 3, "failed": 1, "dropped": 2, "kept": 3, "silenced": 1} {
		mustSample(t, fams, "gsq_alerts_total", map[string]string{"webhook": "ops", "result": result}, want)
	}
	mustSample(t, fams, "gsq_alert_messages_total", map[string]string{"webhook": "ops"}, 2)
	mustSample(t, fams, "gsq_alert_throttled_total", map[string]string{"webhook": "ops"}, 4)
	mustSample(t, fams, "gsq_alerts_queued", map[string]string{"webhook": "ops"}, 1)
	mustSample(t, fams, "gsq_event_subscribers_dropped_total", nil, 2)
	mustSample(t, fams, "gsq_live_streams_dropped_total", nil, 5)
}

// TestMetricsStoreRefusals: what the store refused of a server over its
// hourly budget (a hostile server's new names, maps and sessions) is
// counted on /metrics.
func TestMetricsStoreRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"), store.WithBudget(store.Budget{Sessions: 1, NameBytes: -1, Changes: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.SyncServers(ctx, []store.Server{{Name: "alpha", Target: "127.0.0.1:1", Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, m := range []string{"m1", "m2", "m3"} {
		smp := store.Sample{Server: "alpha", Time: at.Add(time.Duration(i) * time.Minute), Up: true, Map: m, Players: 1, MaxPlayers: 8, Bots: -1,
			Sessions: []store.SessionChange{{Player: fmt.Sprint("p", i)}}}
		if err := st.Write(ctx, []store.Sample{smp}); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := newTestServer(t, st, newTestLive(upState("alpha", 1, 2, "m")), Options{})
	fams := scrape(t, srv.URL+"/metrics", "")
	mustSample(t, fams, "gsq_store_refused_total", map[string]string{"server": "alpha", "kind": "sessions"}, 2)
	mustSample(t, fams, "gsq_store_refused_total", map[string]string{"server": "alpha", "kind": "changes"}, 2)
	mustSample(t, fams, "gsq_store_refused_total", map[string]string{"server": "alpha", "kind": "names"}, 0)
}

func TestMetricsReadsCachedState(t *testing.T) {
	t.Parallel()
	live := newTestLive(upState("alpha", 1, 2, "m"))
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})
	for range 3 {
		scrape(t, srv.URL+"/metrics", "")
	}
	if got := live.reads.Load(); got != 3 {
		t.Errorf("3 scrapes read the state %d times", got)
	}
	if got := live.probes.Load(); got != 0 {
		t.Errorf("3 scrapes probed %d times", got)
	}
}

// TestMetricsControlCharactersInLabels: a game server's name, map and
// player names with raw control characters (an escape sequence, a
// carriage return, a tab, DEL, C1) reach /metrics as U+FFFD (issue 19,
// attacker row 9), in the text and the OpenMetrics formats alike.
func TestMetricsControlCharactersInLabels(t *testing.T) {
	t.Parallel()
	s := upState("ctl", 1, 8, "de_\x1b[2Jdust\r")
	s.Summary.Name = ptr("evil\tname\x7f\u0085\u009b31m\nsecond line")
	s.Players = []result.Player{{Name: "bob\x1b]0;pwned\x07", Duration: time.Minute}}
	srv, _ := newTestServer(t, newTestStore(t), newTestLive(s), Options{PlayerMetrics: true})
	for _, accept := range []string{"text/plain", "application/openmetrics-text; version=1.0.0"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/metrics", nil)
		req.Header.Set("Accept", accept)
		status, _, body := testutil.Do(t, req)
		if status != 200 {
			t.Fatalf("%s: %d", accept, status)
		}
		for i, r := range body {
			if r != '\n' && unicode.IsControl(r) {
				t.Errorf("%s: control character %U at byte %d: %q", accept, r, i, body[max(0, i-40):min(len(body), i+40)])
				break
			}
		}
	}
	fams := scrape(t, srv.URL+"/metrics", "")
	mustSample(t, fams, "gameserver_info", map[string]string{"server": "ctl", "map": "de_\uFFFD[2Jdust\uFFFD", "name": "evil\uFFFDname\uFFFD\uFFFD\uFFFD31m\uFFFDsecond line"}, 1)
	if _, ok := sample(fams, "gameserver_player_connected_seconds", map[string]string{"server": "ctl", "player": "bob\uFFFD]0;pwned\uFFFD"}); !ok {
		t.Errorf("no player series with the name made safe: %v", fams["gameserver_player_connected_seconds"])
	}
}
