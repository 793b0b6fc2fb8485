package console

import (
	"context"
	"net"
	"sync"
	"time"
)

// Link is a session's connection across reconnections, for a session
// whose callers wait for the connection rather than for an attempt: the
// current one (the zero C while there is none), a wake-up for whoever
// waits for one, and the error that ends the session for good (a refused
// password, a loss with reconnection turned off). A lost connection is
// replaced by a [Redialer] of its own, with its backoff.
//
// Set the exported fields before first use; the methods are safe for
// concurrent use.
type Link[C comparable] struct {
	// Connect opens and logs in a connection; Install makes it current
	// (with Set) and starts its goroutines; Final tells the errors that
	// end the session; OnAttempt, if set, hears of each attempt (from 1)
	// and its error. With NoReconnect, Drop ends the link instead.
	Connect     func(ctx context.Context) (C, error)
	Install     func(C)
	Final       func(error) bool
	OnAttempt   func(attempt int, err error)
	NoReconnect bool

	mu     sync.Mutex
	cur    C
	ready  chan struct{} // closed when cur is set, or final, or closed
	final  error
	closed bool
	since  time.Time // when cur was set
	redial *Redialer // made by the first Drop
}

func (l *Link[C]) readyLocked() chan struct{} {
	if l.ready == nil {
		l.ready = make(chan struct{})
	}
	return l.ready
}

// Set makes c the current connection; it reports false, and sets
// nothing, once the link is closed.
func (l *Link[C]) Set(c C) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return false
	}
	since := time.Now()
	l.cur, l.since = c, since
	close(l.readyLocked())
	r := l.redial
	l.mu.Unlock()
	if r != nil { // outside l.mu: the Redialer calls End holding its own lock
		r.Started(since)
	}
	return true
}

// lost clears c if it is the current connection, and reports whether it
// was and the link is still open (so the caller should connect again).
func (l *Link[C]) lost(c C) bool {
	var zero C
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur != c || c == zero {
		return false
	}
	l.cur = zero
	l.ready = make(chan struct{})
	return !l.closed
}

// End ends the link for good with err: Current returns it from now on.
func (l *Link[C]) End(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var zero C
	if l.final == nil && !l.closed {
		l.final = err
		if l.cur == zero {
			close(l.readyLocked())
		}
	}
}

// Close closes the link, stops its reconnection (waiting for an attempt
// under way, whose context it cancels) and returns the connection it
// had, if any. It reports false when the link was closed already.
func (l *Link[C]) Close() (C, bool) {
	var zero C
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return zero, false
	}
	l.closed = true
	if l.cur == zero && l.final == nil { // else ready is closed already
		close(l.readyLocked())
	}
	cur, r := l.cur, l.redial
	l.mu.Unlock()
	if r != nil {
		r.Close()
	}
	return cur, true
}

// Closed reports whether Close was called.
func (l *Link[C]) Closed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// Current returns the current connection, waiting for one while the
// session connects again. It returns closed once the link is closed, the
// final error once it ended, and ctx's error when ctx ends first.
func (l *Link[C]) Current(ctx context.Context, closed error) (C, error) {
	var zero C
	for {
		l.mu.Lock()
		cur, ready, final, isClosed := l.cur, l.readyLocked(), l.final, l.closed
		l.mu.Unlock()
		switch {
		case isClosed:
			return zero, closed
		case cur != zero:
			return cur, nil
		case final != nil:
			return zero, final
		}
		select {
		case <-ready:
		case <-ctx.Done():
			return zero, ctx.Err()
		}
	}
}

// Drop handles the loss of c with cause: if c was the current
// connection of an open link, its Redialer connects again in the
// background, or, with NoReconnect, the link ends with cause. It reports
// whether c was current.
func (l *Link[C]) Drop(c C, cause error) bool {
	if !l.lost(c) {
		return false
	}
	if l.NoReconnect {
		l.End(cause)
		return true
	}
	l.mu.Lock()
	if l.redial == nil {
		l.redial = &Redialer{
			Dial: func(ctx context.Context) error {
				c, err := l.Connect(ctx)
				if err == nil {
					l.Install(c)
				}
				return err
			},
			Final: func(err error) bool {
				if l.Final(err) {
					l.End(err)
					return true
				}
				return false
			},
			OnAttempt: l.OnAttempt,
		}
		l.redial.Started(l.since) // the backoff counts from the connection's start
	}
	r, closed := l.redial, l.closed
	// A connection that lived longer than the longest backoff served:
	// it is replaced at once, and the backoff starts over.
	worked := time.Since(l.since) >= DefaultMaxBackoff
	l.mu.Unlock()
	if !closed {
		r.Lost(worked)
	}
	return true
}

// Watch keeps a connection alive and checks it: whenever last (the Unix
// ns of the connection's last traffic of the kind that matters) is every
// old, and at once whenever probe delivers, it calls check, and returns
// check's first error. It returns nil when dead or quit closes. With
// every ≤ 0 only probes call check. It runs on its own timer, so no
// caller can hold it up. [Idle.KeepAlive] is Watch on a session's uses.
func Watch(dead, quit, probe <-chan struct{}, every time.Duration, last func() int64, check func() error) error {
	var tick <-chan time.Time
	var t *time.Timer
	if every > 0 {
		t = time.NewTimer(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		force := false
		select {
		case <-dead:
			return nil
		case <-quit:
			return nil
		case <-tick:
		case <-probe:
			force = true
		}
		if !force {
			if quiet := time.Since(time.Unix(0, last())); quiet < every {
				t.Reset(every - quiet)
				continue
			}
		}
		if err := check(); err != nil {
			return err
		}
		if t != nil {
			t.Reset(every)
		}
	}
}

// DialLogin opens the connection of a login that must end within timeout
// or with ctx, whichever comes first: the connection's deadline follows
// that bound, and ctx's end interrupts a blocked read or write. dial nil
// means a net.Dialer. Call done when the login ends; it clears the
// connection's deadline.
func DialLogin(ctx context.Context, timeout time.Duration, dial func(ctx context.Context, network, addr string) (net.Conn, error), network, addr string) (_ net.Conn, done func(), _ error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	nc, err := dial(ctx, network, addr)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	return nc, func() {
		stop()
		cancel()
		nc.SetDeadline(time.Time{})
	}, nil
}
