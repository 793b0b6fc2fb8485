package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/result"
)

// receiver is a webhook receiver on loopback that records what it gets.
// Its answer to each request is up to respond (nil: 204).
type receiver struct {
	*httptest.Server
	mu       sync.Mutex
	requests []*http.Request
	bodies   [][]byte
	got      chan struct{} // a value per request, after it is recorded
	respond  func(n int, w http.ResponseWriter, r *http.Request)
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	t.Helper()
	rc := &receiver{got: make(chan struct{}, 1000), respond: respond}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		n := len(rc.bodies)
		rc.requests = append(rc.requests, r)
		rc.bodies = append(rc.bodies, b)
		rc.mu.Unlock()
		rc.got <- struct{}{}
		if rc.respond != nil {
			rc.respond(n, w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.bodies)
}

// alerts decodes the bodies of a json-format receiver.
func (rc *receiver) alerts(t *testing.T) []Alert {
	t.Helper()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []Alert
	for _, b := range rc.bodies {
		var a Alert
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("body %s: %v", b, err)
		}
		out = append(out, a)
	}
	return out
}

// testMonitor plays the part of the poller for one server: it feeds each
// poll's outcome to a Health and the resulting events to an Alerter, as
// the service does.
type testMonitor struct {
	t      *testing.T
	name   string
	health *Health
	alerts *Alerter
	now    time.Time
	state  ServerState
}

func newTestMonitor(t *testing.T, cfg *Config, name string, opts AlerterOptions) *testMonitor {
	t.Helper()
	srv := cfg.Server(name)
	m := &testMonitor{
		t:      t,
		name:   name,
		health: NewHealth(cfg.HealthPolicy(srv), t0),
		alerts: NewAlerter(cfg, opts),
		now:    t0,
		state:  ServerState{Name: name, Target: srv.Address, Protocol: srv.Protocol, Queries: map[string]uint64{}},
	}
	t.Cleanup(func() { m.alerts.Close(context.Background()) })
	return m
}

// poll ends a poll `after` the last: '+' answered with the summary, '-'
// timed out.
func (m *testMonitor) poll(after time.Duration, outcome byte, sum result.Summary) {
	m.now = m.now.Add(after)
	var err *result.Error
	if outcome == '-' {
		err = errTimeout
	}
	kind := m.health.Observe(m.now, err)
	st := m.state
	st.Status, st.Since = m.health.Status(), m.health.Since()
	st.LastPoll, st.LastSuccess = m.now, m.health.LastSuccess()
	st.ConsecutiveFailures, st.LastError = m.health.ConsecutiveFailures(), m.health.LastError()
	if err == nil {
		st.Summary = sum
	}
	m.state = st
	if kind != "" {
		m.alerts.Handle(Event{Kind: kind, Server: m.name, Time: m.now, State: &st})
	}
	m.alerts.Handle(Event{Kind: EventPoll, Server: m.name, Time: m.now, State: &st})
}

// polls plays a string of outcomes, interval apart.
func (m *testMonitor) polls(interval time.Duration, outcomes string) {
	for i := range len(outcomes) {
		m.poll(interval, outcomes[i], result.Summary{})
	}
}

func (m *testMonitor) raised() uint64 {
	var n uint64
	for _, s := range m.alerts.Stats() {
		n += s.Raised
	}
	return n
}

// closeAndWait delivers what is queued.
func (m *testMonitor) closeAndWait() {
	m.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := m.alerts.Close(ctx); err != nil {
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
	return "webhooks:\n" + hooks + "servers:\n  - {name: eu-1, address: '127.0.0.1:27015', labels: {region: eu}}\n"
}

// TestAlertDownUpCycle: a down/up cycle produces exactly one down and one
// up webhook.
func TestAlertDownUpCycle(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	players, maxp, mapName := 12, 24, "de_dust2"
	sum := result.Summary{Players: &players, MaxPlayers: &maxp, Map: &mapName}
	m.poll(0, '+', sum)
	m.poll(30*time.Second, '+', sum)
	m.polls(30*time.Second, "--------") // down at the third, 60s after the first
	m.poll(30*time.Second, '+', sum)
	m.poll(30*time.Second, '+', sum)
	m.closeAndWait()

	got := rc.alerts(t)
	if len(got) != 2 {
		t.Fatalf("%d webhooks, want 2: %+v", len(got), got)
	}
	down, up := got[0], got[1]
	if down.Kind != AlertDown || up.Kind != AlertUp {
		t.Fatalf("kinds %s, %s", down.Kind, up.Kind)
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
	if up.DowntimeSeconds != 270 || up.Summary == nil || *up.Summary.Players != 12 {
		t.Errorf("up alert = %+v", up)
	}
	if want := "eu-1 is up again after 4m30s: de_dust2, 12/24 players"; up.Text != want {
		t.Errorf("up text %q\nwant %q", up.Text, want)
	}
	r := rc.requests[0]
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || !strings.HasPrefix(r.Header.Get("User-Agent"), "gsq-monitor") {
		t.Errorf("request %s, headers %v", r.Method, r.Header)
	}
}

// TestAlertFlappingNone: a flapping server produces no webhook until it
// has been down for the threshold; then exactly one.
func TestAlertFlappingNone(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	m.polls(30*time.Second, "+-+-+--+-+--+--+-+-+--+")
	if n := m.raised(); n != 0 {
		t.Fatalf("flapping raised %d alerts", n)
	}
	m.polls(30*time.Second, "--")
	if n := m.raised(); n != 0 {
		t.Fatalf("two failures (30s) raised %d alerts", n)
	}
	m.polls(30*time.Second, "-")
	if n := m.raised(); n != 1 {
		t.Fatalf("three failures over 60s raised %d alerts, want 1", n)
	}
	m.polls(30*time.Second, "------")
	m.closeAndWait()
	if got := rc.alerts(t); len(got) != 1 || got[0].Kind != AlertDown {
		t.Fatalf("webhooks: %+v, want one down", got)
	}
}

// TestAlertRetryThenSuccess: a receiver that fails with 500 twice gets
// the alert on the third attempt, once.
func TestAlertRetryThenSuccess(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
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
	if n := rc.count(); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
	for i := 1; i < 3; i++ {
		if !bytes.Equal(rc.bodies[i], rc.bodies[0]) {
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
			rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
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
			if n := rc.count(); n != tt.want {
				t.Errorf("%d requests, want %d", n, tt.want)
			}
			if s := m.alerts.Stats()[0]; s.Sent != 0 || s.Failed != 1 {
				t.Errorf("stats %+v", s)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(logs.String(), "alert dropped") || strings.Contains(logs.String(), "secret-path") ||
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
	hung := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			canceled <- struct{}{}
		case <-release:
		}
	})
	defer close(release)
	fine := newReceiver(t, nil)
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
			m.poll(6*time.Minute, '+', result.Summary{}) // past the cooldown
			<-fine.got
			<-fine.got
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second): // a bound on a hang, not a timing
		t.Fatal("Handle blocked on a receiver that never answers")
	}
	<-hung.got
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
	if n := hung.count(); n != 1 {
		t.Errorf("the hung receiver got %d requests, want 1", n)
	}
	if n := fine.count(); n != 20 {
		t.Errorf("the other receiver got %d requests, want 20", n)
	}
}

// hostileName is a server name written to break out of JSON, chat markup
// and mentions.
const hostileName = "\"},\"content\":\"@everyone\n<!channel> <@123> [free](http://evil.example) **x** `y` \\u0000 &amp; </script>"

// TestAlertFormats: each format's body has the shape its receiver
// documents, and a hostile server name stays text.
func TestAlertFormats(t *testing.T) {
	t.Parallel()
	plain, discord, slack := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	cfg := configWith(t, "webhooks:\n"+
		"  - "+plain.URL+"\n"+
		"  - {url: '"+discord.URL+"', format: discord}\n"+
		"  - {url: '"+slack.URL+"', format: slack}\n"+
		"servers:\n  - name: eu-1\n    address: 127.0.0.1:27015\n    alerts: [down, up, {on: join, player: '', cooldown: 0}]\n")
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	name, mapName, players := hostileName, "de_<b>dust</b>", 3
	sum := result.Summary{Name: &name, Map: &mapName, Players: &players}
	m.poll(0, '+', sum)
	m.state.Players = []Player{}
	m.poll(30*time.Second, '+', sum) // the players baseline: nobody
	m.state.Players = []Player{{Name: hostileName}}
	m.poll(30*time.Second, '+', sum) // join
	m.state.Players = nil
	m.polls(30*time.Second, "---")
	m.poll(30*time.Second, '+', sum)
	m.closeAndWait()

	for _, rc := range []*receiver{plain, discord, slack} {
		if n := rc.count(); n != 3 {
			t.Fatalf("%s: %d requests, want 3 (join, down, up)", rc.URL, n)
		}
	}
	for i, a := range plain.alerts(t) {
		if a.Summary == nil || a.Summary.Name == nil || *a.Summary.Name != hostileName {
			t.Errorf("json alert %d: the name did not come through as a string: %+v", i, a.Summary)
		}
		if strings.ContainsAny(a.Text, "\n\x00") {
			t.Errorf("json alert %d: text spans lines: %q", i, a.Text)
		}
		if i == 0 && (a.Kind != AlertJoin || a.Player != hostileName) {
			t.Errorf("join alert = %+v", a)
		}
		strictDecode(t, plain.bodies[i], &Alert{})
	}
	for i, b := range discord.bodies {
		checkDiscord(t, b)
		if i == 0 && !strings.Contains(string(b), `"allowed_mentions":{"parse":[]}`) {
			t.Errorf("discord body lacks allowed_mentions: %s", b)
		}
	}
	for _, b := range slack.bodies {
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
			b, err := body(f, a)
			if err != nil {
				t.Fatal(err)
			}
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
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	cfg := configWith(t, oneServer("  - "+a.URL+"\n  - "+b.URL+"\n"))
	m := newTestMonitor(t, cfg, "eu-1", AlerterOptions{Logf: t.Logf})
	m.polls(30*time.Second, "+---") // down: both get it
	m.alerts.Reload(configWith(t, oneServer("  - "+a.URL+"\n")))
	m.polls(30*time.Second, "-")  // still down: nothing
	m.polls(30*time.Second, "+-") // up: a only
	m.closeAndWait()
	if got := a.alerts(t); len(got) != 2 || got[0].Kind != AlertDown || got[1].Kind != AlertUp {
		t.Errorf("a got %+v", got)
	}
	if got := b.alerts(t); len(got) != 1 || got[0].Kind != AlertDown {
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
