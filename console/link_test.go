package console

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestLink(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		refused := errors.New("refused")
		var attempts atomic.Int32
		var l Link[*int]
		l.Connect = func(context.Context) (*int, error) {
			if attempts.Add(1) == 1 {
				return new(int), nil
			}
			return nil, refused
		}
		l.Install = func(c *int) { l.Set(c) }
		l.Final = func(err error) bool { return err == refused }
		closed := errors.New("closed")
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := l.Current(ctx, closed); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Current with no connection: %v", err)
		}
		one := new(int)
		go func() {
			time.Sleep(time.Second)
			l.Set(one)
		}()
		if c, err := l.Current(context.Background(), closed); c != one || err != nil {
			t.Fatalf("Current = %v, %v", c, err)
		}
		// A loss: the Redialer connects again after the backoff.
		start := time.Now()
		if !l.Drop(one, errors.New("lost")) || l.Drop(one, errors.New("lost")) {
			t.Fatal("Drop reported wrong")
		}
		two, err := l.Current(context.Background(), closed)
		if err != nil || two == nil || two == one || time.Since(start) != DefaultMinBackoff {
			t.Fatalf("after a loss: %v, %v, at %v", two, err, time.Since(start))
		}
		// A loss whose attempt fails for good ends the link, after one
		// attempt: a refused password is never tried again.
		l.Drop(two, errors.New("lost"))
		if _, err := l.Current(context.Background(), closed); err != refused || attempts.Load() != 2 {
			t.Fatalf("after a final error: %v, %d attempts", err, attempts.Load())
		}
		if _, ok := l.Close(); !ok || l.Set(one) || !l.Closed() {
			t.Fatal("Close")
		}
		if _, err := l.Current(context.Background(), closed); err != closed {
			t.Fatalf("Current after Close: %v", err)
		}
	})
}

func TestLinkNoReconnect(t *testing.T) {
	t.Parallel()
	l := Link[*int]{NoReconnect: true}
	one := new(int)
	l.Set(one)
	lost := errors.New("lost")
	l.Drop(one, lost)
	if _, err := l.Current(context.Background(), ErrClosed); err != lost {
		t.Fatalf("Current after a loss without reconnection: %v", err)
	}
}

func TestWatchChecksQuietConnections(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var last atomic.Int64
		last.Store(time.Now().UnixNano())
		dead, quit, probe := make(chan struct{}), make(chan struct{}), make(chan struct{}, 1)
		var checks []time.Duration
		start := time.Now()
		failed := errors.New("no answer")
		done := make(chan error)
		go func() {
			done <- Watch(dead, quit, probe, 30*time.Second, last.Load, func() error {
				checks = append(checks, time.Since(start))
				if len(checks) == 3 {
					return failed
				}
				return nil
			})
		}()
		time.Sleep(20 * time.Second)
		last.Store(time.Now().UnixNano()) // traffic at 20 s: the next check waits until 50 s
		time.Sleep(40 * time.Second)
		probe <- struct{}{} // at 60 s
		if err := <-done; err != failed {
			t.Fatalf("Watch = %v", err)
		}
		want := []time.Duration{50 * time.Second, 60 * time.Second, 90 * time.Second} // the timer restarts after each check
		if len(checks) != 3 || checks[0] != want[0] || checks[1] != want[1] || checks[2] != want[2] {
			t.Errorf("checks at %v, want %v", checks, want)
		}
	})
}
