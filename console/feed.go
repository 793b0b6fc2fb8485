package console

import (
	"sync"
	"sync/atomic"
)

// DefaultEventBuffer is the capacity of a [Feed] created with none.
const DefaultEventBuffer = 256

// Feed is a session's Events channel with the loss policy [Session]
// promises: it holds up to its capacity of events for a reader that
// falls behind; beyond that an event is lost, never waited for, so the
// session that publishes it never stalls; and the next event delivered
// counts the ones lost before it in Missed. It is safe for concurrent
// use.
type Feed struct {
	ch chan Event

	mu     sync.Mutex
	missed int  // lost since the last event queued
	closed bool // guards sends against Close

	lost atomic.Int64 // lost in all
}

// NewFeed returns a Feed that holds up to capacity events
// (DefaultEventBuffer when capacity <= 0).
func NewFeed(capacity int) *Feed {
	if capacity <= 0 {
		capacity = DefaultEventBuffer
	}
	return &Feed{ch: make(chan Event, capacity)}
}

// Events returns the channel a session's Events returns. It is closed
// by Close.
func (f *Feed) Events() <-chan Event { return f.ch }

// Publish queues e, with Missed set to the events lost since the last
// one queued, and reports whether it did: an event that finds the
// channel full, or the Feed closed, is lost. It never blocks.
func (f *Feed) Publish(e Event) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	e.Missed = f.missed
	select {
	case f.ch <- e:
		f.missed = 0
		return true
	default:
		f.missed++
		f.lost.Add(1)
		return false
	}
}

// Lost returns how many events were lost in all, for a counter.
func (f *Feed) Lost() int64 { return f.lost.Load() }

// Close closes the channel once the events queued are read. Publish
// after Close loses its event. Calling Close again does nothing.
func (f *Feed) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.ch)
	}
}
