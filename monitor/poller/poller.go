// Package poller runs the polls of `gsq monitor` and does what they
// call for. It polls every configured server with the scan engine, on
// one [scan.Session] per protocol shared by all servers (so each
// server's challenge is kept from one poll to the next), each server on
// its own schedule with jitter, on one clock (package time's: tests move
// it with testing/synctest). It hands each poll to its server's
// [monitor.Tracker], and the state and events the tracker makes go to
// the three places that read them: the history in a [store.Store] (the
// sample, and the joins and leaves that make sessions), the alerts of a
// [monitor.Alerter], and the subscribers of [Poller.Subscribe] (the
// page's live stream). [Poller] implements web.Live: a scrape or a page
// view reads the live state it keeps, never a game server.
//
// # Loss
//
// An event is never skipped silently. A subscriber that falls
// Options.SubscriberBuffer events behind is cut off: its channel is closed, the
// cut is counted ([Poller.SubscribersDropped]) and logged, and it
// subscribes again and reloads the state, as the web page does. Events
// carry a sequence number without gaps, so that a reader can check. An
// alert the Alerter cannot deliver is counted and logged there.
//
// The A2S queries are Valve's server queries
// (https://developer.valvesoftware.com/wiki/Server_queries); OGP is the
// Open Game Protocol v0.91.
package poller

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/store"
)

// Defaults of Options.
const (
	DefaultMaintainEvery = time.Minute
	DefaultWriteEvery    = time.Second
	DefaultUptimeEvery   = time.Minute
	// DefaultHostInterval spaces the datagrams sent to one server: a poll
	// asks its sections one after the other, as a polite client does.
	DefaultHostInterval = 10 * time.Millisecond
	// DefaultConcurrency is how many servers may be polled at once: 10,000
	// servers at 30 s with a fifth of them silent keep about 350 polls
	// waiting for their 5 s deadline.
	DefaultConcurrency = 4096
	// DefaultSubscriberBuffer is how many events a subscriber may fall
	// behind before the poller cuts it off.
	DefaultSubscriberBuffer = 1024
	// DefaultSampleBuffer bounds the samples waiting for the store while
	// it fails: past it, the oldest are dropped (logged, and counted by
	// SamplesDropped). A million samples is about an hour of 10,000
	// servers at 30 s, a few hundred MB at most.
	DefaultSampleBuffer = 1 << 20
)

// Options configure a Poller. Store is required; the rest may be zero.
type Options struct {
	// Store keeps the history. The Poller writes to it; the caller opens
	// it before and closes it after [Poller.Run].
	Store store.Store
	// Scanner is the template of the scan sessions: timeouts, retries,
	// deadline, rate. Its Protocol is set per protocol; a zero
	// HostInterval means DefaultHostInterval (negative: none), a zero
	// Concurrency DefaultConcurrency.
	Scanner scan.Scanner
	// Alerter tunes the delivery of alerts (the webhooks' HTTP client,
	// retries, a maintenance window's Silenced); its Logf, when nil, is
	// the Poller's. Its Journal is the Store.
	Alerter monitor.AlerterOptions
	// Logf receives what goes wrong, rate-limited.
	Logf func(format string, args ...any)
	// WriteEvery is how often, at most, the polls are written to the
	// store (default DefaultWriteEvery; negative: after each poll).
	WriteEvery time.Duration
	// MaintainEvery is how often the store rolls up and applies retention
	// (default DefaultMaintainEvery); UptimeEvery how often the 24-hour
	// uptime of every server is read from it (default DefaultUptimeEvery).
	MaintainEvery time.Duration
	UptimeEvery   time.Duration
	// SubscriberBuffer is how many events a subscriber may fall behind
	// before it is cut off (default DefaultSubscriberBuffer).
	SubscriberBuffer int
	// SampleBuffer is how many samples may wait for a store that fails
	// before the oldest are dropped (default DefaultSampleBuffer).
	SampleBuffer int
	// Vantage is the region of a fleet's worker, written with each of
	// its samples; "" for a single process.
	Vantage string
	// Shard, when set, shares the servers with the other monitors of a
	// fleet (see [Sharding]); nil polls every server.
	Shard Sharding
	// Maintenance, when set, holds the maintenance windows: the poller
	// gives it the config's (at start and at each reload), marks the
	// incidents that begin inside one, and the Alerter silences their
	// alerts.
	Maintenance *monitor.Maintenance
}

// Poller is a running monitor. Create it with [New], start it with
// [Poller.Run]; it is safe for concurrent use.
type Poller struct {
	opts    Options
	st      store.Store
	alerter *monitor.Alerter
	log     *ratelog.Limiter
	rng     *rand.Rand // jitter; guarded by mu

	mu     sync.Mutex
	cfg    *monitor.Config
	runs   map[string]*serverRun // by name
	byID   map[int]*serverRun    // by poll generation (scan.Target.Tag)
	sorted []*serverRun          // by name
	queue  pollQueue
	nextID int
	subs   map[*subscriber]struct{}
	seq    uint64 // the last event's sequence number
	cut    uint64 // subscribers cut off

	wake chan struct{} // nudges the scheduler after a reload

	sessMu   sync.Mutex
	sessions map[string]*scan.Session // by protocol, opened on first use
	feeds    map[string]chan scan.Target
	runCtx   context.Context // the context of Run, for the feeds
	runWG    sync.WaitGroup

	w writer
}

// New returns a poller for cfg's servers. It records them in the store
// (the history of servers no longer configured stays), carries on the
// player sessions a previous run left open, and starts nothing until
// [Poller.Run].
func New(ctx context.Context, cfg *monitor.Config, opts Options) (*Poller, error) {
	if opts.Store == nil {
		return nil, errors.New("monitor: poller: no store")
	}
	opts.WriteEvery = max(0, cmp.Or(opts.WriteEvery, DefaultWriteEvery))
	opts.MaintainEvery = cmp.Or(max(0, opts.MaintainEvery), DefaultMaintainEvery)
	opts.UptimeEvery = cmp.Or(max(0, opts.UptimeEvery), DefaultUptimeEvery)
	opts.Scanner.Concurrency = cmp.Or(max(0, opts.Scanner.Concurrency), DefaultConcurrency)
	opts.Scanner.HostInterval = max(0, cmp.Or(opts.Scanner.HostInterval, DefaultHostInterval))
	opts.SubscriberBuffer = cmp.Or(max(0, opts.SubscriberBuffer), DefaultSubscriberBuffer)
	opts.SampleBuffer = cmp.Or(max(0, opts.SampleBuffer), DefaultSampleBuffer)
	if opts.Alerter.Logf == nil {
		opts.Alerter.Logf = opts.Logf
	}
	if opts.Alerter.Silenced == nil && opts.Maintenance != nil {
		opts.Alerter.Silenced = opts.Maintenance.Silences
	}
	opts.Maintenance.SetConfig(cfg.Maintenance)
	s := &Poller{
		opts:     opts,
		st:       opts.Store,
		log:      &ratelog.Limiter{Logf: opts.Logf},
		rng:      rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		cfg:      cfg,
		runs:     make(map[string]*serverRun, len(cfg.Servers)),
		byID:     make(map[int]*serverRun, len(cfg.Servers)),
		subs:     make(map[*subscriber]struct{}),
		wake:     make(chan struct{}, 1),
		sessions: make(map[string]*scan.Session),
		feeds:    make(map[string]chan scan.Target),
	}
	s.w.init(s)
	if err := s.st.SyncServers(ctx, storeServers(cfg)); err != nil {
		return nil, err
	}
	present, err := s.st.Present(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for i := range cfg.Servers {
		r := s.addRun(cfg, &cfg.Servers[i], now)
		if p, ok := present[r.srv.Name]; ok {
			r.tracker.ResumePlayers(p.Players, p.Listed)
		}
	}
	s.resort()
	// The store keeps what the alerts announced, and those not yet
	// delivered, across restarts.
	aopts := opts.Alerter
	aopts.Journal = s.st
	if s.alerter, err = monitor.OpenAlerter(ctx, cfg, aopts); err != nil {
		return nil, err
	}
	return s, nil
}

func storeServers(cfg *monitor.Config) []store.Server {
	out := make([]store.Server, len(cfg.Servers))
	for i, srv := range cfg.Servers {
		out[i] = store.Server{Name: srv.Name, Target: srv.Address, Protocol: srv.Protocol, Labels: srv.Labels}
	}
	return out
}

// Config returns the running config.
func (s *Poller) Config() *monitor.Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

// Run polls the servers until ctx is done, then stops: the polls in
// flight are abandoned (they say nothing about the servers), what was
// polled is written to the store, and the alerts queued are delivered
// for a few seconds at most. It returns nil after ctx ends, or the error
// that stopped the monitor: a store that can no longer be written
// (full, read-only, damaged).
func (s *Poller) Run(ctx context.Context) error {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.sessMu.Lock()
	s.runCtx = runCtx
	s.sessMu.Unlock()

	var wg sync.WaitGroup
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		if err := s.w.run(runCtx); err != nil {
			cancel(err)
		}
	}()
	wg.Add(2)
	go func() { defer wg.Done(); s.schedule(runCtx) }()
	go func() { defer wg.Done(); s.maintain(runCtx) }()
	<-runCtx.Done()
	wg.Wait()
	s.runWG.Wait() // the scan runs have emitted their last results
	s.closeSessions()
	<-writerDone
	err := context.Cause(runCtx)
	var flushErr error
	if !fatal(err) {
		flushErr = s.w.flush(context.Background())
	}
	actx, acancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer acancel()
	s.alerter.Close(actx)
	s.closeSubscribers()
	if errors.Is(err, ctx.Err()) && ctx.Err() != nil {
		err = nil // stopped as asked
	}
	return errors.Join(err, flushErr)
}

// Reload applies a new config, as [monitor.Loader.Reload] returned it with
// its changes: servers added start being polled (with their grace),
// servers removed stop (their history stays, their sessions end), servers
// changed keep their state unless their address or protocol changed.
func (s *Poller) Reload(ctx context.Context, cfg *monitor.Config, ch monitor.Changes) error {
	// What waits for the store goes first: the sessions a removed server
	// had open are ended after its last sample.
	if err := s.w.flush(ctx); err != nil && fatal(err) {
		return err
	}
	if err := s.st.SyncServers(ctx, storeServers(cfg)); err != nil {
		return err
	}
	now := time.Now()
	s.mu.Lock()
	for _, name := range ch.Removed {
		if r := s.runs[name]; r != nil {
			delete(s.runs, name)
			delete(s.byID, r.id)
			s.queue.remove(r)
		}
	}
	changed := make(map[string]monitor.ServerChange, len(ch.Changed))
	for _, c := range ch.Changed {
		changed[c.Name] = c
	}
	for i := range cfg.Servers {
		srv := &cfg.Servers[i]
		r := s.runs[srv.Name]
		if r == nil {
			s.addRun(cfg, srv, now)
			continue
		}
		c, ok := changed[srv.Name]
		if ok && c.Retargeted() {
			delete(s.byID, r.id)
			s.queue.remove(r)
			delete(s.runs, srv.Name)
			s.addRun(cfg, srv, now)
			continue
		}
		old := r.srv.Interval
		r.srv = *srv
		r.tracker.Reconfigure(srv, cfg.Policy(srv))
		st := r.tracker.State()
		st.Uptime24h, st.RecentPolls = r.uptime, r.recent
		r.state = &st
		if srv.Interval != old && s.opts.Shard != nil {
			r.next = s.firstTurn(r, now) // the slots moved
			s.queue.fix(r)
		} else if srv.Interval < old {
			if at := now.Add(s.jitter(srv.Interval)); at.Before(r.next) {
				r.next = at
				s.queue.fix(r)
			}
		}
	}
	s.cfg = cfg
	s.resort()
	s.mu.Unlock()
	s.opts.Maintenance.SetConfig(cfg.Maintenance)
	s.alerter.Reload(cfg)
	s.publish(monitor.Event{Kind: monitor.EventConfig, Time: now})
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// resort rebuilds the list sorted by name. s.mu is held.
func (s *Poller) resort() {
	s.sorted = s.sorted[:0]
	for _, r := range s.runs {
		s.sorted = append(s.sorted, r)
	}
	slices.SortFunc(s.sorted, func(a, b *serverRun) int { return strings.Compare(a.srv.Name, b.srv.Name) })
}

// Servers returns every server's state, sorted by name.
func (s *Poller) Servers() []monitor.ServerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]monitor.ServerState, len(s.sorted))
	for i, r := range s.sorted {
		out[i] = *r.state
	}
	return out
}

// Server returns the named server's state.
func (s *Poller) Server(name string) (monitor.ServerState, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.runs[name]
	if r == nil {
		return monitor.ServerState{}, false
	}
	return *r.state, true
}

// subscriber is one reader of the events.
type subscriber struct {
	ch chan monitor.Event
}

// Subscribe returns the events from now on, until ctx is done: each
// event once, in order, numbered without gaps (Event.Seq). A reader that
// falls Options.SubscriberBuffer events behind is cut off: the channel is closed
// early, and the reader subscribes again and reloads the state it
// missed.
func (s *Poller) Subscribe(ctx context.Context) <-chan monitor.Event {
	sub := &subscriber{ch: make(chan monitor.Event, s.opts.SubscriberBuffer)}
	s.mu.Lock()
	if s.subs == nil { // closed
		s.mu.Unlock()
		close(sub.ch)
		return sub.ch
	}
	s.subs[sub] = struct{}{}
	s.mu.Unlock()
	go func() {
		<-ctx.Done()
		s.mu.Lock()
		if _, ok := s.subs[sub]; ok {
			delete(s.subs, sub)
			close(sub.ch)
		}
		s.mu.Unlock()
	}()
	return sub.ch
}

// publish numbers the events and hands them to the subscribers, cutting
// off those that fell too far behind, and to the alerter. It never waits
// for a subscriber.
func (s *Poller) publish(evs ...monitor.Event) {
	s.mu.Lock()
	for i := range evs {
		s.seq++
		evs[i].Seq = s.seq
		for sub := range s.subs {
			select {
			case sub.ch <- evs[i]:
			default:
				delete(s.subs, sub)
				close(sub.ch)
				s.cut++
				s.log.Printf("cut", "monitor: an event reader fell %d events behind and was cut off; it subscribes again and reloads", s.opts.SubscriberBuffer)
			}
		}
	}
	s.mu.Unlock()
	for _, ev := range evs {
		if ev, ok := s.alertView(ev); ok {
			s.alerter.Handle(ev)
		}
	}
}

// SubscribersDropped counts the subscribers cut off for falling behind.
func (s *Poller) SubscribersDropped() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cut
}

func (s *Poller) closeSubscribers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		close(sub.ch)
	}
	s.subs = nil
}

// AlertStats counts the alerts of each webhook.
func (s *Poller) AlertStats() []monitor.WebhookStats { return s.alerter.Stats() }

// Probe queries target once with the protocol called name (an unknown
// name is an error listing the known ones), within ctx, on the poller's
// sockets: the /probe of package web.
func (s *Poller) Probe(ctx context.Context, target, name string) (monitor.ServerState, error) {
	p, err := protocol.Lookup(name)
	if err != nil {
		return monitor.ServerState{}, fmt.Errorf("monitor: probe: %w", err)
	}
	t := scan.ParseTarget(0, target, p.DefaultPort)
	if t.Err != nil {
		return monitor.ServerState{}, fmt.Errorf("monitor: probe %s: %w", target, t.Err)
	}
	ss, err := s.session(p.Name)
	if err != nil {
		return monitor.ServerState{}, err
	}
	start := time.Now()
	var res *scan.Outcome
	_, err = ss.Run(ctx, slices.Values([]scan.Target{t}), func(r *scan.Outcome) { res = r })
	if res == nil {
		if err == nil {
			err = errors.New("monitor: probe: no result")
		}
		return monitor.ServerState{}, err
	}
	st := monitor.ServerState{Name: target, Target: target, Protocol: p.Name, LastPoll: time.Now(), QueryDuration: time.Since(start)}
	st.Status = monitor.StatusDown
	if rr := res.Result; rr.Err == nil {
		st.Status, st.Summary, st.Ping, st.LastSuccess = monitor.StatusUp, rr.Summary, rr.Ping, st.LastPoll
	} else {
		st.LastError = rr.Err
	}
	return st, nil
}
