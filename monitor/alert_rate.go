package monitor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/duration"
)

// Rate is how many messages a webhook may be sent per period: Discord
// takes 5 per 2 seconds from one webhook, Slack 1 a second. A webhook's
// `rate` key sets it ("5/2s", "1/s", "30/m"); each format has its
// service's as the default.
type Rate struct {
	N   int
	Per time.Duration
}

// Bounds of a webhook's rate.
const (
	maxRateN   = 1000
	minRatePer = time.Millisecond
	maxRatePer = time.Hour
)

// The formats' default rates: what their services document.
var (
	discordRate = Rate{5, 2 * time.Second} // per webhook, as Discord's rate-limit headers say
	slackRate   = Rate{1, time.Second}     // "1 message per second" for incoming webhooks
	jsonRate    = Rate{10, time.Second}    // gsq's own: a bound for a receiver that states none
)

// String is the rate as the config writes it: "5/2s".
func (r Rate) String() string {
	if r.Per == time.Second {
		return strconv.Itoa(r.N) + "/s"
	}
	return strconv.Itoa(r.N) + "/" + duration.Format(r.Per)
}

// ParseRate reads a rate: N/DURATION, where a duration without a number
// is one of its unit ("1/s", "30/m"), as internal/duration reads it.
func ParseRate(s string) (Rate, error) {
	n, per, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Rate{}, fmt.Errorf("%q is not a rate: write messages/period, such as 5/2s or 1/s", s)
	}
	var r Rate
	var err error
	if r.N, err = strconv.Atoi(strings.TrimSpace(n)); err != nil || r.N < 1 || r.N > maxRateN {
		return Rate{}, fmt.Errorf("%q: the messages must be a whole number from 1 to %d", s, maxRateN)
	}
	per = strings.TrimSpace(per)
	if per != "" && (per[0] < '0' || per[0] > '9') && per[0] != '.' {
		per = "1" + per
	}
	if r.Per, err = duration.Parse(per); err != nil {
		return Rate{}, fmt.Errorf("%q: %v", s, err)
	}
	if r.Per < minRatePer || r.Per > maxRatePer {
		return Rate{}, fmt.Errorf("%q: the period must be from %s to %s", s, duration.Format(minRatePer), duration.Format(maxRatePer))
	}
	return r, nil
}

// limiter spaces one webhook's messages: at most rate.N in any stretch
// of rate.Per (the times of the last N are kept), and none before the
// end of a pause the service asked for (429 with Retry-After). It is
// used by its queue's goroutine only.
type limiter struct {
	rate  Rate
	sent  []time.Time // the last rate.N sends, oldest first
	until time.Time   // a pause asked for
}

// next is when the next message may go, given now.
func (l *limiter) next(now time.Time) time.Time {
	at := now
	if len(l.sent) >= l.rate.N {
		at = later(at, l.sent[len(l.sent)-l.rate.N].Add(l.rate.Per))
	}
	return later(at, l.until)
}

// took notes a message sent at t.
func (l *limiter) took(t time.Time) {
	l.sent = append(l.sent, t)
	if len(l.sent) > l.rate.N {
		l.sent = append(l.sent[:0], l.sent[len(l.sent)-l.rate.N:]...)
	}
}

// pause holds every message until t.
func (l *limiter) pause(t time.Time) { l.until = later(l.until, t) }

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
