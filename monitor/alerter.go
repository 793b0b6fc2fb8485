package monitor

import (
	"context"
	"sync"

	"github.com/gsq-project/gsq/internal/ratelog"
)

// Alerter turns the monitor's events into webhook alerts. Give it every
// [Event] with [Alerter.Handle]; it decides what to alert on (the rules
// of each server, with their cooldowns) and delivers the alerts in the
// background, one queue per webhook.
//
// Handle never waits on the network: a webhook that is slow, failing or
// not answering at all fills its own queue, and alerts beyond it are
// dropped with a log line. Deliveries are retried with exponential
// backoff and jitter on network errors, 5xx and 429 (honouring
// Retry-After), a bounded number of times.
//
// An Alerter is safe for concurrent use.
type Alerter struct {
	opts AlerterOptions
	log  *ratelog.Limiter

	mu     sync.Mutex
	engine *ruleEngine
	hooks  []Webhook
	queues map[queueKey]*queue
	closed bool

	wg     sync.WaitGroup
	ctx    context.Context // canceled when Close gives up waiting
	cancel context.CancelFunc
}

// queueKey identifies a webhook's queue across reloads: a reload that
// keeps a webhook keeps its queue and what waits in it.
type queueKey struct {
	url    string
	format Format
}

// NewAlerter returns an Alerter for cfg's servers, rules and webhooks.
func NewAlerter(cfg *Config, opts AlerterOptions) *Alerter {
	ctx, cancel := context.WithCancel(context.Background())
	a := &Alerter{
		opts:   opts,
		log:    &ratelog.Limiter{Logf: opts.Logf},
		engine: newRuleEngine(cfg),
		queues: make(map[queueKey]*queue),
		ctx:    ctx,
		cancel: cancel,
	}
	a.setHooks(cfg.Webhooks)
	return a
}

// Reload takes a new config (after [Loader.Reload]). Servers and rules
// that stay keep what they announced, so a reload raises no alert of its
// own; webhooks that stay keep their queues. A webhook removed delivers
// what it has queued, then stops.
func (a *Alerter) Reload(cfg *Config) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	a.engine.reload(cfg)
	a.setHooks(cfg.Webhooks)
}

// setHooks starts the queues of new webhooks and stops those of removed
// ones. a.mu is held, or a is not shared yet.
func (a *Alerter) setHooks(hooks []Webhook) {
	keep := make(map[queueKey]bool, len(hooks))
	for _, h := range hooks {
		k := queueKey{h.URL, h.Format}
		keep[k] = true
		if a.queues[k] != nil {
			continue
		}
		q := &queue{opts: &a.opts, log: a.log, ch: make(chan delivery, a.opts.queueSize()), ctx: a.ctx}
		a.queues[k] = q
		a.wg.Add(1)
		go q.run(&a.wg)
	}
	for k, q := range a.queues {
		if !keep[k] {
			close(q.ch)
			delete(a.queues, k)
		}
	}
	a.hooks = hooks
}

// Handle takes one event of the monitor. It returns at once.
func (a *Alerter) Handle(ev Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	for _, al := range a.engine.handle(ev) {
		for _, h := range a.hooks {
			if !al.rule.sendsTo(h.Name) {
				continue
			}
			q := a.queues[queueKey{h.URL, h.Format}]
			b, err := body(h.Format, al)
			if err != nil {
				a.log.Printf("encode", "monitor: alert for %s: %v", al.Server, err)
				continue
			}
			q.enqueue(delivery{hook: h, body: b})
		}
	}
}

// WebhookStats counts a webhook's alerts.
type WebhookStats struct {
	Webhook string // the webhook's name
	Raised  uint64 // alerts for this webhook, whatever became of them
	Sent    uint64 // taken by the receiver
	Failed  uint64 // given up on after their attempts, or refused
	Dropped uint64 // not sent: the queue was full, or the Alerter closed
	Queued  int    // waiting now
}

// Stats counts the alerts of each webhook.
func (a *Alerter) Stats() []WebhookStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]WebhookStats, 0, len(a.hooks))
	for _, h := range a.hooks {
		q := a.queues[queueKey{h.URL, h.Format}]
		out = append(out, WebhookStats{
			Webhook: h.Name,
			Raised:  q.raised.Load(),
			Sent:    q.sent.Load(),
			Failed:  q.failed.Load(),
			Dropped: q.dropped.Load(),
			Queued:  len(q.ch),
		})
	}
	return out
}

// Close stops taking events and delivers what is queued, until ctx ends;
// then it abandons what is left (in-flight requests are canceled) and
// returns ctx's error. It returns nil when everything queued was
// delivered or given up on.
func (a *Alerter) Close(ctx context.Context) error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		for _, q := range a.queues {
			close(q.ch)
		}
	}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() {
		a.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		a.cancel()
		return nil
	case <-ctx.Done():
		a.cancel()
		<-done // canceled requests and waits end at once
		return ctx.Err()
	}
}
