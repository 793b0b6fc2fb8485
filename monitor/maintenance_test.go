package monitor

import (
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

func TestScheduleActive(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		every string
		t     string
		want  bool
	}{
		{"every day 04:00-04:15 UTC", "2026-11-28T04:00:00Z", true},
		{"every day 04:00-04:15 UTC", "2026-11-28T04:14:59Z", true},
		{"every day 04:00-04:15 UTC", "2026-11-28T04:15:00Z", false},
		{"every day 04:00-04:15 UTC", "2026-11-28T03:59:59Z", false},
		{"day 04:00-04:15", "2026-11-28T04:10:00Z", true},
		// Across midnight: from Saturday 23:30 to Sunday 00:30.
		{"saturday 23:30-00:30", "2026-11-29T00:10:00Z", true},
		{"saturday 23:30-00:30", "2026-11-29T23:40:00Z", false},
		{"sat 23:30-00:30", "2026-11-28T23:40:00Z", true},
		{"weekday 12:00-13:00", "2026-11-28T12:30:00Z", false}, // a Saturday
		{"weekend 12:00-13:00", "2026-11-28T12:30:00Z", true},
		{"mon,sat 12:00-13:00", "2026-11-28T12:30:00Z", true},
		// In a zone: 04:00 in Berlin is 03:00 UTC in winter.
		{"every day 04:00-04:15 Europe/Berlin", "2026-11-28T03:05:00Z", true},
		{"every day 04:00-04:15 Europe/Berlin", "2026-11-28T04:05:00Z", false},
	} {
		w := Window{Servers: []string{"a"}, Every: c.every}
		if err := w.Check(); err != nil {
			t.Errorf("%q: %v", c.every, err)
			continue
		}
		if got := w.Active(at(c.t)); got != c.want {
			t.Errorf("%q at %s: %v, want %v", c.every, c.t, got, c.want)
		}
	}
	for _, bad := range []string{"day", "day 4-5", "day 25:00-26:00", "someday 04:00-05:00", "day 04:00-04:15 Mars/Olympus", "day 04:60-05:00", "day 04:00-04:15 UTC extra"} {
		w := Window{Servers: []string{"a"}, Every: bad}
		if err := w.Check(); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	once := Window{Labels: map[string]string{"region": "eu"}, From: at("2026-11-28T10:00:00Z"), To: at("2026-11-28T11:00:00Z")}
	if err := once.Check(); err != nil {
		t.Fatal(err)
	}
	if !once.Active(at("2026-11-28T10:30:00Z")) || once.Active(at("2026-11-28T11:00:00Z")) {
		t.Error("a one-off window is active outside [from, to)")
	}
	if !once.Applies("x", map[string]string{"region": "eu", "game": "cs2"}) || once.Applies("x", map[string]string{"region": "us"}) {
		t.Error("label matching")
	}
	if err := (&Window{From: at("2026-11-28T10:00:00Z"), To: at("2026-11-28T11:00:00Z")}).Check(); err == nil {
		t.Error("a window for no server passed")
	}
	if from, _, ok := (&Window{Servers: []string{"a"}, Every: "day 04:00-04:15"}).Next(at("2026-11-28T05:00:00Z")); ok {
		t.Errorf("an unchecked window has a next stretch %v", from)
	}
}

func TestConfigMaintenanceAndStatusPage(t *testing.T) {
	t.Parallel()
	cfg, err := Parse([]byte(`
maintenance:
  - {servers: [eu-1], every: "every day 04:00-04:15 UTC", reason: nightly restart}
  - {labels: {region: us}, from: 2026-12-01T10:00:00Z, to: 2026-12-01T12:00:00Z}
status_page:
  title: Our servers
  text: Restarts at 04:00 UTC.
  labels: {public: "yes"}
servers:
  - {name: eu-1, address: 127.0.0.1, labels: {public: "yes"}}
`), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Maintenance) != 2 || cfg.Maintenance[0].Reason != "nightly restart" || cfg.Maintenance[1].Labels["region"] != "us" {
		t.Errorf("maintenance %+v", cfg.Maintenance)
	}
	p := cfg.StatusPage
	if p == nil || p.Path != "/status" || p.Title != "Our servers" || !p.Shows("eu-1", map[string]string{"public": "yes"}) || p.Shows("x", nil) {
		t.Errorf("status page %+v", p)
	}
	for yaml, want := range map[string]string{
		"maintenance: [{servers: [a]}]":                            "give from and to",
		"maintenance: [{servers: [a], every: 'day 4-5'}]":          "every:",
		"maintenance: [{every: 'day 04:00-05:00'}]":                "name the servers",
		"maintenance: [{servers: [a], from: tomorrow, to: later}]": "not an RFC 3339 time",
		"status_page: {title: x}":                                  "name the servers",
		"status_page: {path: /api/status, servers: [a]}":           "serves /api itself",
		"status_page: {path: 'status', servers: [a]}":              "must be a path",
	} {
		_, err := Parse([]byte(yaml+"\n"), "m.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", yaml, err, want)
		}
	}
}

// TestAlertSilencedInMaintenance: a server that goes down inside a
// maintenance window raises no alert; outside it, it does.
func TestAlertSilencedInMaintenance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		window Window
		want   int
	}{
		{"in", Window{Labels: map[string]string{"region": "eu"}, From: t0, To: t0.Add(time.Hour)}, 0},
		{"other server", Window{Servers: []string{"eu-2"}, From: t0, To: t0.Add(time.Hour)}, 2},
		{"after", Window{Servers: []string{"eu-1"}, From: t0.Add(-2 * time.Hour), To: t0.Add(-time.Hour)}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rc := testutil.NewReceiver(t, nil)
			cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
			mt := &Maintenance{}
			if err := c.window.Check(); err != nil {
				t.Fatal(err)
			}
			mt.SetExtra([]Window{c.window})
			m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf, Silenced: mt.Silences})
			m.poll(0, answer("de_dust2", 1, nil))
			m.polls(30*time.Second, "----")
			m.poll(30*time.Second, answer("de_dust2", 1, nil))
			m.closeAndWait()
			if got := len(alertsOf(t, rc)); got != c.want {
				t.Errorf("%d alerts, want %d", got, c.want)
			}
			if s := m.alerts.Stats()[0]; c.want == 0 && s.Silenced != 2 {
				t.Errorf("silenced %d, want 2 (down and up)", s.Silenced)
			}
		})
	}
}
