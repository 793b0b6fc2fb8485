package web

import (
	"context"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/store"
)

// testLive is a live-state source for the tests: states the test sets,
// events the test publishes, and a probe function of the test's.
type testLive struct {
	mu         sync.Mutex
	states     []monitor.ServerState // sorted by name
	subs       map[*testSub]struct{}
	subscribed chan struct{} // gets a value on each Subscribe
	probeFn    func(ctx context.Context, target, protocol string) (monitor.ServerState, error)
	probes     atomic.Int64
	reads      atomic.Int64
	cut        atomic.Uint64          // SubscribersDropped's answer
	alerts     []monitor.WebhookStats // AlertStats's answer
}

type testSub struct {
	mu     sync.Mutex
	ctx    context.Context
	ch     chan monitor.Event
	closed bool
}

func newTestLive(states ...monitor.ServerState) *testLive {
	l := &testLive{subs: map[*testSub]struct{}{}, subscribed: make(chan struct{}, 100)}
	for _, s := range states {
		l.set(s)
	}
	return l
}

func (l *testLive) set(s monitor.ServerState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i, found := slices.BinarySearchFunc(l.states, s.Name, func(a monitor.ServerState, name string) int { return strings.Compare(a.Name, name) })
	if found {
		l.states[i] = s
	} else {
		l.states = slices.Insert(l.states, i, s)
	}
}

func (l *testLive) Servers() []monitor.ServerState {
	l.reads.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.states)
}

func (l *testLive) Server(name string) (monitor.ServerState, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.states {
		if s.Name == name {
			return s, true
		}
	}
	return monitor.ServerState{}, false
}

func (l *testLive) Subscribe(ctx context.Context) <-chan monitor.Event {
	sub := &testSub{ctx: ctx, ch: make(chan monitor.Event, 16)}
	l.mu.Lock()
	l.subs[sub] = struct{}{}
	l.mu.Unlock()
	go func() {
		<-ctx.Done()
		l.mu.Lock()
		delete(l.subs, sub)
		l.mu.Unlock()
		sub.mu.Lock()
		if !sub.closed {
			sub.closed = true
			close(sub.ch)
		}
		sub.mu.Unlock()
	}()
	l.subscribed <- struct{}{}
	return sub.ch
}

// publish hands ev to every subscriber, waiting until each takes it: a
// hub that blocked would block the test.
func (l *testLive) publish(ev monitor.Event) {
	l.mu.Lock()
	subs := make([]*testSub, 0, len(l.subs))
	for s := range l.subs {
		subs = append(subs, s)
	}
	l.mu.Unlock()
	for _, s := range subs {
		s.mu.Lock()
		if !s.closed {
			select {
			case s.ch <- ev:
			case <-s.ctx.Done():
			}
		}
		s.mu.Unlock()
	}
}

func (l *testLive) SubscribersDropped() uint64 { return l.cut.Load() }

// cutAll closes every subscription early, as the monitor cuts off a
// subscriber that fell behind.
func (l *testLive) cutAll() {
	l.mu.Lock()
	subs := l.subs
	l.subs = map[*testSub]struct{}{}
	l.mu.Unlock()
	for s := range subs {
		s.mu.Lock()
		if !s.closed {
			s.closed = true
			close(s.ch)
			l.cut.Add(1)
		}
		s.mu.Unlock()
	}
}

func (l *testLive) AlertStats() []monitor.WebhookStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.alerts)
}

func (l *testLive) Probe(ctx context.Context, target, protocol string) (monitor.ServerState, error) {
	l.probes.Add(1)
	if l.probeFn == nil {
		return monitor.ServerState{}, io.ErrUnexpectedEOF
	}
	return l.probeFn(ctx, target, protocol)
}

func ptr[T any](v T) *T { return &v }

// upState is a server that answered its last poll.
func upState(name string, players, maxPlayers int, mapName string) monitor.ServerState {
	now := time.Now()
	return monitor.ServerState{
		Name: name, Target: "127.0.0.1:27015", Protocol: "a2s",
		Status: monitor.StatusUp, Since: now.Add(-time.Hour),
		LastPoll: now, LastSuccess: now, Ping: 23 * time.Millisecond, QueryDuration: 24 * time.Millisecond,
		Summary: result.Summary{
			Name: ptr(name + " | public"), Map: ptr(mapName), Game: ptr("Counter-Strike 2"),
			Players: ptr(players), MaxPlayers: ptr(maxPlayers), Bots: ptr(0), Version: ptr("1.40.2.1"),
		},
		Queries:   map[string]uint64{"ok": 100},
		Uptime24h: ptr(0.995),
	}
}

// downState is a server whose last polls failed and that the monitor
// declared down.
func downState(name string) monitor.ServerState {
	now := time.Now()
	s := upState(name, 3, 16, "de_nuke")
	s.Status = monitor.StatusDown
	s.Since = now.Add(-5 * time.Minute)
	s.LastSuccess = now.Add(-6 * time.Minute)
	s.ConsecutiveFailures = 7
	s.QueryDuration = 2 * time.Second
	s.LastError = &result.Error{Kind: result.KindTimeout, Message: "no answer"}
	s.Queries = map[string]uint64{"ok": 90, "timeout": 7}
	return s
}

// newTestServer starts the handler on a loopback HTTP server.
func newTestServer(t *testing.T, st store.Store, live Live, opts Options) (*httptest.Server, *Handler) {
	t.Helper()
	h := New(st, live, opts)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}
