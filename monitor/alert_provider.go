package monitor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Provider delivers alerts to one kind of channel: the webhooks of one
// [Format]. Each provider lives in a file of its own (alert_json.go,
// alert_discord.go, alert_slack.go, alert_shoutrrr.go) and registers
// itself there with registerProvider; the next channel is one more such
// file.
//
// Send makes one attempt to deliver one message carrying the first
// alerts, as many as one message of its channel holds (at least one),
// bounded by ctx, and returns how many it carried, and nil once the
// channel took them. A message of one alert is that alert's own; a
// message of several sums them up (see alert_group.go). Otherwise it
// returns an error that says what failed without the webhook's secrets
// (its URL's path, its headers), a *[SendError] when it knows whether
// another attempt may help. Grouping, rate limits, retries, their
// backoff, a channel's Retry-After, the queue, the journal and the
// counts are the [Alerter]'s, the same for every provider.
type Provider interface {
	Send(ctx context.Context, alerts []*Alert) (int, error)
}

// SendError is a failed delivery whose provider knows more: whether
// trying again may help (a network error, 429, 5xx), whether the channel
// said it was sent too much (429: Throttled), and how long it asked to
// wait first (Retry-After; zero when it did not).
type SendError struct {
	Err       error
	Retry     bool
	Throttled bool
	After     time.Duration
}

func (e *SendError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *SendError) Unwrap() error { return e.Err }

// providerKind is a format: how to build the provider of one of its
// webhooks, and which URLs are its service's own.
type providerKind struct {
	format Format
	// new returns the provider of webhook h, sending with client.
	new func(h Webhook, client *http.Client) Provider
	// owns reports whether a URL is the format's service (Discord's
	// host, say), for a webhook that names no format; nil owns none.
	owns func(u *url.URL) bool
	// rate is what the service accepts from one webhook, for a webhook
	// that sets no rate.
	rate Rate
}

// providerKinds are the formats, registered by their files.
var providerKinds = map[Format]providerKind{}

func registerProvider(k providerKind) { providerKinds[k.format] = k }

// formatNames lists the formats, sorted, for messages.
func formatNames() []string {
	var names []string
	for f := range providerKinds {
		names = append(names, string(f))
	}
	slices.Sort(names)
	return names
}

// guessFormat picks a webhook's format from its URL: a service's own
// URLs get its format, anything else gsq's JSON.
func guessFormat(u *url.URL) Format {
	for _, name := range formatNames() {
		if k := providerKinds[Format(name)]; k.owns != nil && k.owns(u) {
			return k.format
		}
	}
	return FormatJSON
}

// maxResponseRead bounds what is read of a webhook's answer: enough for
// an error message, and to let the connection be reused.
const maxResponseRead = 64 << 10

// userAgent is sent with every webhook request.
const userAgent = "gsq-monitor (+https://github.com/gsq-project/gsq)"

// jsonWebhook is a Provider that POSTs one JSON body per message: what
// gsq's own format, Discord's and Slack's share. encode makes the body
// of a message of the first alerts, and says how many it carries.
type jsonWebhook struct {
	hook   Webhook
	client *http.Client
	encode encoder
	next   time.Time // when the service takes the next message, if it said (pacer)
}

// pacer is a Provider that says, after a message went, when its service
// takes the next one: Discord's X-RateLimit-* headers say it before a
// 429 must. Zero when it did not say.
type pacer interface {
	nextSend() time.Time
}

func (p *jsonWebhook) nextSend() time.Time { return p.next }

// rateLimitReset reads a service's count of the requests left (Discord's
// X-RateLimit-Remaining and X-RateLimit-Reset-After, in seconds): when
// none are left, the reset; zero otherwise.
func rateLimitReset(h http.Header, now time.Time) time.Time {
	if strings.TrimSpace(h.Get("X-RateLimit-Remaining")) != "0" {
		return time.Time{}
	}
	if d := retryAfter(h.Get("X-RateLimit-Reset-After"), now); d > 0 {
		return now.Add(d)
	}
	return time.Time{}
}

// encoder makes the body of a message of the first alerts (at least
// one), and says how many it carries.
type encoder func(alerts []*Alert) (body []byte, n int, err error)

// chatJSON is the encoder of a chat format: one alert's own message, or
// a group's, made by group with as many alerts as it holds.
func chatJSON[M any](one func(*Alert) M, group func([]*Alert) (M, int)) encoder {
	return func(alerts []*Alert) ([]byte, int, error) {
		if len(alerts) == 1 {
			b, err := json.Marshal(one(alerts[0]))
			return b, 1, err
		}
		m, n := group(alerts)
		b, err := json.Marshal(m)
		return b, n, err
	}
}

// postJSON returns the constructor of a jsonWebhook provider with
// encode.
func postJSON(encode encoder) func(Webhook, *http.Client) Provider {
	return func(h Webhook, client *http.Client) Provider {
		return &jsonWebhook{hook: h, client: client, encode: encode}
	}
}

// Send posts a message's body. Any 2xx answer takes it; a network
// error, 429 or 5xx may pass; anything else is final.
func (p *jsonWebhook) Send(ctx context.Context, alerts []*Alert) (int, error) {
	body, n, err := p.encode(alerts)
	if err != nil {
		return n, fmt.Errorf("encode: %w", err)
	}
	return n, p.post(ctx, body, deliveries(alerts[:n]))
}

// deliveries is the X-Gsq-Delivery header of a message: the idempotency
// keys of the alerts in it that a fleet committed, comma-separated.
func deliveries(alerts []*Alert) string {
	var keys []string
	for _, a := range alerts {
		if a.delivery != "" {
			keys = append(keys, a.delivery)
		}
	}
	return strings.Join(keys, ",")
}

// post sends one body, with the delivery keys of its alerts, if any.
func (p *jsonWebhook) post(ctx context.Context, body []byte, delivery string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.hook.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("bad URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent)
	for k, v := range p.hook.Headers {
		req.Header.Set(k, v)
	}
	if delivery != "" {
		req.Header.Set("X-Gsq-Delivery", delivery)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		// The error text holds the URL, a secret: say what failed only.
		return &SendError{Err: errors.New(netReason(err)), Retry: true}
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	resp.Body.Close()
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		p.next = rateLimitReset(resp.Header, time.Now())
		return nil
	}
	err = fmt.Errorf("HTTP %d %q", resp.StatusCode, truncate(oneLine(string(msg)), 200))
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return &SendError{Err: err, Retry: true, Throttled: resp.StatusCode == http.StatusTooManyRequests,
			After: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
	}
	return err
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
