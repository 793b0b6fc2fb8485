package poller

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// writer hands the polls' samples to the store, at most one write every
// WriteEvery (a second by default): a write holds every sample that
// waited for it, a few hundred for a monitor of 10,000 servers, so that
// the store's cost per transaction is paid once for them all. A kill -9
// loses at most the samples of the last WriteEvery and of the write in
// flight, with the polls in flight.
type writer struct {
	s       *Poller
	mu      sync.Mutex
	pending []store.Sample
	dropped int           // since the last log line
	total   atomic.Uint64 // ever: SamplesDropped
	fenced  atomic.Uint64 // ever: SamplesFenced
	ready   chan struct{} // a token: samples wait
}

func (w *writer) init(s *Poller) {
	w.s = s
	w.ready = make(chan struct{}, 1)
}

// add queues a sample.
func (w *writer) add(smp store.Sample) {
	w.mu.Lock()
	if len(w.pending) >= w.s.opts.SampleBuffer {
		w.pending = w.pending[1:]
		w.dropped++
		w.total.Add(1)
	}
	w.pending = append(w.pending, smp)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// SamplesDropped counts the samples dropped, oldest first, because the
// store could not take them (PostgreSQL unreachable, say) while the
// bounded queue of samples waiting for it was full.
func (s *Poller) SamplesDropped() uint64 { return s.w.total.Load() }

// run writes until ctx ends. It returns the error of a store that can no
// longer be written (full, read-only, damaged, closed); other errors (a
// PostgreSQL server restarting, say) are logged and the samples tried
// again.
func (w *writer) run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-w.ready:
		}
		next := time.Now().Add(w.s.opts.WriteEvery)
		err := w.flush(ctx)
		if d := time.Until(next); err == nil && d > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(d):
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // Run flushes once more
			}
			if fatal(err) {
				return err
			}
			w.s.log.Printf("write", "monitor: %v (the samples are kept and written again)", err)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Second):
			}
			select {
			case w.ready <- struct{}{}:
			default:
			}
		}
	}
}

// fatal reports whether a store error stops the monitor.
func fatal(err error) bool {
	for _, kind := range []error{store.ErrFull, store.ErrReplaced, store.ErrReadOnly, store.ErrCorrupt, store.ErrForeign, store.ErrNewerSchema, store.ErrClosed} {
		if errors.Is(err, kind) {
			return true
		}
	}
	return false
}

// flush writes what waits. On failure the samples go back to the head of
// the queue.
func (w *writer) flush(ctx context.Context) error {
	w.mu.Lock()
	batch := w.pending
	w.pending = nil
	if w.dropped > 0 {
		w.s.log.Printf("drop", "monitor: the store fell behind: %d samples dropped", w.dropped)
		w.dropped = 0
	}
	w.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := w.s.st.Write(ctx, batch)
	for range maxFencedTries {
		var fe *store.FencedError
		if !errors.As(err, &fe) {
			break
		}
		batch = w.dropFenced(batch, fe)
		if len(batch) == 0 {
			return nil
		}
		err = w.s.st.Write(ctx, batch)
	}
	if err != nil {
		w.mu.Lock()
		w.pending = append(batch, w.pending...)
		if n := len(w.pending) - w.s.opts.SampleBuffer; n > 0 {
			w.pending = w.pending[n:]
			w.dropped += n
			w.total.Add(uint64(n))
		}
		w.mu.Unlock()
	}
	return err
}

// maxFencedTries bounds the writes of one flush that the store refuses
// as fenced: each drops the samples of the shards it names, so a few
// suffice unless shards change hands again and again meanwhile.
const maxFencedTries = 4

// dropFenced removes from batch the samples the store refused, those
// polled under stale leases after another worker took their shards,
// counts them, and tells the fleet, which drops those shards: a worker
// that lost a shard (paused past its lease, say) writes nothing for it as
// its owner, and what it polled before is kept.
func (w *writer) dropFenced(batch []store.Sample, fe *store.FencedError) []store.Sample {
	stale := fe.Stale
	kept := batch[:0]
	n := 0
	for i := range batch {
		if fe.Refuses(&batch[i]) {
			n++
			continue
		}
		kept = append(kept, batch[i])
	}
	w.fenced.Add(uint64(n))
	w.s.log.Printf("fenced", "monitor: %s of %s that another worker took over dropped",
		monitor.Plural(n, "sample", "samples"), monitor.Plural(len(stale), "shard", "shards"))
	if w.s.opts.Shard != nil {
		for _, f := range stale {
			w.s.opts.Shard.Fenced(f)
		}
	}
	return kept
}

// SamplesFenced counts the samples dropped because their shard's lease
// had passed to another worker when they were written.
func (s *Poller) SamplesFenced() uint64 { return s.w.fenced.Load() }

// maintain rolls the history up and applies retention every
// MaintainEvery, and refreshes the servers' 24-hour uptime every
// UptimeEvery, until ctx ends.
func (s *Poller) maintain(ctx context.Context) {
	m := time.NewTicker(s.opts.MaintainEvery)
	defer m.Stop()
	// The first uptimes soon after the start, with some polls in them.
	u := time.NewTicker(min(s.opts.UptimeEvery, 10*time.Second))
	defer u.Stop()
	first := true
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.C:
			if !s.maintains() {
				continue
			}
			if err := s.st.Maintain(ctx, time.Now()); err != nil && ctx.Err() == nil {
				s.log.Printf("maintain", "monitor: %v", err)
			}
		case <-u.C:
			s.refreshUptime(ctx)
			if first {
				first = false
				u.Reset(s.opts.UptimeEvery)
			}
		}
	}
}

// refreshUptime reads every server's uptime over the last 24 hours into
// its live state, so that listing servers reads no database.
func (s *Poller) refreshUptime(ctx context.Context) {
	now := time.Now()
	up, err := s.st.UptimeAll(ctx, now.Add(-24*time.Hour), now)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Printf("uptime", "monitor: %v", err)
		}
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, u := range up {
		r := s.runs[name]
		if r == nil {
			continue
		}
		r.counted = true
		r.polls, r.upPolls = int64(u.Polls), int64(math.Round(u.Fraction*float64(u.Polls)))
		if u.Polls == 0 {
			continue
		}
		f := u.Fraction
		r.uptime = &f
		st := *r.state
		st.Uptime24h = r.uptime
		r.state = &st
	}
}

// sample is what the history keeps of a poll: the figures of the state
// it made, its player list (for the scores), and the joins and leaves of
// its events, which open and end the sessions.
func sample(st *monitor.ServerState, evs []monitor.Event) store.Sample {
	smp := store.Sample{Server: st.Name, Time: st.LastPoll, Up: st.LastError == nil}
	if smp.Up {
		sum := &st.Summary
		smp.Players, smp.MaxPlayers, smp.Bots = intOr(sum.Players), intOr(sum.MaxPlayers), intOr(sum.Bots)
		smp.Map, smp.Version, smp.Name = strOr(sum.Map), strOr(sum.Version), strOr(sum.Name)
		smp.Ping = st.Ping
	}
	if st.Players != nil && st.ListedAt.Equal(st.LastPoll) {
		smp.PlayerList = make([]store.PlayerSeen, len(st.Players))
		for i, p := range st.Players {
			smp.PlayerList[i] = store.PlayerSeen{Name: p.Name, Score: p.Score}
		}
	}
	for _, ev := range evs {
		switch ev.Kind {
		case monitor.EventJoin, monitor.EventLeave:
			smp.Sessions = append(smp.Sessions, store.SessionChange{Player: ev.Detail, Left: ev.Kind == monitor.EventLeave, Time: ev.Time})
		case monitor.EventDown:
			smp.Outage = outage(st)
		case monitor.EventUp:
			smp.Recovered = true
		}
	}
	return smp
}

// intOr is *p, or -1 (not reported) when p is nil.
func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// strOr is *p, or "" (not reported) when p is nil.
func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// outage is the incident a server that went down opens: from the first
// of the failed polls that took it down, for the reason the last one
// failed.
func outage(st *monitor.ServerState) *store.Outage {
	o := &store.Outage{Since: st.FailingSince, Cause: "error"}
	if o.Since.IsZero() {
		o.Since = st.LastPoll
	}
	if e := st.LastError; e != nil {
		o.Cause, o.Detail = string(e.Kind), e.Message
	}
	return o
}
