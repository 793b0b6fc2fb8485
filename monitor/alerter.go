package monitor

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
)

// Alerter turns the monitor's events into webhook alerts. Give it every
// [Event] with [Alerter.Handle]; it decides what to alert on (the rules
// of each server, with their cooldowns) and delivers the alerts in the
// background, one queue per webhook.
//
// Handle never waits on the network: a webhook that is slow, failing or
// not answering at all fills its own queue, and alerts beyond it are
// dropped with a log line. Alerts that come together go as one message
// per webhook (the config's alert_group_window; alert_group.go), and
// each webhook is sent no more than its rate. Deliveries are retried
// with exponential backoff and jitter on network errors and 5xx, and
// after the Retry-After of a 429, a bounded number of times.
//
// With a journal (AlerterOptions.Journal, the store), what the rules
// announced and every alert not yet delivered are written down before
// the alert is sent, and read back by [OpenAlerter]: a restart sends
// nothing that was already sent and loses nothing that was due.
//
// An Alerter is safe for concurrent use.
type Alerter struct {
	opts AlerterOptions
	log  *ratelog.Limiter
	j    *journal // nil without a journal

	mu     sync.Mutex
	engine *ruleEngine
	hooks  []Webhook
	window time.Duration
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

func keyOf(h Webhook) queueKey { return queueKey{h.URL, h.Format} }

// NewAlerter returns an Alerter for cfg's servers, rules and webhooks,
// without a journal (opts.Journal is not used): it starts afresh.
func NewAlerter(cfg *Config, opts AlerterOptions) *Alerter {
	opts.Journal = nil
	a := newAlerter(cfg, opts)
	a.start()
	return a
}

// OpenAlerter returns an Alerter for cfg that carries on from
// opts.Journal: what the rules announced, and when (their cooldowns),
// for the servers still at the same address, and the alerts not yet
// delivered, queued again for their webhooks (by name; those of a
// webhook no longer configured are dropped, with a log line).
func OpenAlerter(ctx context.Context, cfg *Config, opts AlerterOptions) (*Alerter, error) {
	a := newAlerter(cfg, opts)
	if a.j != nil {
		if err := a.restore(ctx, cfg); err != nil {
			a.cancel()
			return nil, err
		}
	}
	a.start()
	return a, nil
}

func newAlerter(cfg *Config, opts AlerterOptions) *Alerter {
	ctx, cancel := context.WithCancel(context.Background())
	a := &Alerter{
		opts:   opts,
		log:    &ratelog.Limiter{Logf: opts.Logf},
		engine: newRuleEngine(cfg),
		queues: make(map[queueKey]*queue),
		window: cfg.GroupWindow,
		ctx:    ctx,
		cancel: cancel,
	}
	if opts.Journal != nil {
		a.j = newJournal(opts.Journal, a.log)
	}
	a.setHooks(cfg.Webhooks)
	return a
}

// start starts the queues' goroutines (the journal starts its own when
// it has something to write).
func (a *Alerter) start() {
	for _, q := range a.queues {
		a.wg.Add(1)
		go q.run(&a.wg)
	}
}

// restore reads the journal back.
func (a *Alerter) restore(ctx context.Context, cfg *Config) error {
	log, err := a.j.st.LoadAlerts(ctx)
	if err != nil {
		return err
	}
	for name, state := range log.States {
		if !a.engine.restore(name, state) {
			a.j.forget(name) // a server gone, or moved: its state no longer applies
		} else {
			a.j.saved[name] = string(state)
		}
	}
	byName := map[string]Webhook{}
	for _, h := range cfg.Webhooks {
		byName[h.Name] = h
	}
	now := time.Now()
	items := map[*queue][]item{}
	var gone []int64
	for _, o := range log.Outbox {
		h, ok := byName[o.Webhook]
		al := &Alert{}
		if err := json.Unmarshal(o.Alert, al); !ok || err != nil {
			gone = append(gone, o.ID)
			a.log.Printf("gone "+o.Webhook, "monitor: an alert kept for webhook %q from the last run is dropped: the webhook is no longer configured, or the alert cannot be read", o.Webhook)
			continue
		}
		q := a.queues[keyOf(h)]
		q.raised.Add(1)
		items[q] = append(items[q], item{alert: al, id: o.ID, at: now})
	}
	for q, its := range items {
		q.push(its, 0)
	}
	a.j.finish(gone)
	return nil
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
	old := a.engine.servers
	a.engine.reload(cfg)
	if a.j != nil {
		for name := range old {
			if a.engine.servers[name] == nil {
				a.j.forget(name)
			}
		}
	}
	a.window = cfg.GroupWindow
	a.setHooks(cfg.Webhooks)
}

// setHooks starts the queues of new webhooks, reconfigures those that
// stay and closes those removed. a.mu is held, or a is not started yet.
func (a *Alerter) setHooks(hooks []Webhook) {
	keep := make(map[queueKey]bool, len(hooks))
	var done func([]int64)
	if a.j != nil {
		done = a.j.finish
	}
	for _, h := range hooks {
		k := keyOf(h)
		keep[k] = true
		if q := a.queues[k]; q != nil {
			q.configure(h, a.window)
			continue
		}
		q := newQueue(&a.opts, a.log, a.ctx, h, a.window, done)
		a.queues[k] = q
		if a.hooks != nil { // started: a reload
			a.wg.Add(1)
			go q.run(&a.wg)
		}
	}
	for k, q := range a.queues {
		if !keep[k] {
			q.close()
			delete(a.queues, k)
		}
	}
	a.hooks = hooks
	if a.hooks == nil {
		a.hooks = []Webhook{}
	}
}

// Handle takes one event of the monitor. It returns at once.
func (a *Alerter) Handle(ev Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	alerts := a.engine.handle(ev)
	if al := a.afterMaintenance(ev); al != nil {
		alerts = append(alerts, al)
	}
	a.raise(ev.Server, alerts)
}

// afterMaintenance is the down alert of a server whose down a silence (a
// maintenance window) held back, at its first poll after the silence
// when it is still down: the work left it down, and its admin hears of
// it then, not at the next outage. a.mu is held.
func (a *Alerter) afterMaintenance(ev Event) *Alert {
	sa := a.engine.servers[ev.Server]
	if sa == nil || sa.down == nil || ev.Kind != EventPoll || ev.State == nil || ev.State.Status != StatusDown {
		return nil
	}
	if t := sa.status; !t.quiet || t.announced != StatusDown || a.opts.Silenced == nil || a.opts.Silenced(sa.srv.Name, sa.srv.Labels, ev.Time) {
		return nil
	}
	al := sa.downAlert(ev)
	al.AfterMaintenance = true
	return al
}

// raise queues the alerts an event of server raised, or journals them.
// a.mu is held.
func (a *Alerter) raise(server string, alerts []*Alert) {
	var pend []pending
	for _, al := range alerts {
		silenced := a.silenced(al)
		for _, h := range a.hooks {
			if !al.rule.sendsTo(h.Name) {
				continue
			}
			q := a.queues[keyOf(h)]
			if silenced {
				q.silenced.Add(1)
				continue
			}
			if q.reserve(al) {
				pend = append(pend, pending{q: q, webhook: h.Name, alert: al})
			}
		}
	}
	if a.j == nil {
		now := time.Now()
		for _, p := range pend {
			p.q.push([]item{{alert: p.alert, at: now}}, 1)
		}
		return
	}
	a.j.record(server, a.engine.snapshot(server), pend)
}

// silenced asks AlerterOptions.Silenced about an alert; an up alert
// answering a silenced down alert is silenced too. a.mu is held.
func (a *Alerter) silenced(al *Alert) bool {
	sa := a.engine.servers[al.Server]
	switch {
	case al.Kind == AlertUp && sa.status.quiet:
		sa.status.quiet = false
		return true
	case a.opts.Silenced != nil && a.opts.Silenced(al.Server, al.Labels, al.Time):
		if al.Kind == AlertDown {
			sa.status.quiet = true
		}
		return true
	case al.Kind == AlertDown:
		sa.status.quiet = false
	}
	return false
}

// WebhookStats counts a webhook's alerts.
type WebhookStats struct {
	Webhook string // the webhook's name
	Raised  uint64 // alerts for this webhook, whatever became of them
	Sent    uint64 // taken by the receiver
	Failed  uint64 // given up on after their attempts, or refused
	Dropped uint64 // not sent: the queue was full, or the Alerter closed without a journal
	// Kept are the alerts left in the journal when the Alerter closed, for
	// the next start; Silenced those AlerterOptions.Silenced held back.
	Kept, Silenced uint64
	// Messages are the requests the receiver took (a message carries one
	// alert or a group); Throttled the 429 answers it gave.
	Messages, Throttled uint64
	Queued              int // waiting now
}

// Stats counts the alerts of each webhook.
func (a *Alerter) Stats() []WebhookStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]WebhookStats, 0, len(a.hooks))
	for _, h := range a.hooks {
		q := a.queues[keyOf(h)]
		q.mu.Lock()
		queued := len(q.waiting) + q.reserved
		q.mu.Unlock()
		out = append(out, WebhookStats{
			Webhook:   h.Name,
			Raised:    q.raised.Load(),
			Sent:      q.sent.Load(),
			Failed:    q.failed.Load(),
			Dropped:   q.dropped.Load(),
			Kept:      q.kept.Load(),
			Silenced:  q.silenced.Load(),
			Messages:  q.messages.Load(),
			Throttled: q.throttled.Load(),
			Queued:    queued,
		})
	}
	return out
}

// Close stops taking events and delivers what is queued, until ctx ends;
// then it abandons what is left (in-flight requests are canceled; with a
// journal, what is left is kept there for the next start) and returns
// ctx's error. It returns nil when everything queued was delivered or
// given up on.
func (a *Alerter) Close(ctx context.Context) error {
	a.mu.Lock()
	first := !a.closed
	a.closed = true
	a.mu.Unlock()
	if first && a.j != nil {
		a.j.drain() // what Handle recorded reaches its queues
	}
	a.mu.Lock()
	if first {
		for _, q := range a.queues {
			q.close()
		}
	}
	a.mu.Unlock()
	done := make(chan struct{})
	go func() {
		a.wg.Wait()
		close(done)
	}()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	a.cancel()
	<-done // canceled requests and waits end at once
	if first && a.j != nil {
		a.j.stop()
	}
	return err
}
