package monitor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

// fleet plays the part of the poller for many servers: a Tracker each,
// their events to one Alerter.
type fleet struct {
	t        *testing.T
	cfg      *Config
	trackers []*Tracker
	alerts   *Alerter
	now      time.Time
}

// fleetConfig is a config of n servers on host, named srv-0000 and on,
// with the given top-level lines (webhooks and such) before them.
func fleetConfig(t *testing.T, head string, n int, host string) *Config {
	t.Helper()
	var b strings.Builder
	b.WriteString(head)
	b.WriteString("servers:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - {name: srv-%04d, address: '%s:%d'}\n", i, host, 20000+i)
	}
	return configWith(t, b.String())
}

func newFleet(t *testing.T, cfg *Config, a *Alerter) *fleet {
	f := &fleet{t: t, cfg: cfg, alerts: a, now: t0}
	for i := range cfg.Servers {
		srv := &cfg.Servers[i]
		f.trackers = append(f.trackers, NewTracker(srv, cfg.Policy(srv), t0))
	}
	return f
}

// polls plays a string of outcomes on every server ('+' answered, '-'
// timed out), interval apart.
func (f *fleet) polls(interval time.Duration, outcomes string) {
	for i := range len(outcomes) {
		f.now = f.now.Add(interval)
		rr := outcomes[i : i+1]
		for _, tr := range f.trackers {
			_, evs := tr.Observe(Poll{Start: f.now, End: f.now, Result: parsePoll(f.t, rr)})
			for _, ev := range evs {
				f.alerts.Handle(ev)
			}
		}
	}
}

// listed counts the servers each message of a receiver lists, by the
// server names in its lines.
var listedServer = regexp.MustCompile(`srv[\\]*-\d{4}`)

// TestAlertStormGrouped: 37 servers of one host that go down together
// are one message per webhook, in each format, saying so and listing
// every one of them.
func TestAlertStormGrouped(t *testing.T) {
	t.Parallel()
	plain, discord, slack := testutil.NewReceiver(t, nil), testutil.NewReceiver(t, nil), testutil.NewReceiver(t, nil)
	cfg := fleetConfig(t, "alert_group_window: 500ms\nwebhooks:\n"+
		"  - "+plain.URL+"\n"+
		"  - {url: '"+discord.URL+"', format: discord}\n"+
		"  - {url: '"+slack.URL+"', format: slack}\n", 37, "203.0.113.10")
	a := NewAlerter(cfg, AlerterOptions{Logf: t.Logf})
	f := newFleet(t, cfg, a)
	f.polls(30*time.Second, "+---")
	if err := a.Close(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	const want = "37 servers on 203.0.113.10 are down"
	for _, rc := range []*testutil.Receiver{plain, discord, slack} {
		if n := rc.Count(); n != 1 {
			t.Fatalf("%s: %d messages, want 1", rc.URL, n)
		}
		body := string(rc.Bodies()[0])
		if !strings.Contains(body, want) {
			t.Errorf("%s: no %q in %s", rc.URL, want, body)
		}
		seen := map[string]int{}
		for _, name := range listedServer.FindAllString(body, -1) {
			seen[strings.ReplaceAll(name, `\`, "")]++
		}
		if len(seen) != 37 {
			t.Errorf("%s: %d servers listed, want 37: %s", rc.URL, len(seen), body)
		}
	}
	var g AlertGroup
	if err := json.Unmarshal(plain.Bodies()[0], &g); err != nil || g.Kind != "group" || g.Count != 37 || len(g.Alerts) != 37 || g.Text != want {
		t.Errorf("json group: %v, kind %q, count %d, %d alerts, text %q", err, g.Kind, g.Count, len(g.Alerts), g.Text)
	}
	for _, s := range a.Stats() {
		if s.Raised != 37 || s.Sent != 37 || s.Messages != 1 || s.Failed+s.Dropped != 0 {
			t.Errorf("stats %+v", s)
		}
	}
}

// TestAlertPacedByRateLimitHeaders: a receiver that says, on a message it
// took, that it takes no more until a reset (Discord's
// X-RateLimit-Remaining: 0 and X-RateLimit-Reset-After) gets the next
// message no sooner, and never has to answer 429.
func TestAlertPacedByRateLimitHeaders(t *testing.T) {
	t.Parallel()
	const reset = 700 * time.Millisecond
	var mu sync.Mutex
	var at []time.Time
	rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		if n == 0 {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset-After", fmt.Sprintf("%.3f", reset.Seconds()))
		}
		w.WriteHeader(http.StatusNoContent)
	})
	cfg := fleetConfig(t, "alert_group_window: 0\nwebhooks:\n  - {url: '"+rc.URL+"', rate: 100/s}\n", 2, "203.0.113.10")
	a := NewAlerter(cfg, AlerterOptions{Logf: t.Logf})
	f := newFleet(t, cfg, a)
	f.polls(30*time.Second, "+---")
	if err := a.Close(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(at) != 2 {
		t.Fatalf("%d requests, want the 2 down alerts", len(at))
	}
	if gap := at[1].Sub(at[0]); gap < reset-50*time.Millisecond {
		t.Errorf("the second message came %v after the first, before the reset the receiver asked for (%v)", gap, reset)
	}
	if s := a.Stats()[0]; s.Sent != 2 || s.Throttled != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestAlertThrottledNothingLostNothingDoubled: a receiver that answers
// 429 with a Retry-After in seconds, then in an HTTP date, gets every
// alert once it takes them, exactly once, and the 429s are counted,
// not taken as failed attempts.
func TestAlertThrottledNothingLostNothingDoubled(t *testing.T) {
	t.Parallel()
	rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0, 1:
			w.Header().Set("Retry-After", "0.05")
			http.Error(w, `{"message": "You are being rate limited.", "retry_after": 0.05}`, http.StatusTooManyRequests)
			return
		case 2:
			w.Header().Set("Retry-After", time.Now().Add(time.Second).UTC().Format(http.TimeFormat))
			http.Error(w, "slow down", http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	// Three attempts in all would fail the alert if 429s counted.
	cfg := fleetConfig(t, "alert_group_window: 0\nwebhooks:\n  - {url: '"+rc.URL+"', rate: 100/s}\n", 5, "203.0.113.10")
	a := NewAlerter(cfg, AlerterOptions{Logf: t.Logf, Attempts: 2})
	f := newFleet(t, cfg, a)
	f.polls(30*time.Second, "+---")
	if err := a.Close(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	bodies := rc.Bodies()
	got := map[string]int{}
	for _, b := range bodies[3:] {
		var al Alert
		if err := json.Unmarshal(b, &al); err != nil {
			t.Fatal(err)
		}
		got[al.Server]++
	}
	if len(bodies) != 8 || len(got) != 5 {
		t.Errorf("%d requests (want 3 refused and 5 taken), servers taken %v", len(bodies), got)
	}
	for name, n := range got {
		if n != 1 {
			t.Errorf("%s taken %d times", name, n)
		}
	}
	if s := a.Stats()[0]; s.Sent != 5 || s.Messages != 5 || s.Throttled != 3 || s.Failed+s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestLimiter: at most N messages in any stretch of Per, and none during
// a pause; on a clock of its own, not the wall's.
func TestLimiter(t *testing.T) {
	t.Parallel()
	l := &limiter{rate: discordRate}
	now := t0
	var sent []time.Time
	for range 23 {
		at := l.next(now)
		if at.Before(now) {
			t.Fatalf("next %v before now %v", at, now)
		}
		now = at
		l.took(now)
		sent = append(sent, now)
	}
	for i := 5; i < len(sent); i++ {
		if gap := sent[i].Sub(sent[i-5]); gap < 2*time.Second {
			t.Fatalf("messages %d and %d are %v apart: 6 within 2s", i-5, i, gap)
		}
	}
	if sent[4] != t0 || sent[5] != t0.Add(2*time.Second) {
		t.Errorf("a burst of 5, then the 6th after 2s: %v", sent[:6])
	}
	l.pause(now.Add(time.Minute))
	if at := l.next(now); !at.Equal(now.Add(time.Minute)) {
		t.Errorf("during a pause: next %v, want %v", at, now.Add(time.Minute))
	}
}

func TestParseRate(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]Rate{
		"5/2s": {5, 2 * time.Second}, "1/s": {1, time.Second}, "30/m": {30, time.Minute}, " 10 / 1.5s ": {10, 1500 * time.Millisecond},
	} {
		if got, err := ParseRate(s); err != nil || got != want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"", "5", "0/s", "-1/s", "5/0s", "5/2", "x/s", "5/2d", "1001/s"} {
		if r, err := ParseRate(s); err == nil {
			t.Errorf("ParseRate(%q) = %v, want an error", s, r)
		}
	}
	if s := (Rate{5, 2 * time.Second}).String(); s != "5/2s" {
		t.Errorf("String = %q", s)
	}
}

// TestAlertConfigKeys: alert_group_window and a webhook's rate are read,
// checked, and default to a few seconds and the format's service's.
func TestAlertConfigKeys(t *testing.T) {
	t.Parallel()
	cfg := configWith(t, "alert_group_window: 10s\nwebhooks:\n  - {url: 'https://discord.com/api/webhooks/1/x'}\n"+
		"  - {url: 'https://hooks.slack.com/services/x'}\n  - {url: 'http://127.0.0.1:1/', rate: 30/m}\n")
	if cfg.GroupWindow != 10*time.Second {
		t.Errorf("window %v", cfg.GroupWindow)
	}
	for i, want := range []Rate{discordRate, slackRate, {30, time.Minute}} {
		if got := cfg.Webhooks[i].rate(); got != want {
			t.Errorf("webhook %d: rate %v, want %v", i, got, want)
		}
	}
	if Default().GroupWindow != DefaultGroupWindow {
		t.Errorf("default window %v", Default().GroupWindow)
	}
	for yaml, want := range map[string]string{
		"alert_group_window: 1h\n":                                  "alert_group_window",
		"webhooks:\n  - {url: 'http://127.0.0.1:1/', rate: fast}\n": "not a rate",
		"webhooks:\n  - {url: 'http://127.0.0.1:1/', rate: 0/s}\n":  "from 1 to 1000",
	} {
		if _, err := Parse([]byte(yaml), "t.yaml"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", yaml, err, want)
		}
	}
}

// inWindow is a monitor of eu-1 alerting a loopback receiver, its
// alerts silenced (as in a maintenance window) until endWindow is called.
func inWindow(t *testing.T) (m *testMonitor, rc *testutil.Receiver, endWindow func()) {
	rc = testutil.NewReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
	var quiet atomic.Bool
	quiet.Store(true)
	m = newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf, Silenced: func(server string, _ map[string]string, at time.Time) bool {
		return quiet.Load() && server == "eu-1"
	}})
	return m, rc, func() { quiet.Store(false) }
}

// TestAlertDownAfterMaintenance: a server that went down in a
// maintenance window and is still down when it ends gets its down alert
// at the first poll after the window, marked as such; its up follows.
func TestAlertDownAfterMaintenance(t *testing.T) {
	t.Parallel()
	m, rc, endWindow := inWindow(t)
	m.polls(30*time.Second, "+---") // down, in the window: silenced
	endWindow()
	m.polls(30*time.Second, "--") // the window is over, still down: one down alert
	m.polls(30*time.Second, "+")  // and its up
	m.closeAndWait()
	got := alertsOf(t, rc)
	if len(got) != 2 || got[0].Kind != AlertDown || !got[0].AfterMaintenance || got[1].Kind != AlertUp {
		t.Fatalf("got %+v, want a down after the window, then the up", got)
	}
	if !strings.Contains(got[0].Text, "still down after its maintenance window") || got[0].Since == nil || got[0].Failures < 4 {
		t.Errorf("the down alert after the window: %+v", got[0])
	}
	if s := m.alerts.Stats()[0]; s.Silenced != 1 || s.Sent != 2 {
		t.Errorf("stats %+v", s)
	}
}

// TestAlertSilenced: a silenced down alert is not sent, and neither is
// the up that answers it; both are counted.
func TestAlertSilenced(t *testing.T) {
	t.Parallel()
	m, rc, endWindow := inWindow(t)
	m.polls(30*time.Second, "+---") // down, in the window
	endWindow()
	m.polls(30*time.Second, "+")   // its up: silenced too
	m.polls(6*time.Minute, "---+") // a down and up after the window: sent
	m.closeAndWait()
	got := alertsOf(t, rc)
	if len(got) != 2 || got[0].Kind != AlertDown || got[1].Kind != AlertUp {
		t.Errorf("got %+v, want the down and up after the window", got)
	}
	if s := m.alerts.Stats()[0]; s.Silenced != 2 || s.Sent != 2 {
		t.Errorf("stats %+v", s)
	}
}
