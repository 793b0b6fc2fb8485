package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
)

// Defaults of AlerterOptions.
const (
	DefaultQueueSize      = 256
	DefaultAttempts       = 6
	DefaultBackoff        = time.Second
	DefaultMaxBackoff     = time.Minute
	DefaultAttemptTimeout = 10 * time.Second
	DefaultMaxRetryAfter  = 5 * time.Minute
)

// maxResponseRead bounds what is read of a webhook's answer: enough for
// an error message, and to let the connection be reused.
const maxResponseRead = 64 << 10

// userAgent is sent with every webhook request.
const userAgent = "gsq-monitor (+https://github.com/gsq-project/gsq)"

// queue delivers the alerts of one webhook, in order, one at a time: a
// bounded channel and one goroutine, so that a slow or dead receiver
// holds up its own alerts only, never the poller and never the other
// webhooks.
type queue struct {
	opts *AlerterOptions
	log  *ratelog.Limiter
	ch   chan delivery
	ctx  context.Context // canceled when the Alerter gives up waiting

	raised, sent, failed, dropped atomic.Uint64
}

// delivery is one alert's body for one webhook. It carries the webhook as
// it was configured when the alert was raised: a reload may change its
// name or headers while it waits.
type delivery struct {
	hook Webhook
	body []byte
}

func (q *queue) run(wg *sync.WaitGroup) {
	defer wg.Done()
	for d := range q.ch {
		if q.ctx.Err() != nil {
			q.dropped.Add(1)
			continue // closing: what is left is dropped
		}
		if q.deliver(d) {
			q.sent.Add(1)
		} else {
			q.failed.Add(1)
		}
	}
}

// enqueue adds a body to the queue without waiting: a full queue drops
// it, and says so in the log.
func (q *queue) enqueue(d delivery) {
	q.raised.Add(1)
	select {
	case q.ch <- d:
	default:
		q.dropped.Add(1)
		q.log.Printf("full "+d.hook.Name, "monitor: webhook %s: %d alerts waiting already; alert dropped", d.hook, cap(q.ch))
	}
}

// deliver posts one body, again after a failure that may pass (a network
// error, 5xx, 429), at most Attempts times. It reports whether the
// receiver took it.
func (q *queue) deliver(d delivery) bool {
	attempts := q.opts.attempts()
	for attempt := 1; ; attempt++ {
		retry, wait, err := q.post(d)
		if err == nil {
			return true
		}
		if !retry {
			q.log.Printf("fail "+d.hook.Name, "monitor: webhook %s: %v; alert dropped", d.hook, err)
			return false
		}
		if attempt >= attempts {
			q.log.Printf("fail "+d.hook.Name, "monitor: webhook %s: %v; alert dropped after %d attempts", d.hook, err, attempt)
			return false
		}
		if wait > q.opts.maxRetryAfter() {
			q.log.Printf("fail "+d.hook.Name, "monitor: webhook %s: %v, and asked to wait %s; alert dropped", d.hook, err, FormatDuration(wait))
			return false
		}
		wait = max(wait, q.opts.backoff(attempt))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-q.ctx.Done():
			t.Stop()
			return false
		}
	}
}

// post sends one request. It returns nil when the receiver took the
// alert (2xx); otherwise whether trying again may help and how long the
// receiver asked to wait (Retry-After), if it did.
func (q *queue) post(d delivery) (retry bool, wait time.Duration, err error) {
	ctx, cancel := context.WithTimeout(q.ctx, q.opts.attemptTimeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.hook.URL, bytes.NewReader(d.body))
	if err != nil {
		return false, 0, errors.New("bad URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	for k, v := range d.hook.Headers {
		req.Header.Set(k, v)
	}
	resp, err := q.opts.client().Do(req)
	if err != nil {
		// The error text holds the URL, a secret: say what failed only.
		return true, 0, errors.New(netReason(err))
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return false, 0, nil
	}
	err = fmt.Errorf("HTTP %d %q", resp.StatusCode, truncate(oneLine(string(msg)), 200))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return true, retryAfter(resp.Header.Get("Retry-After"), time.Now()), err
	}
	return false, 0, err
}

// netReason says why a request failed, without the URL that the HTTP
// client's errors quote.
func netReason(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 {
		s = s[i+2:] // "Post "URL": dial tcp ...: connection refused" -> "connection refused"
	}
	return s
}

// retryAfter reads a Retry-After header: seconds (Discord sends
// fractions) or an HTTP date. It returns 0 when there is none or it
// cannot be read.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil {
		if s <= 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// AlerterOptions tune how alerts are delivered. The zero value is the
// defaults.
type AlerterOptions struct {
	// Logf receives the notable events: an alert dropped because its
	// webhook's queue was full, a delivery that failed for good. Lines of
	// one kind are rate-limited. Nil discards them.
	Logf func(format string, args ...any)
	// Client sends the requests; nil means a client of the package's own.
	Client *http.Client
	// QueueSize bounds the alerts waiting per webhook (default 256).
	QueueSize int
	// Attempts bounds the tries per alert (default 6; -1 means one).
	Attempts int
	// Backoff is the wait before the first retry (default 1s); it doubles
	// with each retry up to MaxBackoff (default 1m), and each wait is drawn
	// at random between half and all of it, so that many monitors do not
	// retry in step.
	Backoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one request (default 10s).
	AttemptTimeout time.Duration
	// MaxRetryAfter is the longest Retry-After honoured (default 5m); a
	// receiver that asks for longer gets the alert dropped.
	MaxRetryAfter time.Duration
}

func (o *AlerterOptions) attempts() int { return max(1, zeroIsDefault(o.Attempts, DefaultAttempts)) }

// backoff is the wait before retry number n (1-based): exponential, with
// jitter.
func (o *AlerterOptions) backoff(n int) time.Duration {
	d, ceiling := orDefault(o.Backoff, DefaultBackoff), orDefault(o.MaxBackoff, DefaultMaxBackoff)
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	return d/2 + rand.N(d/2+1)
}

func (o *AlerterOptions) attemptTimeout() time.Duration {
	return orDefault(o.AttemptTimeout, DefaultAttemptTimeout)
}

func (o *AlerterOptions) maxRetryAfter() time.Duration {
	return orDefault(o.MaxRetryAfter, DefaultMaxRetryAfter)
}

func (o *AlerterOptions) queueSize() int { return orDefault(o.QueueSize, DefaultQueueSize) }

// defaultClient sends webhooks when the options give no client; it does
// not follow redirects to other hosts' idea of where a secret URL's
// alerts should go.
var defaultClient = &http.Client{
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (o *AlerterOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	return defaultClient
}
