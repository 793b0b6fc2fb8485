package monitor

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/testutil"
)

// discordReceiver is shaped like a Discord webhook: it takes `limit`
// messages in any stretch of `per`, and answers more with 429, a
// Retry-After in seconds (a fraction, as Discord's JSON body has it) and
// Discord's rate-limit headers. It records the messages it takes.
type discordReceiver struct {
	*httptest.Server
	limit int
	per   time.Duration

	mu       sync.Mutex
	accepted []time.Time
	taken    []discordMessage
	refused  int
}

func newDiscordReceiver(t *testing.T, limit int, per time.Duration) *discordReceiver {
	rc := &discordReceiver{limit: limit, per: per}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *discordReceiver) serve(w http.ResponseWriter, r *http.Request) {
	var m discordMessage
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		http.Error(w, `{"message": "Cannot send an empty message", "code": 50006}`, http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	now := time.Now()
	for len(rc.accepted) > 0 && now.Sub(rc.accepted[0]) >= rc.per {
		rc.accepted = rc.accepted[1:]
	}
	w.Header().Set("X-RateLimit-Limit", fmt.Sprint(rc.limit))
	if len(rc.accepted) >= rc.limit {
		rc.refused++
		wait := rc.accepted[0].Add(rc.per).Sub(now).Seconds()
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("Retry-After", fmt.Sprintf("%.3f", wait))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprintf(w, `{"message": "You are being rate limited.", "retry_after": %.3f, "global": false}`, wait)
		return
	}
	rc.accepted = append(rc.accepted, now)
	rc.taken = append(rc.taken, m)
	w.Header().Set("X-RateLimit-Remaining", fmt.Sprint(rc.limit-len(rc.accepted)))
	w.WriteHeader(http.StatusNoContent)
}

// stormLine is one alert's line in a group's list.
var stormLine = regexp.MustCompile(`^• (srv\\-\d{4}) is (down|up)`)

// TestAlertStormDiscord429 re-runs issue 19's alert storm: 1,000
// servers on one host go down together, and come back. The receiver is
// shaped like Discord's (5 messages per window, 429 with Retry-After
// beyond: Discord's 2 s window made 200 ms), and the webhook is set to
// send twice what it takes, so that it is told to wait. Every server's
// down and up reach it exactly once: none lost, none doubled; and the
// counts on /metrics say what happened.
func TestAlertStormDiscord429(t *testing.T) {
	t.Parallel()
	rc := newDiscordReceiver(t, 5, 200*time.Millisecond)
	cfg := fleetConfig(t, "alert_group_window: 200ms\nwebhooks:\n  - {name: discord, url: '"+rc.URL+"', format: discord, rate: 10/200ms}\n",
		1000, "203.0.113.10")
	a := NewAlerter(cfg, AlerterOptions{Logf: t.Logf})
	f := newFleet(t, cfg, a)
	f.polls(30*time.Second, "+---")
	f.polls(30*time.Second, "+")
	if err := a.Close(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	seen := map[string]int{}
	for _, m := range rc.taken {
		if len(m.Embeds) != 1 {
			t.Fatalf("a message with %d embeds", len(m.Embeds))
		}
		for _, line := range strings.Split(m.Embeds[0].Description, "\n") {
			if g := stormLine.FindStringSubmatch(line); g != nil {
				seen[g[2]+" "+g[1]]++
			} else {
				t.Errorf("a line of no alert: %q", line)
			}
		}
		if c, d := utf8.RuneCountInString(m.Content), utf8.RuneCountInString(m.Embeds[0].Description); c > discordContentMax || d > discordDescMax {
			t.Errorf("a message over Discord's limits: content %d, description %d characters", c, d)
		}
	}
	lost, doubled := 0, 0
	for i := range 1000 {
		for _, kind := range []string{"down", "up"} {
			switch n := seen[fmt.Sprintf("%s srv\\-%04d", kind, i)]; {
			case n == 0:
				lost++
			case n > 1:
				doubled++
			}
		}
	}
	s := a.Stats()[0]
	t.Logf("2,000 alerts (1,000 down, 1,000 up): %d messages taken, %d answered 429; %d lost, %d doubled; stats %+v",
		len(rc.taken), rc.refused, lost, doubled, s)
	if lost != 0 || doubled != 0 || len(seen) != 2000 {
		t.Errorf("%d alerts lost, %d doubled, %d distinct", lost, doubled, len(seen))
	}
	if s.Raised != 2000 || s.Sent != 2000 || s.Failed+s.Dropped != 0 || s.Messages != uint64(len(rc.taken)) || s.Throttled != uint64(rc.refused) {
		t.Errorf("stats %+v, want 2,000 raised and sent, %d messages, %d throttled", s, len(rc.taken), rc.refused)
	}
	if rc.refused == 0 {
		t.Errorf("the receiver never answered 429: the storm did not test Retry-After")
	}
	if len(rc.taken) >= 200 {
		t.Errorf("%d messages for 2,000 alerts: not grouped", len(rc.taken))
	}
}
