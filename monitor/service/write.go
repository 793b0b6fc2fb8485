package service

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/gsq-project/gsq/store"
)

// writer hands the polls' samples to the store, at most one write every
// WriteEvery (a second by default): a write holds every sample that
// waited for it, a few hundred for a monitor of 10,000 servers, so that
// the store's cost per transaction is paid once for them all. A kill -9
// loses at most the samples of the last WriteEvery and of the write in
// flight, with the polls in flight.
type writer struct {
	s       *Service
	mu      sync.Mutex
	pending []store.Sample
	dropped int
	ready   chan struct{} // a token: samples wait
}

func (w *writer) init(s *Service) {
	w.s = s
	w.ready = make(chan struct{}, 1)
}

// add queues a sample.
func (w *writer) add(smp store.Sample) {
	w.mu.Lock()
	if len(w.pending) >= maxPending {
		w.pending = w.pending[1:]
		w.dropped++
	}
	w.pending = append(w.pending, smp)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

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
	for _, kind := range []error{store.ErrFull, store.ErrReadOnly, store.ErrCorrupt, store.ErrForeign, store.ErrNewerSchema, store.ErrClosed} {
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
	if err != nil {
		w.mu.Lock()
		w.pending = append(batch, w.pending...)
		if n := len(w.pending) - maxPending; n > 0 {
			w.pending = w.pending[n:]
			w.dropped += n
		}
		w.mu.Unlock()
	}
	return err
}

// maintain rolls the history up and applies retention every
// MaintainEvery, and refreshes the servers' 24-hour uptime every
// UptimeEvery, until ctx ends.
func (s *Service) maintain(ctx context.Context) {
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
			if err := s.st.Maintain(ctx, s.opts.Now()); err != nil && ctx.Err() == nil {
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
func (s *Service) refreshUptime(ctx context.Context) {
	now := s.opts.Now()
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
		if r == nil || u.Polls == 0 {
			continue
		}
		st := *r.state
		f := u.Fraction
		st.Uptime24h = &f
		r.state = &st
	}
}
