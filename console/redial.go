package console

import (
	"context"
	"sync"
	"time"
)

// Reconnection backoff defaults: attempts start at most once per backoff
// interval, which starts at DefaultMinBackoff and doubles after every
// attempt up to DefaultMaxBackoff. Servers ban addresses that retry fast
// (SRCDS after repeated failed logins, Conan Exiles after too many
// requests).
const (
	DefaultMinBackoff = time.Second
	DefaultMaxBackoff = 30 * time.Second
)

// Redialer keeps a session connected, as [Session] promises: once the
// session reports its connection lost, it dials again and logs in, in the
// background, whatever the callers are doing, with a backoff between
// attempts, until an attempt succeeds, one fails for good (a refused
// password, which retrying could turn into a lockout) or the Redialer is
// closed. A caller that needs the connection waits for an attempt with
// Await. Set the fields before first use; it is safe for concurrent use.
type Redialer struct {
	// Dial opens a connection, logs in and puts the connection in place
	// of the lost one, or returns why not. Its context ends when the
	// Redialer is closed; Dial bounds its own waits.
	Dial func(ctx context.Context) error
	// Final, if set, reports whether an attempt's error ends the
	// attempts until the next Lost.
	Final func(err error) bool
	// OnAttempt, if set, is called after each attempt with its number
	// since the connection was lost (from 1) and its error (nil once
	// connected), before callers waiting in Await learn the outcome.
	OnAttempt func(attempt int, err error)
	// MinBackoff and MaxBackoff bound the pause between attempts; zero
	// means DefaultMinBackoff and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration

	mu      sync.Mutex
	inited  bool
	ctx     context.Context // ends at Close
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	running bool          // the attempts' goroutine runs
	dialing bool          // an attempt is under way
	closed  bool          // Close was called
	next    *outcome      // of the next attempt to end
	err     error         // the last attempt's
	attempt int           // attempts since the connection was lost
	backoff time.Duration // the pause after the last attempt's start
	last    time.Time     // when the last attempt (or Started) began
}

func (r *Redialer) initLocked() {
	if !r.inited {
		r.inited = true
		r.ctx, r.cancel = context.WithCancel(context.Background())
		r.next = &outcome{done: make(chan struct{})}
		r.backoff = r.min()
	}
}

func (r *Redialer) min() time.Duration {
	if r.MinBackoff > 0 {
		return r.MinBackoff
	}
	return DefaultMinBackoff
}

func (r *Redialer) max() time.Duration {
	if r.MaxBackoff > 0 {
		return r.MaxBackoff
	}
	return DefaultMaxBackoff
}

// Started records a connection made at time at by other means (the
// session's first): the backoff counts from it.
func (r *Redialer) Started(at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.initLocked()
	r.last = at
}

// Lost reports the connection lost and starts the attempts in the
// background, unless they run. worked says that the lost connection
// served (answered a command, or lived longer than the longest backoff):
// it is then replaced at once, without the backoff of the attempts that
// made it; a server that closes every connection as soon as it is made
// gets ever longer pauses instead.
func (r *Redialer) Lost(worked bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.initLocked()
	if r.closed {
		return
	}
	if worked && !r.running {
		r.backoff, r.last = r.min(), time.Time{}
	}
	if !r.running {
		r.running, r.attempt = true, 0
		r.wg.Add(1)
		go r.run()
	}
}

// run makes attempts until one succeeds, one fails for good, or Close.
func (r *Redialer) run() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		wait := time.Until(r.last.Add(r.backoff))
		r.mu.Unlock()
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-r.ctx.Done():
				t.Stop()
			}
		}
		r.mu.Lock()
		if r.closed {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.last, r.dialing = time.Now(), true
		r.backoff = min(2*r.backoff, r.max())
		r.mu.Unlock()

		err := r.Dial(r.ctx)

		r.mu.Lock()
		r.attempt++
		n, closed := r.attempt, r.closed
		r.mu.Unlock()
		if r.OnAttempt != nil && !closed {
			r.OnAttempt(n, err)
		}
		r.mu.Lock()
		r.dialing, r.err = false, err
		r.next.err = err
		close(r.next.done)
		r.next = &outcome{done: make(chan struct{})}
		stop := err == nil || r.closed || r.Final != nil && r.Final(err)
		if stop {
			r.running = false
		}
		r.mu.Unlock()
		if stop {
			return
		}
	}
}

// Await waits for the end of the next attempt (or of the one under way)
// and returns its error, nil once connected, with ended set. When ctx
// ends, the deadline dl passes, no attempt can start before dl, no
// attempt runs, or the Redialer is closed, it returns with ended false
// and the last attempt's error, if there was one.
func (r *Redialer) Await(ctx context.Context, dl time.Time) (ended bool, err error) {
	r.mu.Lock()
	r.initLocked()
	o, last := r.next, r.err
	idle := !r.running || r.closed || !r.dialing && r.last.Add(r.backoff).After(dl)
	r.mu.Unlock()
	if idle {
		return false, last
	}
	t := time.NewTimer(time.Until(dl))
	defer t.Stop()
	select {
	case <-o.done:
		return true, o.err
	case <-ctx.Done():
	case <-t.C:
	case <-r.ctx.Done():
	}
	return false, last
}

// outcome is the end of an attempt: done is closed once err is set.
type outcome struct {
	done chan struct{}
	err  error
}

// Close stops the attempts and waits for the one under way, whose
// context it cancels.
func (r *Redialer) Close() {
	r.mu.Lock()
	r.initLocked()
	r.closed = true
	r.cancel()
	r.mu.Unlock()
	r.wg.Wait()
}
