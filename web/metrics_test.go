package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/gsq-project/gsq/monitor"
)

// scrape fetches and parses an exposition in the text format.
func scrape(t *testing.T, url, token string) map[string]*dto.MetricFamily {
	t.Helper()
	status, hdr, body := get(t, url, token)
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
