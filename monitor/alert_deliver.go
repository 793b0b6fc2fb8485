package monitor

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/store"
)

// Defaults of AlerterOptions.
const (
	// DefaultQueueSize is the alerts that may wait per webhook: a storm
	// of 1,000 servers going down at once fits, in about ten messages.
	DefaultQueueSize      = 10_000
	DefaultAttempts       = 6
	DefaultBackoff        = time.Second
	DefaultMaxBackoff     = time.Minute
	DefaultAttemptTimeout = 10 * time.Second
	DefaultMaxRetryAfter  = 5 * time.Minute
	// DefaultMaxThrottled bounds the 429 answers in a row, each with a
	// Retry-After, that one message may get before it is given up on.
	// They are not counted as attempts: a rate limit says "later", not
	// "broken".
	DefaultMaxThrottled = 50
)

// queue delivers the alerts of one webhook, in order: a bounded list of
// the alerts waiting and one goroutine, so that a slow or dead receiver
// holds up its own alerts only, never the poller and never the other
// webhooks. Each message takes the alerts waiting, as many as one
// message of its format holds, once the group window of the first has
// passed and the webhook's rate allows.
type queue struct {
	opts *AlerterOptions
	log  *ratelog.Limiter
	ctx  context.Context // canceled when the Alerter gives up waiting
	// done hands the journal the outbox rows of alerts delivered or
	// given up on; nil without a journal.
	done func(ids []int64)

	wake chan struct{} // a new alert, a reload or the close; holds one

	mu       sync.Mutex
	hook     Webhook       // as configured now: a reload may change its name, headers or rate
	window   time.Duration // the config's alert_group_window
	waiting  []item        // oldest first; a message in flight carries its first alerts
	reserved int           // admitted by Handle, in the journal on their way here
	sending  int           // 1 while a message is in flight: its head is not waiting
	closing  bool

	raised, sent, failed, dropped, kept atomic.Uint64
	messages, throttled, silenced       atomic.Uint64
}

// item is one alert waiting for one webhook.
type item struct {
	alert *Alert
	id    int64     // its row in the journal's outbox; 0 without a journal
	at    time.Time // when it was queued (the wall clock), for the group window
}

// what names a message's alerts in a log line: their kind and server,
// which the config names, never text a game server sent.
func what(items []item) string {
	if len(items) == 1 {
		return fmt.Sprintf("%s alert for %s", items[0].alert.Kind, items[0].alert.Server)
	}
	var names []string
	for _, it := range items[:min(len(items), 3)] {
		names = append(names, fmt.Sprintf("%s for %s", it.alert.Kind, it.alert.Server))
	}
	s := strings.Join(names, ", ")
	if len(items) > 3 {
		s += fmt.Sprintf(" and %d more", len(items)-3)
	}
	return fmt.Sprintf("%s (%s)", Plural(len(items), "alert", "alerts"), s)
}

func newQueue(opts *AlerterOptions, log *ratelog.Limiter, ctx context.Context, h Webhook, window time.Duration, done func([]int64)) *queue {
	return &queue{opts: opts, log: log, ctx: ctx, done: done, wake: make(chan struct{}, 1), hook: h, window: window}
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// configure takes a webhook's settings after a reload.
func (q *queue) configure(h Webhook, window time.Duration) {
	q.mu.Lock()
	q.hook, q.window = h, window
	q.mu.Unlock()
	q.signal()
}

// close makes the queue deliver what waits, without a group window, and
// stop once it is empty.
func (q *queue) close() {
	q.mu.Lock()
	q.closing = true
	q.mu.Unlock()
	q.signal()
}

// reserve admits one alert, counted as raised, or drops it (and says so
// in the log) when the queue is full: the alerts waiting, and those on
// their way through the journal, are opts.QueueSize already.
func (q *queue) reserve(a *Alert) bool {
	q.raised.Add(1)
	q.mu.Lock()
	full := len(q.waiting)+q.reserved >= q.opts.queueSize()+q.sending
	if !full {
		q.reserved++
	}
	hook := q.hook
	q.mu.Unlock()
	if full {
		q.dropped.Add(1)
		q.log.Printf("full "+hook.Name, "monitor: webhook %s: %d alerts waiting already; %s dropped", hook, q.opts.queueSize(), what([]item{{alert: a}}))
	}
	return !full
}

// push queues alerts reserved before (reserved says how many of them);
// those restored from the journal at start were not.
func (q *queue) push(items []item, reserved int) {
	q.mu.Lock()
	q.waiting = append(q.waiting, items...)
	q.reserved -= reserved
	q.mu.Unlock()
	q.signal()
}

// sleep waits until t, or for the queue's wake when woken is true. It
// returns false when the Alerter gave up waiting.
func (q *queue) sleep(t time.Time, woken bool) bool {
	d := time.Until(t)
	if d <= 0 {
		return q.ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	var wake <-chan struct{}
	if woken {
		wake = q.wake
	}
	select {
	case <-timer.C:
	case <-wake:
	case <-q.ctx.Done():
		return false
	}
	return true
}

// run delivers the queue's alerts until it is closed and empty, or the
// Alerter gives up waiting.
func (q *queue) run(wg *sync.WaitGroup) {
	defer wg.Done()
	lim := &limiter{}
	var attempts, throttled int
	for {
		q.mu.Lock()
		n, closing, hook, window := len(q.waiting), q.closing, q.hook, q.window
		// Alerts still in the journal on their way here keep a closing
		// queue open: push wakes it.
		closing = closing && q.reserved == 0
		var first time.Time
		if n > 0 {
			first = q.waiting[0].at
		}
		q.mu.Unlock()
		switch {
		case q.ctx.Err() != nil:
			q.abandon()
			return
		case n == 0 && closing:
			return
		case n == 0:
			select {
			case <-q.wake:
			case <-q.ctx.Done():
			}
			continue
		}
		// The group window: alerts that come within it of the first go
		// with it. New alerts wake the wait only to wait again.
		if !closing && time.Since(first) < window {
			if !q.sleep(first.Add(window), true) {
				q.abandon()
				return
			}
			continue
		}
		lim.rate = hook.rate()
		if !q.sleep(lim.next(time.Now()), false) {
			q.abandon()
			return
		}
		// A window of zero sends each alert on its own.
		q.mu.Lock()
		batch := slices.Clone(q.waiting)
		if window == 0 {
			batch = batch[:1]
		}
		q.sending = 1
		q.mu.Unlock()
		sent, next, err := q.send(hook, batch)
		q.mu.Lock()
		q.sending = 0
		q.mu.Unlock()
		now := time.Now()
		lim.took(now)
		// The service said when it takes the next message: no sooner,
		// and no later than the longest wait honoured.
		if limit := now.Add(q.opts.maxRetryAfter()); next.After(limit) {
			next = limit
		}
		lim.pause(next)
		if err == nil {
			q.finish(batch[:sent])
			q.sent.Add(uint64(sent))
			q.messages.Add(1)
			attempts, throttled = 0, 0
			continue
		}
		if q.ctx.Err() != nil {
			q.abandon()
			return
		}
		msg := batch[:sent]
		var se *SendError
		if errors.As(err, &se) && se.Throttled {
			q.throttled.Add(1)
		}
		switch {
		case !errors.As(err, &se) || !se.Retry:
			q.fail(hook, msg, "%v", err)
		case se.After > q.opts.maxRetryAfter():
			q.fail(hook, msg, "%v, and asked to wait %s", err, duration.Brief(se.After))
		case se.Throttled && se.After > 0:
			// Sent too much: wait as asked, and do not count it an
			// attempt, up to a bound.
			if throttled++; throttled > q.opts.maxThrottled() {
				q.fail(hook, msg, "%v %d times in a row", err, throttled)
			} else {
				lim.pause(time.Now().Add(se.After))
				continue
			}
		default:
			if attempts++; attempts >= q.opts.attempts() {
				q.fail(hook, msg, "%v after %d attempts", err, attempts)
			} else {
				lim.pause(time.Now().Add(max(se.After, q.opts.backoff(attempts))))
				continue
			}
		}
		attempts, throttled = 0, 0
	}
}

// send makes one attempt at one message of the first alerts of batch,
// and returns how many it carried, and when the service takes the next
// message if it said (pacer).
func (q *queue) send(hook Webhook, batch []item) (int, time.Time, error) {
	alerts := make([]*Alert, len(batch))
	for i, it := range batch {
		alerts[i] = it.alert
		if it.alert.delivery == "" && it.id != 0 {
			// Alone, the idempotency key is the alert's time and outbox
			// row, both kept with it: the same when a restart sends it
			// again. The time too, because SQLite gives a deleted row's
			// id to the next. (An alert is shared by the queues of its
			// webhooks: each sends its own copy.)
			c := *it.alert
			c.delivery = c.Server + ":" + strconv.FormatInt(c.Time.UnixMilli(), 10) + "." + strconv.FormatInt(it.id, 10)
			alerts[i] = &c
		}
	}
	p := providerKinds[hook.Format].new(hook, q.opts.client())
	ctx, cancel := context.WithTimeout(q.ctx, q.opts.attemptTimeout())
	defer cancel()
	n, err := p.Send(ctx, alerts)
	var next time.Time
	if pc, ok := p.(pacer); ok {
		next = pc.nextSend()
	}
	return min(max(n, 1), len(batch)), next, err
}

// finish takes the first alerts out of the queue, delivered or given up
// on, and out of the journal.
func (q *queue) finish(msg []item) {
	q.mu.Lock()
	q.waiting = slices.Delete(q.waiting, 0, len(msg))
	q.mu.Unlock()
	if q.done != nil {
		ids := make([]int64, 0, len(msg))
		for _, it := range msg {
			if it.id != 0 {
				ids = append(ids, it.id)
			}
		}
		q.done(ids)
	}
}

// fail gives up on a message's alerts, counts them and logs why (as the
// receiver said it, never the webhook's secrets).
func (q *queue) fail(hook Webhook, msg []item, format string, args ...any) {
	q.finish(msg)
	q.failed.Add(uint64(len(msg)))
	q.log.Printf("fail "+hook.Name, "monitor: webhook %s: %s; %s dropped", hook, fmt.Sprintf(format, args...), what(msg))
}

// abandon leaves what waits when the Alerter stops waiting: kept in the
// journal for the next start, or, without one, dropped. Either way it
// is counted and logged.
func (q *queue) abandon() {
	q.mu.Lock()
	left, hook := q.waiting, q.hook
	q.waiting = nil
	q.mu.Unlock()
	if len(left) == 0 {
		return
	}
	if q.done != nil {
		q.kept.Add(uint64(len(left)))
		q.log.Printf("stop "+hook.Name, "monitor: webhook %s: the monitor stopped before %s went; kept in the store for the next start", hook, what(left))
		return
	}
	q.dropped.Add(uint64(len(left)))
	q.log.Printf("stop "+hook.Name, "monitor: webhook %s: the monitor stopped before %s went; dropped", hook, what(left))
}

// AlerterOptions tune how alerts are delivered. The zero value is the
// defaults; a negative Attempts means one, a negative Backoff no wait
// between attempts, and any other negative value the default.
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
	// MaxThrottled bounds the 429 answers with a Retry-After in a row
	// one message may get (default DefaultMaxThrottled).
	MaxThrottled int
	// Journal, when set, keeps what the rules announced and the alerts
	// not yet delivered across restarts ([OpenAlerter] reads it back).
	Journal store.AlertJournal
	// Silenced, when set, is asked about every alert before it goes,
	// with the server's labels: true drops it as silenced (counted, not
	// logged), as during a maintenance window ([Maintenance.Silences]).
	// An up alert answering a silenced down alert is silenced too.
	Silenced func(server string, labels map[string]string, at time.Time) bool
}

func (o *AlerterOptions) maxThrottled() int {
	return cmp.Or(max(0, o.MaxThrottled), DefaultMaxThrottled)
}

func (o *AlerterOptions) attempts() int { return max(1, cmp.Or(o.Attempts, DefaultAttempts)) }

// backoff is the wait before retry number n (1-based): exponential, with
// jitter; none when Backoff is negative.
func (o *AlerterOptions) backoff(n int) time.Duration {
	d, ceiling := max(0, cmp.Or(o.Backoff, DefaultBackoff)), cmp.Or(max(0, o.MaxBackoff), DefaultMaxBackoff)
	for i := 1; i < n && d < ceiling; i++ {
		d *= 2
	}
	d = min(d, ceiling)
	return d/2 + rand.N(d/2+1)
}

func (o *AlerterOptions) attemptTimeout() time.Duration {
	return cmp.Or(max(0, o.AttemptTimeout), DefaultAttemptTimeout)
}

func (o *AlerterOptions) maxRetryAfter() time.Duration {
	return cmp.Or(max(0, o.MaxRetryAfter), DefaultMaxRetryAfter)
}

func (o *AlerterOptions) queueSize() int { return cmp.Or(max(0, o.QueueSize), DefaultQueueSize) }

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
