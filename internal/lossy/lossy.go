// Package lossy plays a bad network on the sending side of a UDP server:
// it drops, duplicates and reorders the datagrams a fake or simulated
// server sends. Every decision is drawn from a generator seeded by the
// caller, so the same datagrams sent in the same order meet the same
// faults. The a2stest profiles and the simulated fleet of gsq serve use it.
package lossy

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDelay is how long a held-back datagram waits for a next one when
// Config.Delay is zero.
const DefaultDelay = 20 * time.Millisecond

// Config is a set of faults.
type Config struct {
	// Loss, Duplicate and Reorder are the probabilities, between 0 and 1,
	// that a datagram is dropped, sent twice, or held back and sent after
	// the next one (or after Delay when none follows).
	Loss, Duplicate, Reorder float64
	// Seed seeds the generator the decisions are drawn from.
	Seed uint64
	// Delay is the longest a held-back datagram waits (default DefaultDelay).
	Delay time.Duration
}

// Enabled reports whether c has any fault to inject.
func (c Config) Enabled() bool { return c.Loss > 0 || c.Duplicate > 0 || c.Reorder > 0 }

// Validate reports a probability outside 0 to 1.
func (c Config) Validate() error {
	for _, p := range [...]float64{c.Loss, c.Duplicate, c.Reorder} {
		if !(p >= 0 && p <= 1) { // NaN too
			return errors.New("lossy: fault probabilities must be between 0 and 1")
		}
	}
	return nil
}

// PacketWriter sends datagrams; *net.UDPConn, and the writers a2s.Server
// and ogp.Server take, have this method.
type PacketWriter interface {
	WriteToUDPAddrPort(b []byte, addr netip.AddrPort) (int, error)
}

// Writer is a PacketWriter that injects a Config's faults into the
// datagrams it passes to another. It is safe for concurrent use.
type Writer struct {
	w       PacketWriter
	c       Config
	dropped atomic.Int64

	mu      sync.Mutex
	rng     *rand.Rand
	held    []byte // a datagram held back, sent after the next one
	heldTo  netip.AddrPort
	buf     []byte // held's storage, reused
	timer   *time.Timer
	stopped bool
}

// New returns a Writer that sends through w with c's faults.
func New(w PacketWriter, c Config) *Writer {
	if c.Delay <= 0 {
		c.Delay = DefaultDelay
	}
	return &Writer{w: w, c: c, rng: rand.New(rand.NewPCG(c.Seed, c.Seed^0x9E3779B97F4A7C15))}
}

// WriteToUDPAddrPort sends b to addr, or drops, duplicates or holds it
// back. It reports len(b) for a datagram dropped or held back, as a
// network would take it, and does not retain b.
func (l *Writer) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return len(b), nil
	}
	if l.rng.Float64() < l.c.Loss {
		l.dropped.Add(1)
		return len(b), nil
	}
	copies := 1
	if l.rng.Float64() < l.c.Duplicate {
		copies = 2
	}
	if l.held == nil && l.rng.Float64() < l.c.Reorder {
		l.buf = append(l.buf[:0], b...)
		l.held, l.heldTo = l.buf, to
		if l.timer == nil {
			l.timer = time.AfterFunc(l.c.Delay, l.flush)
		} else {
			l.timer.Reset(l.c.Delay)
		}
		return len(b), nil
	}
	var err error
	for range copies {
		_, err = l.w.WriteToUDPAddrPort(b, to)
	}
	l.flushLocked()
	return len(b), err
}

// Dropped counts the datagrams the Loss setting dropped.
func (l *Writer) Dropped() int64 { return l.dropped.Load() }

// Stop discards the held-back datagram, if any, and every datagram
// written from now on. Call it before closing the socket underneath, so
// that no late datagram is sent through it.
func (l *Writer) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped, l.held = true, nil
	if l.timer != nil {
		l.timer.Stop()
	}
}

func (l *Writer) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

// flushLocked sends the held-back datagram, if any.
func (l *Writer) flushLocked() {
	if l.held == nil || l.stopped {
		return
	}
	_, _ = l.w.WriteToUDPAddrPort(l.held, l.heldTo) // a late datagram: a failure is a loss
	l.held = nil
	l.timer.Stop()
}

// Foretell returns how many times a Writer made from c sends each of the
// first n datagrams written to it: 0 (dropped), 1, or 2 (duplicated). A
// test uses it to know what a lossy server will send. Reorder must be 0:
// when a held-back datagram goes out depends on time.
func Foretell(c Config, n int) []int {
	if c.Reorder != 0 {
		panic("lossy: Foretell with Reorder")
	}
	var count counter
	w := New(&count, c)
	copies := make([]int, n)
	for i := range copies {
		count = 0
		w.WriteToUDPAddrPort(nil, netip.AddrPort{})
		copies[i] = int(count)
	}
	return copies
}

// counter is a PacketWriter that counts datagrams.
type counter int

func (c *counter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	*c++
	return len(b), nil
}
