package web

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
)

// stream is an open live stream read by the test.
type stream struct {
	resp *http.Response
	r    *bufio.Reader
}

func openStream(t *testing.T, url, token string) *stream {
	t.Helper()
	req, _ := http.NewRequestWithContext(testutil.Context(t), http.MethodGet, url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return &stream{resp, bufio.NewReader(resp.Body)}
}

// next returns the next event's name and data, skipping comments; a
// comment is returned as name ":" when comments is set.
func (s *stream) next(comments bool) (name, data string, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if name != "" || data != "" {
				return name, data, nil
			}
		case strings.HasPrefix(line, ":"):
			if comments {
				return ":", strings.TrimSpace(line[1:]), nil
			}
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
}

func TestStreamDelivers(t *testing.T) {
	t.Parallel()
	live := newTestLive(upState("alpha", 1, 2, "m"), upState("beta", 1, 2, "m"))
	srv, h := newTestServer(t, newTestStore(t), live, Options{})

	all := openStream(t, srv.URL+"/api/v1/events", "")
	<-live.subscribed
	onlyBeta := openStream(t, srv.URL+"/api/v1/events?server=beta&kind=down,up", "")
	if h.hub.count() != 2 {
		t.Fatalf("%d streams open", h.hub.count())
	}

	down := downState("alpha")
	down.Summary.Name = ptr("<script>alert(1)</script>")
	live.publish(monitor.Event{Kind: monitor.EventPoll, Server: "alpha", Time: time.Now(), State: &down})
	live.publish(monitor.Event{Kind: monitor.EventDown, Server: "beta", Time: time.Now(), State: ptr(downState("beta"))})

	name, data, err := all.next(false)
	if err != nil || name != "poll" {
		t.Fatalf("first event: %q %q %v", name, data, err)
	}
	if strings.Contains(data, "<script>") {
		t.Errorf("the event data carries raw HTML: %s", data)
	}
	var ev struct {
		Kind   string
		Server string
		State  struct {
			Status  string
			Summary struct{ Name string }
		}
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		t.Fatal(err)
	}
	if ev.Server != "alpha" || ev.State.Status != "down" || ev.State.Summary.Name != "<script>alert(1)</script>" {
		t.Errorf("event: %+v", ev)
	}
	if name, _, _ := all.next(false); name != "down" {
		t.Errorf("second event %q, want down", name)
	}
	// The filtered stream got beta's down only.
	if name, data, _ := onlyBeta.next(false); name != "down" || !strings.Contains(data, `"server":"beta"`) {
		t.Errorf("filtered stream: %q %s", name, data)
	}
}

// TestStreamEventFields: the id is the event's number, and a map change
// and a baseline join carry what the page needs to tell them.
func TestStreamEventFields(t *testing.T) {
	t.Parallel()
	live := newTestLive(upState("alpha", 1, 2, "m"))
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})
	s := openStream(t, srv.URL+"/api/v1/events", "")
	<-live.subscribed
	live.publish(monitor.Event{Kind: monitor.EventMap, Server: "alpha", Time: time.Now(), Detail: "de_nuke", Previous: "de_dust2", Seq: 41})
	live.publish(monitor.Event{Kind: monitor.EventJoin, Server: "alpha", Time: time.Now(), Detail: "Alice", Baseline: true, Seq: 42})
	for _, want := range []struct{ id, data string }{
		{"41", `"detail":"de_nuke","previous":"de_dust2"`},
		{"42", `"detail":"Alice","baseline":true`},
	} {
		line, err := s.r.ReadString('\n')
		for err == nil && !strings.HasPrefix(line, "id: ") {
			line, err = s.r.ReadString('\n')
		}
		if err != nil || strings.TrimSpace(line) != "id: "+want.id {
			t.Fatalf("id line %q, %v; want id %s", line, err, want.id)
		}
		if _, data, err := s.next(false); err != nil || !strings.Contains(data, want.data) {
			t.Errorf("event %s: %s, %v; want %s", want.id, data, err, want.data)
		}
	}
}

func TestStreamHeartbeat(t *testing.T) {
	t.Parallel()
	live := newTestLive()
	srv, _ := newTestServer(t, newTestStore(t), live, Options{Heartbeat: 20 * time.Millisecond})
	s := openStream(t, srv.URL+"/api/v1/events", "")
	if name, text, _ := s.next(true); name != ":" || text != "connected" {
		t.Fatalf("first line: %q %q", name, text)
	}
	if name, text, err := s.next(true); name != ":" || text != "heartbeat" {
		t.Fatalf("second line: %q %q %v", name, text, err)
	}
}

// TestStreamSlowClient checks that a client that stops reading is dropped
// once its queue is full, while the monitor's events keep flowing to the
// other clients: the handler never holds more than StreamBuffer events
// for one client, and never blocks the monitor.
func TestStreamSlowClient(t *testing.T) {
	t.Parallel()
	live := newTestLive()
	const buffer = 8
	srv, h := newTestServer(t, newTestStore(t), live, Options{StreamBuffer: buffer})

	slow := openStream(t, srv.URL+"/api/v1/events", "") // never read below
	<-live.subscribed
	fast := openStream(t, srv.URL+"/api/v1/events", "")

	// Events large enough to fill the slow client's socket buffers, so
	// that its handler blocks writing and its queue fills.
	big := upState("alpha", 1, 2, "m")
	big.Labels = map[string]string{"pad": strings.Repeat("x", 64<<10)}
	const events = 400 // 26 MB, more than loopback's socket buffers hold
	for i := 0; i < events; i++ {
		live.publish(monitor.Event{Kind: monitor.EventPoll, Server: "alpha", Time: time.Now(), State: &big})
		// In step with the fast client, which so never falls behind.
		if _, _, err := fast.next(false); err != nil {
			t.Fatalf("the fast client, event %d: %v", i, err)
		}
	}
	if n := h.hub.count(); n != 1 {
		t.Errorf("%d streams open after the slow client fell behind, want 1", n)
	}
	if n := h.hub.dropped.Load(); n != 1 {
		t.Errorf("%d streams counted as dropped, want 1", n)
	}
	// The slow client's stream ends once it reads what was sent.
	if _, err := io.Copy(io.Discard, slow.r); err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Logf("slow client: %v", err)
	}
}

// TestStreamSubscriptionCut: when the monitor cuts off the handler's
// subscription (the handler fell behind it), every stream ends at once,
// as the page expects, counted on /metrics; a page that reconnects gets
// a new subscription and the events from there on.
func TestStreamSubscriptionCut(t *testing.T) {
	t.Parallel()
	live := newTestLive(upState("alpha", 1, 2, "m"))
	srv, h := newTestServer(t, newTestStore(t), live, Options{})
	a := openStream(t, srv.URL+"/api/v1/events", "")
	<-live.subscribed
	b := openStream(t, srv.URL+"/api/v1/events", "")
	live.cutAll()
	for _, s := range []*stream{a, b} {
		if _, _, err := s.next(false); err == nil {
			t.Error("a stream went on after the monitor cut its subscription")
		}
	}
	if n := h.hub.dropped.Load(); n != 2 {
		t.Errorf("%d streams counted as dropped, want 2", n)
	}
	fams := scrape(t, srv.URL+"/metrics", "")
	mustSample(t, fams, "gsq_live_streams_dropped_total", nil, 2)
	mustSample(t, fams, "gsq_event_subscribers_dropped_total", nil, 1)

	again := openStream(t, srv.URL+"/api/v1/events", "")
	<-live.subscribed
	live.publish(monitor.Event{Kind: monitor.EventConfig, Time: time.Now(), Seq: 7})
	if name, data, err := again.next(false); err != nil || name != "config" {
		t.Errorf("after reconnecting: %q %q %v", name, data, err)
	}
}

func TestStreamLimit(t *testing.T) {
	t.Parallel()
	live := newTestLive()
	srv, _ := newTestServer(t, newTestStore(t), live, Options{MaxStreams: 1})
	openStream(t, srv.URL+"/api/v1/events", "")
	var e errorBody
	testutil.GetJSON(t, srv.URL+"/api/v1/events", "", http.StatusServiceUnavailable, &e)
	if e.Error.Code != "busy" {
		t.Errorf("%+v", e)
	}
}

// TestStreamUnsubscribes checks that the hub holds a subscription only
// while a stream is open.
func TestStreamUnsubscribes(t *testing.T) {
	t.Parallel()
	live := newTestLive()
	srv, h := newTestServer(t, newTestStore(t), live, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	<-live.subscribed
	cancel()
	resp.Body.Close()
	// The handler notices the closed connection when it next writes or
	// its context ends; publishing until the subscription is gone bounds
	// the wait without a sleep.
	deadline := time.Now().Add(20 * time.Second)
	for {
		live.mu.Lock()
		n := len(live.subs)
		live.mu.Unlock()
		if n == 0 && h.hub.count() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscriptions, %d streams after the client left", n, h.hub.count())
		}
		live.publish(monitor.Event{Kind: monitor.EventConfig, Time: time.Now()})
	}
}
