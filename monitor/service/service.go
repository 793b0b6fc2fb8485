// Package service runs `gsq monitor`: it polls every configured server
// with the scan engine, on one [scan.Session] per protocol shared by all
// servers (so each server's challenge is kept from one poll to the next),
// each server on its own schedule with jitter; it decides each server's
// health with [monitor.Health], writes every poll to a [store.Store]
// (samples, and the player lists that make sessions), raises alerts
// through a [monitor.Alerter], and keeps the live state that package web
// serves: [Service] implements web.Live, and a scrape or a page view reads
// that state, never a game server.
//
// The A2S queries are Valve's server queries
// (https://developer.valvesoftware.com/wiki/Server_queries); OGP is the
// Open Game Protocol v0.91.
package service

import (
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
	// subscriberBuffer is how many events a subscriber may fall behind
	// before the service drops events for it.
	subscriberBuffer = 1024
	// maxPending bounds the samples waiting for the store while it fails:
	// past it, the oldest are dropped (with a log line).
	maxPending = 1 << 20
)

// Options configure a Service. Store is required; the rest may be zero.
type Options struct {
	// Store keeps the history. The Service writes to it; the caller opens
	// it before and closes it after [Service.Run].
	Store store.Store
	// Scanner is the template of the scan sessions: timeouts, retries,
	// deadline, rate. Its Protocol is set per protocol; a zero
	// HostInterval means DefaultHostInterval (negative: none), a zero
	// Concurrency DefaultConcurrency.
	Scanner scan.Scanner
	// Alerter tunes the delivery of alerts (the webhooks' HTTP client,
	// retries).
	Alerter monitor.AlerterOptions
	// Now is the clock that times polls (default time.Now).
	Now func() time.Time
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
}

// Service is a running monitor. Create it with [New], start it with
// [Service.Run]; it is safe for concurrent use.
type Service struct {
	opts    Options
	st      store.Store
	alerter *monitor.Alerter
	log     *ratelog.Limiter
	rng     *rand.Rand // jitter; guarded by mu

	mu     sync.Mutex
	cfg    *monitor.Config
	runs   map[string]*serverRun // by name
	byID   map[int]*serverRun    // by poll generation (scan.Target.Line)
	sorted []*serverRun          // by name
	queue  pollQueue
	nextID int
	subs   map[*subscriber]struct{}

	wake chan struct{} // nudges the scheduler after a reload

	sessMu   sync.Mutex
	sessions map[string]*scan.Session // by protocol, opened on first use
	feeds    map[string]chan scan.Target
	runCtx   context.Context // the context of Run, for the feeds
	runWG    sync.WaitGroup

	w writer
}

// New returns a service for cfg's servers. It records them in the store
// (the history of servers no longer configured stays) and starts nothing
// until [Service.Run].
func New(ctx context.Context, cfg *monitor.Config, opts Options) (*Service, error) {
	if opts.Store == nil {
		return nil, errors.New("monitor: service: no store")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	switch {
	case opts.WriteEvery == 0:
		opts.WriteEvery = DefaultWriteEvery
	case opts.WriteEvery < 0:
		opts.WriteEvery = 0
	}
	if opts.MaintainEvery <= 0 {
		opts.MaintainEvery = DefaultMaintainEvery
	}
	if opts.UptimeEvery <= 0 {
		opts.UptimeEvery = DefaultUptimeEvery
	}
	if opts.Scanner.Concurrency <= 0 {
		opts.Scanner.Concurrency = DefaultConcurrency
	}
	switch {
	case opts.Scanner.HostInterval == 0:
		opts.Scanner.HostInterval = DefaultHostInterval
	case opts.Scanner.HostInterval < 0:
		opts.Scanner.HostInterval = 0
	}
	s := &Service{
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
	now := opts.Now()
	for i := range cfg.Servers {
		s.addRun(cfg, &cfg.Servers[i], now)
	}
	s.resort()
	s.alerter = monitor.NewAlerter(cfg, opts.Alerter)
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
func (s *Service) Config() *monitor.Config {
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
func (s *Service) Run(ctx context.Context) error {
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
// servers removed stop (their history stays), servers changed keep their
// state unless their address or protocol changed.
func (s *Service) Reload(ctx context.Context, cfg *monitor.Config, ch monitor.Changes) error {
	if err := s.st.SyncServers(ctx, storeServers(cfg)); err != nil {
		return err
	}
	now := s.opts.Now()
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
		r.health.SetPolicy(cfg.HealthPolicy(srv))
		st := *r.state
		st.Labels, st.Interval = srv.Labels, srv.Interval
		if !r.wantsPlayers() {
			st.Players = nil
			r.present = nil
		}
		r.state = &st
		if srv.Interval < old {
			if at := time.Now().Add(s.jitter(srv.Interval)); at.Before(r.next) {
				r.next = at
				s.queue.fix(r)
			}
		}
	}
	s.cfg = cfg
	s.resort()
	s.mu.Unlock()
	s.alerter.Reload(cfg)
	s.publish(monitor.Event{Kind: monitor.EventConfig, Time: now}, false)
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// resort rebuilds the list sorted by name. s.mu is held.
func (s *Service) resort() {
	s.sorted = s.sorted[:0]
	for _, r := range s.runs {
		s.sorted = append(s.sorted, r)
	}
	slices.SortFunc(s.sorted, func(a, b *serverRun) int { return strings.Compare(a.srv.Name, b.srv.Name) })
}

// Servers returns every server's state, sorted by name.
func (s *Service) Servers() []monitor.ServerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]monitor.ServerState, len(s.sorted))
	for i, r := range s.sorted {
		out[i] = *r.state
	}
	return out
}

// Server returns the named server's state.
func (s *Service) Server(name string) (monitor.ServerState, bool) {
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
	ch      chan monitor.Event
	dropped uint64
}

// Subscribe returns the events from now on, until ctx is done. A reader
// that falls more than about a thousand events behind misses events.
func (s *Service) Subscribe(ctx context.Context) <-chan monitor.Event {
	sub := &subscriber{ch: make(chan monitor.Event, subscriberBuffer)}
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

// publish hands ev to the subscribers, and to the alerter when alert is
// set. It never waits for a subscriber.
func (s *Service) publish(ev monitor.Event, alert bool) {
	s.mu.Lock()
	for sub := range s.subs {
		select {
		case sub.ch <- ev:
		default:
			sub.dropped++
		}
	}
	s.mu.Unlock()
	if alert {
		s.alerter.Handle(ev)
	}
}

func (s *Service) closeSubscribers() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sub := range s.subs {
		close(sub.ch)
	}
	s.subs = nil
}

// AlertStats counts the alerts of each webhook.
func (s *Service) AlertStats() []monitor.WebhookStats { return s.alerter.Stats() }

// Probe queries target once with protocol, within ctx, on the service's
// sockets: the /probe of package web.
func (s *Service) Probe(ctx context.Context, target, protocol string) (monitor.ServerState, error) {
	var port uint16
	switch protocol {
	case monitor.ProtocolA2S:
		port = 27015
	case monitor.ProtocolOGP:
	default:
		return monitor.ServerState{}, fmt.Errorf("monitor: probe: unknown protocol %q (want a2s or ogp)", protocol)
	}
	t := scan.ParseTarget(0, target, port)
	if t.Err != nil {
		return monitor.ServerState{}, fmt.Errorf("monitor: probe %s: %w", target, t.Err)
	}
	ss, err := s.session(protocol)
	if err != nil {
		return monitor.ServerState{}, err
	}
	start := time.Now()
	var res *scan.Result
	_, err = ss.Run(ctx, slices.Values([]scan.Target{t}), func(r *scan.Result) { res = r })
	if res == nil {
		if err == nil {
			err = errors.New("monitor: probe: no result")
		}
		return monitor.ServerState{}, err
	}
	st := monitor.ServerState{Name: target, Target: target, Protocol: protocol, LastPoll: time.Now(), QueryDuration: time.Since(start)}
	st.Status = monitor.StatusDown
	if rr := res.Result; rr.Err == nil {
		st.Status, st.Summary, st.Ping, st.LastSuccess = monitor.StatusUp, rr.Summary, rr.Ping, st.LastPoll
	} else {
		st.LastError = rr.Err
	}
	return st, nil
}
