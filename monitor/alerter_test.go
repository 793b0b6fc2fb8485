package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/result"
)

// alertsOf decodes the bodies a json-format receiver got.
func alertsOf(t *testing.T, rc *testutil.Receiver) []Alert {
	t.Helper()
	var out []Alert
	for _, b := range rc.Bodies() {
		var a Alert
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		out = append(out, a)
	}
	return out
}

// testMonitor plays the part of the poller for one server: it feeds each
// poll to the server's Tracker and the events to an Alerter, as the
// poller does.
type testMonitor struct {
	t       *testing.T
	tracker *Tracker
	alerts  *Alerter
	now     time.Time
}

func newTestMonitor(t *testing.T, cfg *Config, name string, opts AlerterOptions) *testMonitor {
	t.Helper()
	srv := cfg.Server(name)
	m := &testMonitor{t: t, tracker: NewTracker(srv, cfg.Policy(srv), t0), alerts: NewAlerter(cfg, opts), now: t0}
	t.Cleanup(func() { m.alerts.Close(context.Background()) })
	return m
}

// poll ends a poll `after` the last, with the outcome rr.
func (m *testMonitor) poll(after time.Duration, rr *result.Result) {
	m.now = m.now.Add(after)
	_, evs := m.tracker.Observe(Poll{Start: m.now, End: m.now, Result: rr})
	for _, ev := range evs {
		m.alerts.Handle(ev)
	}
}

// polls plays a string of outcomes, interval apart: '+' answered, '-'
// timed out.
func (m *testMonitor) polls(interval time.Duration, outcomes string) {
	for i := range len(outcomes) {
		m.poll(interval, parsePoll(m.t, outcomes[i:i+1]))
	}
}

// closeAndWait delivers what is queued.
func (m *testMonitor) closeAndWait() {
	m.t.Helper()
	if err := m.alerts.Close(testutil.Context(m.t)); err != nil {
		m.t.Fatalf("Close: %v", err)
	}
}

func configWith(t *testing.T, yaml string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(yaml), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func oneServer(hooks string) string {
	return "alert_group_window: 0\nwebhooks:\n" + hooks + "servers:\n  - {name: eu-1, address: '127.0.0.1:27015', labels: {region: eu}}\n"
}

// TestAlertDownUpCycle: a down/up cycle sends exactly one down and one up
// webhook, with the details of the outage.
func TestAlertDownUpCycle(t *testing.T) {
	t.Parallel()
	rc := testutil.NewReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	up := func() *result.Result {
		rr, maxp := answer("de_dust2", 12, nil), 24
		rr.Summary.MaxPlayers = &maxp
		return rr
	}
	m.poll(0, up())
	m.poll(30*time.Second, up())
	m.polls(30*time.Second, "--------") // down at the third, 60s after the first
	m.poll(30*time.Second, up())
	m.poll(30*time.Second, up())
	m.closeAndWait()

	got := alertsOf(t, rc)
	if len(got) != 2 {
		t.Fatalf("%d webhooks, want 2: %+v", len(got), got)
	}
	down, upAlert := got[0], got[1]
	if down.Kind != AlertDown || upAlert.Kind != AlertUp {
		t.Fatalf("kinds %s, %s", down.Kind, upAlert.Kind)
	}
	wantDownAt := t0.Add(30*time.Second + 3*30*time.Second)
	if !down.Time.Equal(wantDownAt) || down.Failures != 3 || down.Error == nil || down.Error.Kind != result.KindTimeout ||
		down.Since == nil || !down.Since.Equal(t0.Add(30*time.Second)) {
		t.Errorf("down alert = %+v", down)
	}
	if down.Version != 1 || down.Server != "eu-1" || down.Target != "127.0.0.1:27015" || down.Protocol != "a2s" || down.Labels["region"] != "eu" {
		t.Errorf("down alert's server = %+v", down)
	}
	if want := "eu-1 is down: 3 polls in a row failed, no answer for 1m30s (timeout: no answer)"; down.Text != want {
		t.Errorf("down text %q\nwant %q", down.Text, want)
	}
	if upAlert.DowntimeSeconds != 270 || upAlert.Summary == nil || *upAlert.Summary.Players != 12 {
		t.Errorf("up alert = %+v", upAlert)
	}
	if want := "eu-1 is up again after 4m30s: de_dust2, 12/24 players"; upAlert.Text != want {
		t.Errorf("up text %q\nwant %q", upAlert.Text, want)
	}
	r := rc.Request(0)
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(r.Header.Get("User-Agent"), "gsq-monitor") {
		t.Errorf("request %s, headers %v", r.Method, r.Header)
	}
}

// TestAlertRetryThenSuccess: a receiver that fails with 500 twice gets
// the alert on the third attempt, once.
func TestAlertRetryThenSuccess(t *testing.T) {
	t.Parallel()
	rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 0:
			http.Error(w, "oops", http.StatusInternalServerError)
		case 1:
			w.Header().Set("Retry-After", "0.001")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf, Backoff: time.Millisecond})
	m.polls(30*time.Second, "+---")
	m.closeAndWait()
	bodies := rc.Bodies()
	if len(bodies) != 3 {
		t.Fatalf("%d requests, want 3", len(bodies))
	}
	for i := 1; i < 3; i++ {
		if !bytes.Equal(bodies[i], bodies[0]) {
			t.Errorf("attempt %d sent another body", i+1)
		}
	}
	if s := m.alerts.Stats()[0]; s.Sent != 1 || s.Failed != 0 || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestAlertGiveUp: retries are bounded, 4xx is not retried, and a
// Retry-After beyond the limit drops the alert.
func TestAlertGiveUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		header   string
		attempts int
		want     int // requests
	}{
		{"5xx until the attempts run out", http.StatusBadGateway, "", 4, 4},
		{"4xx is final", http.StatusNotFound, "", 4, 1},
		{"Retry-After beyond the limit", http.StatusTooManyRequests, "3600", 4, 1},
		{"one attempt", http.StatusServiceUnavailable, "", -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs strings.Builder
			var mu sync.Mutex
			rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
				if tt.header != "" {
					w.Header().Set("Retry-After", tt.header)
				}
				http.Error(w, "no\nsuch hook", tt.status)
			})
			cfg := configWith(t, oneServer("  - "+rc.URL+"/secret-path\n"))
			m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{
				Backoff: time.Millisecond, Attempts: tt.attempts,
				Logf: func(f string, a ...any) { mu.Lock(); fmt.Fprintf(&logs, f+"\n", a...); mu.Unlock() },
			})
			m.polls(30*time.Second, "+---")
			m.closeAndWait()
			if n := rc.Count(); n != tt.want {
				t.Errorf("%d requests, want %d", n, tt.want)
			}
			if s := m.alerts.Stats()[0]; s.Sent != 0 || s.Failed != 1 {
				t.Errorf("stats %+v", s)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(logs.String(), "down alert for eu-1 dropped") || strings.Contains(logs.String(), "secret-path") ||
				strings.Count(logs.String(), "\n") != 1 {
				t.Errorf("log:\n%s", logs.String())
			}
		})
	}
}

// TestAlertReceiverNeverAnswers: a receiver that never answers blocks
// neither Handle nor the other webhooks, fills its own queue only, and
// Close gives up on it when told to.
func TestAlertReceiverNeverAnswers(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	canceled := make(chan struct{}, 100)
	hung := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			canceled <- struct{}{}
		case <-release:
		}
	})
	defer close(release)
	fine := testutil.NewReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+hung.URL+"\n  - "+fine.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf, QueueSize: 4, AttemptTimeout: time.Hour})

	// Ten down/up cycles: 20 alerts for each webhook. The hung one takes
	// the first and holds it; 4 wait; the rest are dropped. The other one
	// gets each cycle's two before the next cycle begins.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 10 {
			m.polls(30*time.Second, "+---")
			m.poll(6*time.Minute, answer("", -1, nil)) // past the cooldown
			testutil.Await(t, fine.Got, "a down alert")
			testutil.Await(t, fine.Got, "an up alert")
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a bound on a hang, not a timing
		t.Fatal("Handle blocked on a receiver that never answers")
	}
	testutil.Await(t, hung.Got, "the hung receiver's first request")
	s := m.alerts.Stats()
	if s[0].Raised != 20 || s[0].Dropped < 15 || s[1].Raised != 20 {
		t.Errorf("stats %+v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.alerts.Close(ctx); err != context.Canceled {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	<-canceled // the request in flight was canceled
	if n := hung.Count(); n != 1 {
		t.Errorf("the hung receiver got %d requests, want 1", n)
	}
	if n := fine.Count(); n != 20 {
		t.Errorf("the other receiver got %d requests, want 20", n)
	}
}

// TestAlertLossIsLoud: every alert the Alerter does not deliver is
// counted and logged (rate-limited, with the count of lines held back):
// those a full queue drops and those its receiver refuses. Issue 19
// found both silent; this test fails if they go silent again.
func TestAlertLossIsLoud(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		<-release
		http.Error(w, "no", http.StatusServiceUnavailable)
	})
	var mu sync.Mutex
	var logs []string
	cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{QueueSize: 1, Attempts: -1, Logf: func(f string, a ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(f, a...))
		mu.Unlock()
	}})
	// Eight alerts: the first is in flight, the second waits, six are
	// dropped; then the receiver fails the two it gets.
	m.polls(30*time.Second, "+---")
	testutil.Await(t, rc.Got, "the first alert")
	for range 3 {
		m.poll(6*time.Minute, answer("", -1, nil))
		m.polls(30*time.Second, "---")
	}
	m.poll(6*time.Minute, answer("", -1, nil))
	close(release)
	m.closeAndWait()
	if s := m.alerts.Stats()[0]; s.Raised != 8 || s.Dropped != 6 || s.Failed != 2 || s.Sent != 0 {
		t.Errorf("stats %+v, want 8 raised, 6 dropped, 2 failed", s)
	}
	mu.Lock()
	defer mu.Unlock()
	text := strings.Join(logs, "\n")
	for _, want := range []string{
		"1 alerts waiting already; up alert for eu-1 dropped",
		`HTTP 503 "no " after 1 attempts; down alert for eu-1 dropped`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("no log line with %q:\n%s", want, text)
		}
	}
}

// hostileName is a server name written to break out of JSON, chat markup
// and mentions.
const hostileName = "\"},\"content\":\"@everyone\n<!channel> <@123> [free](http://evil.example) **x** `y` \\u0000 &amp; </script>"

// TestAlertFormats: each format's body has the shape its receiver
// documents, and a hostile server name stays text.
func TestAlertFormats(t *testing.T) {
	t.Parallel()
	plain, discord, slack := testutil.NewReceiver(t, nil), testutil.NewReceiver(t, nil), testutil.NewReceiver(t, nil)
	cfg := configWith(t, "alert_group_window: 0\nwebhooks:\n"+
		"  - "+plain.URL+"\n"+
		"  - {url: '"+discord.URL+"', format: discord}\n"+
		"  - {url: '"+slack.URL+"', format: slack}\n"+
		"servers:\n  - name: eu-1\n    address: 127.0.0.1:27015\n    alerts: [down, up, {on: join, player: '', cooldown: 0}]\n")
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	hostile := func(players []string) *result.Result {
		rr, name := answer("de_<b>dust</b>", 3, players), hostileName
		rr.Summary.Name = &name
		return rr
	}
	m.poll(0, hostile([]string{}))                         // the players baseline: nobody
	m.poll(30*time.Second, hostile([]string{hostileName})) // join
	m.polls(30*time.Second, "---")
	m.poll(30*time.Second, hostile(nil))
	m.closeAndWait()

	for _, rc := range []*testutil.Receiver{plain, discord, slack} {
		if n := rc.Count(); n != 3 {
			t.Fatalf("%s: %d requests, want 3 (join, down, up)", rc.URL, n)
		}
	}
	for i, a := range alertsOf(t, plain) {
		if a.Summary == nil || a.Summary.Name == nil || *a.Summary.Name != hostileName {
			t.Errorf("json alert %d: the name did not come through as a string: %+v", i, a.Summary)
		}
		if strings.ContainsAny(a.Text, "\n\x00") {
			t.Errorf("json alert %d: text spans lines: %q", i, a.Text)
		}
		if i == 0 && (a.Kind != AlertJoin || a.Player != hostileName) {
			t.Errorf("join alert = %+v", a)
		}
		strictDecode(t, plain.Bodies()[i], &Alert{})
	}
	for i, b := range discord.Bodies() {
		checkDiscord(t, b)
		if i == 0 && !strings.Contains(string(b), `"allowed_mentions":{"parse":[]}`) {
			t.Errorf("discord body lacks allowed_mentions: %s", b)
		}
	}
	for _, b := range slack.Bodies() {
		checkSlack(t, b)
	}
}

// TestAlertFormatLimits: the longest texts a server can send still fit
// Discord's and Slack's limits.
func TestAlertFormatLimits(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("@everyone ñ*", 1000)
	players, maxp := 5, 10
	a := &Alert{
		Version: 1, Kind: AlertDown, Server: "eu-1", Target: "127.0.0.1:27015", Protocol: "a2s", Time: t0,
		Summary: &result.Summary{Name: &long, Map: &long, Players: &players, MaxPlayers: &maxp},
		Error:   &result.Error{Kind: result.KindProtocol, Message: long}, Failures: 3,
	}
	for _, kind := range []AlertKind{AlertDown, AlertUp, AlertMap, AlertJoin, AlertPlayers} {
		a.Kind, a.Map, a.PreviousMap, a.Player, a.Players, a.Threshold, a.Direction = kind, long, long, long, &players, 5, Rising
		for _, f := range []Format{FormatDiscord, FormatSlack} {
			b := mustBody(t, f, a)
			if f == FormatDiscord {
				checkDiscord(t, b)
			} else {
				checkSlack(t, b)
			}
		}
	}
}

// strictDecode decodes b into v, failing on keys v does not have.
func strictDecode(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Errorf("body %s: %v", b, err)
	}
}

// checkDiscord checks a body against Discord's documented "Execute
// Webhook" parameters and embed limits.
func checkDiscord(t *testing.T, b []byte) {
	t.Helper()
	var msg struct {
		Content string `json:"content"`
		Embeds  []struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			Color       int    `json:"color"`
			Timestamp   string `json:"timestamp"`
			Fields      []struct {
				Name   string `json:"name"`
				Value  string `json:"value"`
				Inline bool   `json:"inline"`
			} `json:"fields"`
			Footer *struct {
				Text string `json:"text"`
			} `json:"footer"`
		} `json:"embeds"`
		AllowedMentions *struct {
			Parse []string `json:"parse"`
		} `json:"allowed_mentions"`
	}
	strictDecode(t, b, &msg)
	runes := func(s string) int { return len([]rune(s)) }
	if msg.Content == "" && len(msg.Embeds) == 0 {
		t.Error("discord: neither content nor embeds")
	}
	if runes(msg.Content) > 2000 {
		t.Errorf("discord: content of %d characters", runes(msg.Content))
	}
	if msg.AllowedMentions == nil || msg.AllowedMentions.Parse == nil || len(msg.AllowedMentions.Parse) != 0 {
		t.Errorf("discord: allowed_mentions must have an empty parse list: %s", b)
	}
	if len(msg.Embeds) > 10 {
		t.Errorf("discord: %d embeds", len(msg.Embeds))
	}
	for _, e := range msg.Embeds {
		total := runes(e.Title) + runes(e.Description)
		if runes(e.Title) > 256 || runes(e.Description) > 4096 || len(e.Fields) > 25 || e.Color < 0 || e.Color > 0xffffff {
			t.Errorf("discord: embed over its limits: %s", b)
		}
		if _, err := time.Parse(time.RFC3339, e.Timestamp); err != nil {
			t.Errorf("discord: timestamp %q", e.Timestamp)
		}
		for _, f := range e.Fields {
			total += runes(f.Name) + runes(f.Value)
			if f.Name == "" || f.Value == "" || runes(f.Name) > 256 || runes(f.Value) > 1024 {
				t.Errorf("discord: bad field %+v", f)
			}
		}
		if e.Footer != nil {
			total += runes(e.Footer.Text)
		}
		if total > 6000 {
			t.Errorf("discord: embed of %d characters", total)
		}
	}
	// Every mention and markup character from the server is escaped.
	text := msg.Content
	for _, e := range msg.Embeds {
		for _, f := range e.Fields {
			text += "\n" + f.Value
		}
	}
	for _, bad := range []string{"@everyone", "<@123>", "<!channel>", "[free](", "**x**"} {
		for i := 0; ; {
			j := strings.Index(text[i:], bad)
			if j < 0 {
				break
			}
			if j += i; j == 0 || text[j-1] != '\\' {
				t.Errorf("discord: unescaped %q in %q", bad, text)
				break
			}
			i = j + 1
		}
	}
	if strings.ContainsAny(msg.Content, "\n\x00") {
		t.Errorf("discord: content spans lines: %q", msg.Content)
	}
}

// checkSlack checks a body against Slack's documented incoming-webhook
// payload and Block Kit limits.
func checkSlack(t *testing.T, b []byte) {
	t.Helper()
	type text struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	var msg struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type     string `json:"type"`
			Text     *text  `json:"text"`
			Fields   []text `json:"fields"`
			Elements []text `json:"elements"`
		} `json:"blocks"`
	}
	strictDecode(t, b, &msg)
	runes := func(s string) int { return len([]rune(s)) }
	if msg.Text == "" || len(msg.Blocks) == 0 || len(msg.Blocks) > 50 {
		t.Errorf("slack: text %q, %d blocks", msg.Text, len(msg.Blocks))
	}
	if strings.ContainsAny(msg.Text, "<>\n") {
		t.Errorf("slack: text has markup or lines: %q", msg.Text)
	}
	for _, bl := range msg.Blocks {
		switch bl.Type {
		case "header":
			if bl.Text == nil || bl.Text.Type != "plain_text" || runes(bl.Text.Text) > 150 || bl.Text.Text == "" {
				t.Errorf("slack: bad header %+v", bl.Text)
			}
		case "section":
			if bl.Text == nil && len(bl.Fields) == 0 {
				t.Error("slack: a section needs text or fields")
			}
			if bl.Text != nil && (bl.Text.Type != "plain_text" || runes(bl.Text.Text) > 3000 || bl.Text.Text == "") {
				t.Errorf("slack: bad section text %+v", bl.Text)
			}
			if len(bl.Fields) > 10 {
				t.Errorf("slack: %d fields", len(bl.Fields))
			}
			for _, f := range bl.Fields {
				if f.Type != "plain_text" || runes(f.Text) > 2000 || f.Text == "" {
					t.Errorf("slack: bad field %+v", f)
				}
			}
		case "context":
			if len(bl.Elements) == 0 || len(bl.Elements) > 10 {
				t.Errorf("slack: %d context elements", len(bl.Elements))
			}
		default:
			t.Errorf("slack: block type %q", bl.Type)
		}
	}
}

// TestAlerterReload: a reload keeps what was announced and the queues of
// the webhooks that stay; a removed webhook gets nothing new.
func TestAlerterReload(t *testing.T) {
	t.Parallel()
	a, b := testutil.NewReceiver(t, nil), testutil.NewReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+a.URL+"\n  - "+b.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	m.polls(30*time.Second, "+---") // down: both get it
	m.alerts.Reload(configWith(t, oneServer("  - "+a.URL+"\n")))
	m.polls(30*time.Second, "-")  // still down: nothing
	m.polls(30*time.Second, "+-") // up: a only
	m.closeAndWait()
	if got := alertsOf(t, a); len(got) != 2 || got[0].Kind != AlertDown || got[1].Kind != AlertUp {
		t.Errorf("a got %+v", got)
	}
	if got := alertsOf(t, b); len(got) != 1 || got[0].Kind != AlertDown {
		t.Errorf("b got %+v", got)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 21, 0, 0, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":                              0,
		"5":                             5 * time.Second,
		"0.25":                          250 * time.Millisecond,
		"-1":                            0,
		"soon":                          0,
		"Wed, 25 Nov 2026 21:00:30 GMT": 30 * time.Second,
		"Wed, 25 Nov 2026 20:00:00 GMT": 0,
	} {
		if got := retryAfter(h, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", h, got, want)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	o := &AlerterOptions{Backoff: time.Second, MaxBackoff: 10 * time.Second}
	for n, ceiling := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 50: 10 * time.Second} {
		for range 100 {
			if d := o.backoff(n); d < ceiling/2 || d > ceiling {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, d, ceiling/2, ceiling)
			}
		}
	}
}

// BenchmarkAlerterHandlePoll measures the cost of a poll's event for a
// server with the default rules and a map and players rule, when nothing
// is raised: what the poller pays per poll.
func BenchmarkAlerterHandlePoll(b *testing.B) {
	cfg, err := Parse([]byte("webhooks: ['http://127.0.0.1:1/']\nalerts: [down, up, map, {on: players, threshold: 10}]\nservers:\n  - {name: s, address: 127.0.0.1:27015}\n"), "b.yaml")
	if err != nil {
		b.Fatal(err)
	}
	a := NewAlerter(cfg, AlerterOptions{})
	defer a.Close(context.Background())
	players, mapName := 5, "de_dust2"
	st := &ServerState{Name: "s", Status: StatusUp, LastSuccess: t0, Summary: result.Summary{Players: &players, Map: &mapName}}
	ev := Event{Kind: EventPoll, Server: "s", Time: t0, State: st}
	b.ReportAllocs()
	for b.Loop() {
		a.Handle(ev)
	}
}
