package console_test

import (
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/console"
)

func TestNewErrorMatchesItsKind(t *testing.T) {
	t.Parallel()
	auth := console.NewError("x: authentication failed", console.ErrAuthFailed)
	timeout := console.NewError("x: timeout", console.ErrTimeout)
	closed := console.NewError("x: closed", console.ErrClosed)
	for _, tc := range []struct{ err, kind error }{{auth, console.ErrAuthFailed}, {timeout, console.ErrTimeout}, {closed, console.ErrClosed}} {
		if !errors.Is(tc.err, tc.kind) || !errors.Is(tc.err, tc.err) {
			t.Errorf("%v does not match %v", tc.err, tc.kind)
		}
		if errors.Is(tc.err, console.ErrAuthFailed) && tc.kind != console.ErrAuthFailed {
			t.Errorf("%v matches ErrAuthFailed", tc.err)
		}
	}
	if auth.Error() != "x: authentication failed" {
		t.Errorf("message %q", auth)
	}
	var ne net.Error
	if !errors.As(timeout, &ne) || !ne.Timeout() || !errors.Is(timeout, os.ErrDeadlineExceeded) {
		t.Error("a timeout is not a net.Error matching os.ErrDeadlineExceeded")
	}
	if errors.As(auth, &ne) || errors.Is(auth, os.ErrDeadlineExceeded) {
		t.Error("an authentication failure passes for a timeout")
	}
}

// A Feed never blocks its publisher: what does not fit is lost, and the
// next event queued counts it.
func TestFeedLossPolicy(t *testing.T) {
	t.Parallel()
	f := console.NewFeed(2)
	for i, text := range []string{"a", "b", "c", "d"} {
		if queued := f.Publish(console.Event{Text: text}); queued != (i < 2) {
			t.Fatalf("Publish(%q) = %v", text, queued)
		}
	}
	for _, want := range []string{"a", "b"} {
		if e := <-f.Events(); e.Text != want || e.Missed != 0 {
			t.Fatalf("event %+v, want %q with none missed", e, want)
		}
	}
	f.Publish(console.Event{Text: "e", Missed: 99})
	if e := <-f.Events(); e.Text != "e" || e.Missed != 2 || f.Lost() != 2 {
		t.Fatalf("event %+v (lost %d), want e with the 2 missed", e, f.Lost())
	}
	f.Publish(console.Event{Text: "f"})
	f.Close()
	f.Close()
	if f.Publish(console.Event{Text: "g"}) {
		t.Error("Publish after Close queued")
	}
	if e := <-f.Events(); e.Text != "f" || e.Missed != 0 {
		t.Fatalf("event %+v after Close, want f", e)
	}
	if _, ok := <-f.Events(); ok {
		t.Error("Events not closed")
	}
	if console.NewFeed(0) == nil || cap(console.NewFeed(0).Events()) != console.DefaultEventBuffer {
		t.Error("a Feed of no capacity does not hold the default")
	}
}

// A Feed published to from many goroutines, and read slowly, loses
// events and counts every one.
func TestFeedCountsEveryLoss(t *testing.T) {
	t.Parallel()
	f := console.NewFeed(8)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				f.Publish(console.Event{})
			}
		})
	}
	got, missed := 0, 0
	done := make(chan struct{})
	go func() {
		for e := range f.Events() {
			got++
			missed += e.Missed
		}
		close(done)
	}()
	wg.Wait()
	f.Publish(console.Event{}) // carries what the last ones lost, if room
	f.Close()
	<-done
	if int64(missed) > f.Lost() || got+int(f.Lost()) != 4001 {
		t.Fatalf("%d delivered, %d counted missed, %d lost: want 4001 in all", got, missed, f.Lost())
	}
}

func TestIdleKeepAlive(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var idle console.Idle
		done := make(chan struct{})
		start := time.Now()
		var probes []time.Duration
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			idle.KeepAlive(done, 10*time.Second, func() { probes = append(probes, time.Since(start)) })
		}()
		time.Sleep(15 * time.Second)
		idle.Touch() // a use at 15 s puts the next probe off to 25 s
		time.Sleep(15 * time.Second)
		close(done)
		<-finished
		want := []time.Duration{10 * time.Second, 25 * time.Second}
		if len(probes) != 2 || probes[0] != want[0] || probes[1] != want[1] {
			t.Fatalf("probes at %v, want at %v", probes, want)
		}
	})
}

// The Redialer dials in the background once a connection is lost, backs
// off between failed attempts, stops at a final failure until the next
// Lost, and tells a waiting caller each outcome.
func TestRedialer(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		refuse := errors.New("refused")
		wrong := errors.New("wrong password")
		var mu sync.Mutex
		results := []error{refuse, refuse, nil, wrong}
		var dials []time.Duration
		var attempts []int
		start := time.Now()
		r := &console.Redialer{
			Dial: func(ctx context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				dials = append(dials, time.Since(start))
				err := results[0]
				results = results[1:]
				return err
			},
			Final:     func(err error) bool { return err == wrong },
			OnAttempt: func(n int, err error) { attempts = append(attempts, n) },
		}
		r.Started(start)
		r.Lost(false)
		ctx := context.Background()
		if ok, err := r.Await(ctx, start.Add(time.Minute)); !ok || err != refuse {
			t.Fatalf("first attempt: %v, %v", err, ok)
		}
		// The next attempt is due 2 s after the last began (at 1 s): a
		// deadline before it is not waited out.
		if ok, err := r.Await(ctx, time.Now().Add(time.Second)); ok || err != refuse {
			t.Fatalf("an attempt past the deadline: %v, %v", err, ok)
		}
		if ok, err := r.Await(ctx, start.Add(time.Minute)); !ok || err != refuse {
			t.Fatalf("second attempt: %v, %v", err, ok)
		}
		if ok, err := r.Await(ctx, start.Add(time.Minute)); !ok || err != nil {
			t.Fatalf("third attempt: %v, %v", err, ok)
		}
		// Connected: nothing runs until the next loss.
		if ok, _ := r.Await(ctx, start.Add(time.Minute)); ok {
			t.Fatal("an attempt with the connection up")
		}
		r.Lost(true) // it served: replaced at once
		lost := time.Now()
		if ok, err := r.Await(ctx, lost.Add(time.Minute)); !ok || err != wrong || time.Since(lost) != 0 {
			t.Fatalf("after a loss: %v, %v after %v", err, ok, time.Since(lost))
		}
		time.Sleep(time.Hour)
		r.Close()
		mu.Lock()
		defer mu.Unlock()
		want := []time.Duration{time.Second, 3 * time.Second, 7 * time.Second, 7 * time.Second}
		if len(dials) != len(want) {
			t.Fatalf("dials at %v, want %v", dials, want)
		}
		for i := range want {
			if dials[i] != want[i] {
				t.Fatalf("dials at %v, want %v", dials, want)
			}
		}
		if len(attempts) != 4 || attempts[0] != 1 || attempts[2] != 3 || attempts[3] != 1 {
			t.Errorf("attempts numbered %v, want 1 2 3, then 1", attempts)
		}
	})
}

// Close stops a Redialer waiting out its backoff, and a caller waiting
// for it.
func TestRedialerClose(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		r := &console.Redialer{Dial: func(context.Context) error { return errors.New("down") }}
		r.Started(time.Now())
		r.Lost(false)
		r.Await(context.Background(), time.Now().Add(time.Hour))
		waited := make(chan bool)
		go func() {
			ok, _ := r.Await(context.Background(), time.Now().Add(time.Hour))
			waited <- ok
		}()
		synctest.Wait()
		r.Close()
		if <-waited {
			t.Fatal("an attempt ended after Close")
		}
		r.Lost(false) // does nothing once closed
	})
}
