package scan

import (
	"context"
	"fmt"
	"iter"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/hostport"
	"github.com/gsq-project/gsq/internal/udpclient"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// run is one scan in progress on an engine.
type run struct {
	e    *engine
	ctx  context.Context
	emit func(*Outcome)
	// launch holds, per socket, the first requests of the flights the
	// dispatcher starts, sent whenever the dispatcher might wait.
	launch []*udpclient.Batch

	slots   chan struct{} // one per target in flight, released after emit
	flights sync.WaitGroup

	outMu     sync.Mutex
	out       []*Outcome
	outKick   chan struct{}
	unemitted atomic.Int32
	caughtUp  chan struct{} // the emitter caught up with the results waiting
	stop      chan struct{}
	emitted   chan struct{} // closed when the emitter has returned

	targets                int // the dispatcher's
	counts                 [StatusCanceled + 1]int
	sent, resent, received atomic.Int64
	cancelOnce             sync.Once
}

// run queries the targets of seq and emits their results.
func (e *engine) run(ctx context.Context, seq iter.Seq[Target], emit func(*Outcome)) (Summary, error) {
	start := time.Now()
	stray := e.stray()
	r := &run{
		e:        e,
		ctx:      ctx,
		emit:     emit,
		slots:    make(chan struct{}, e.slots),
		outKick:  make(chan struct{}, 1),
		caughtUp: make(chan struct{}, 1),
		stop:     make(chan struct{}),
		emitted:  make(chan struct{}),
	}
	for _, sk := range e.socks {
		r.launch = append(r.launch, sk.t.NewBatch())
	}
	go r.emitter()

	// Targets are taken from seq by a goroutine of their own, a few
	// ahead, so that the dispatcher knows when it would wait for one.
	feed := make(chan Target, feedBuffer)
	stopFeed := make(chan struct{})
	go func() {
		defer close(feed)
		for t := range seq {
			select {
			case feed <- t:
			case <-stopFeed:
				return
			}
		}
	}()
	r.dispatch(feed)
	close(stopFeed)
	r.flushLaunches()

	all := make(chan struct{})
	go func() {
		r.flights.Wait()
		close(all)
	}()
	select {
	case <-all:
	case <-ctx.Done():
		r.cancel()
		<-all
	}
	close(r.stop)
	<-r.emitted
	sum := Summary{
		Targets: r.targets, Answered: r.counts[StatusAnswered], Partial: r.counts[StatusPartial],
		TimedOut: r.counts[StatusTimedOut], Failed: r.counts[StatusFailed],
		Unreachable: r.counts[StatusUnreachable], Canceled: r.counts[StatusCanceled],
		Sent: r.sent.Load(), Resent: r.resent.Load(), Received: r.received.Load(),
		Stray: e.stray() - stray, Elapsed: time.Since(start),
	}
	return sum, ctx.Err()
}

// testHookWait, if set, is called when the dispatcher starts waiting for
// the emitter or the sockets to catch up.
var testHookWait func()

// dispatch takes the targets and starts each one when a slot is free,
// until the targets end or ctx is done.
func (r *run) dispatch(feed <-chan Target) {
	e := r.e
	for {
		for e.behind.Load() > 0 || r.unemitted.Load() > maxUnemitted {
			r.flushLaunches()
			wake := e.caughtUpChan()
			if e.behind.Load() == 0 && r.unemitted.Load() <= maxUnemitted {
				break
			}
			if testHookWait != nil {
				testHookWait()
			}
			select {
			case <-wake:
			case <-r.caughtUp:
			case <-r.ctx.Done():
				return
			}
		}
		select {
		case r.slots <- struct{}{}:
		default:
			r.flushLaunches()
			select {
			case r.slots <- struct{}{}:
			case <-r.ctx.Done():
				return
			}
		}
		var t Target
		var ok bool
		select {
		case t, ok = <-feed:
		default:
			r.flushLaunches()
			select {
			case t, ok = <-feed:
			case <-r.ctx.Done():
				<-r.slots
				return
			}
		}
		if !ok {
			<-r.slots
			return
		}
		if r.ctx.Err() != nil {
			<-r.slots
			return // canceled while this target was read: it is not taken
		}
		r.targets++
		r.flights.Add(1)
		f := newFlight(r, t)
		switch {
		case t.Err != nil:
			f.fail(StatusFailed, result.KindInvalid, t.Err)
		case !t.Addr.IsValid():
			go r.resolve(f)
		default:
			e.admit(f, true)
		}
	}
}

// flushLaunches sends the first requests the dispatcher has queued.
func (r *run) flushLaunches() {
	for _, b := range r.launch {
		b.Flush()
	}
}

// launchWriter is the dispatcher's send batch for sk.
func (r *run) launchWriter(sk *socket) *udpclient.Batch {
	for i, s := range r.e.socks {
		if s == sk {
			return r.launch[i]
		}
	}
	return nil
}

// resolve looks a host name up (hostport.Resolve: an IPv4 address
// preferred), or has the query resolve it when it resolves the target
// itself (a protocol.TargetResolver: Minecraft's follows the SRV record of
// a name given without a port), then admits the flight. The lookup counts
// against the Deadline.
func (r *run) resolve(f *flight) {
	t := f.res.Target
	ctx, start := r.ctx, time.Now()
	if d := r.e.deadline; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	var addr netip.AddrPort
	tr, own := f.query.(protocol.TargetResolver)
	var err error
	if own {
		addr, own, err = tr.ResolveTarget(protocol.WithResolver(ctx, r.e.resolver), f.res.Result.Target)
	}
	if !own {
		addr, err = hostport.HostPort{Host: t.Host, Port: t.Port}.Resolve(ctx, r.e.resolver)
	}
	f.resolving = time.Since(start)
	if r.ctx.Err() != nil {
		f.fail(StatusCanceled, result.KindCanceled, fmt.Errorf("scan: %s: canceled before it was queried: %w", t, r.ctx.Err()))
		return
	}
	if err != nil {
		f.fail(StatusUnreachable, result.KindUnreachable, fmt.Errorf("scan: %s: %w", t, err))
		return
	}
	f.addr = addr
	f.res.Result.Addr = f.addr
	r.e.admit(f, false)
}

// admit starts f unless its IP address is at MaxPerIP or its server is
// in flight: then f waits for a flight of that address to end.
// dispatched is set when the dispatcher calls.
func (e *engine) admit(f *flight, dispatched bool) {
	addr := f.addr
	f.sock = e.socketFor(addr)
	if f.sock == nil {
		f.fail(StatusUnreachable, result.KindUnreachable, errNoIPv6)
		return
	}
	if e.maxPerIP > 0 {
		ip := addr.Addr()
		e.mu.Lock()
		if e.perIP[ip] >= e.maxPerIP {
			e.ipWait[ip] = append(e.ipWait[ip], f)
			e.mu.Unlock()
			return
		}
		e.perIP[ip]++
		f.ipCounted = true
		e.mu.Unlock()
	}
	e.admitServer(f, dispatched)
}

// admitServer starts f unless its server is in flight.
func (e *engine) admitServer(f *flight, dispatched bool) {
	sk, addr := f.sock, f.addr
	sk.mu.Lock()
	if _, busy := sk.flights[addr]; busy {
		sk.waiting[addr] = append(sk.waiting[addr], f)
		sk.mu.Unlock()
		return
	}
	sk.flights[addr] = f
	sk.mu.Unlock()
	var out *udpclient.Batch
	if dispatched {
		out = f.r.launchWriter(sk)
	}
	f.launch(out)
}

// release ends f's hold on its server and its IP address, and starts the
// flights that waited for it. f.mu is held.
func (e *engine) release(f *flight) {
	sk, addr := f.sock, f.addr
	if sk == nil {
		return // never admitted
	}
	var next *flight
	sk.mu.Lock()
	if sk.flights[addr] == f {
		delete(sk.flights, addr)
		if w := sk.waiting[addr]; len(w) > 0 {
			next = w[0]
			if len(w) == 1 {
				delete(sk.waiting, addr)
			} else {
				sk.waiting[addr] = w[1:]
			}
			sk.flights[addr] = next
		}
	}
	sk.mu.Unlock()
	var ready []*flight
	if e.interval > 0 || e.maxPerIP > 0 {
		e.mu.Lock()
		if e.interval > 0 && f.launched {
			e.remember(addr, f.nextSend)
		}
		if f.ipCounted {
			f.ipCounted = false
			ip := addr.Addr()
			if e.perIP[ip]--; e.perIP[ip] <= 0 {
				delete(e.perIP, ip)
			}
			w := e.ipWait[ip]
			for len(w) > 0 && e.perIP[ip] < e.maxPerIP {
				w[0].ipCounted = true
				e.perIP[ip]++
				ready = append(ready, w[0])
				w[0] = nil
				w = w[1:]
			}
			if len(w) == 0 {
				delete(e.ipWait, ip)
			} else {
				e.ipWait[ip] = w
			}
		}
		e.mu.Unlock()
	}
	if next != nil {
		next.launch(nil)
	}
	for _, w := range ready {
		e.admitServer(w, false)
	}
}

// nextSendTo is when the server at addr may next be sent to, under
// HostInterval: a flight of the same server that finished less than
// HostInterval ago holds the next one back.
func (e *engine) nextSendTo(addr netip.AddrPort) time.Time {
	e.mu.Lock()
	defer e.mu.Unlock()
	next := e.recent[addr]
	delete(e.recent, addr)
	return next
}

// remember keeps when addr may next be sent to, for a flight of the same
// server that comes later; e.mu is held. Entries that have passed are
// swept whenever the table doubles, so it holds about the servers
// finished within the last HostInterval.
func (e *engine) remember(addr netip.AddrPort, next time.Time) {
	e.recent[addr] = next
	if len(e.recent) < e.sweepAt {
		return
	}
	now := time.Now()
	for a, t := range e.recent {
		if t.Before(now) {
			delete(e.recent, a)
		}
	}
	e.sweepAt = max(64, 2*len(e.recent))
}

// cancel ends every flight of r still going with StatusCanceled: those in
// the air, and those waiting for their server or IP address.
func (r *run) cancel() {
	r.cancelOnce.Do(func() {
		e := r.e
		var victims []*flight
		e.mu.Lock()
		for ip, w := range e.ipWait {
			victims = takeRun(r, victims, e.ipWait, ip, w)
		}
		e.mu.Unlock()
		for _, sk := range e.socks {
			sk.mu.Lock()
			for addr, w := range sk.waiting {
				victims = takeRun(r, victims, sk.waiting, addr, w)
			}
			for _, f := range sk.flights {
				if f.r == r {
					victims = append(victims, f)
				}
			}
			sk.mu.Unlock()
		}
		for _, f := range victims {
			f.cancel(r.ctx.Err())
		}
	})
}

// takeRun moves r's flights from the waiting list w, m[k], to victims,
// and returns victims.
func takeRun[K comparable](r *run, victims []*flight, m map[K][]*flight, k K, w []*flight) []*flight {
	kept := w[:0]
	for _, f := range w {
		if f.r == r {
			victims = append(victims, f)
		} else {
			kept = append(kept, f)
		}
	}
	clear(w[len(kept):])
	if len(kept) == 0 {
		delete(m, k)
	} else {
		m[k] = kept
	}
	return victims
}

// deliver queues a finished outcome for the emitter.
func (r *run) deliver(res *Outcome) {
	r.unemitted.Add(1)
	r.outMu.Lock()
	r.out = append(r.out, res)
	r.outMu.Unlock()
	select {
	case r.outKick <- struct{}{}:
	default:
	}
}

// emitter hands outcomes to emit, one at a time, and frees their slots.
func (r *run) emitter() {
	defer close(r.emitted)
	var batch []*Outcome
	for {
		select {
		case <-r.outKick:
		case <-r.stop:
			return
		}
		r.outMu.Lock()
		batch, r.out = r.out, batch[:0]
		r.outMu.Unlock()
		for i, res := range batch {
			r.counts[res.Status]++
			if r.emit != nil {
				r.emit(res)
			}
			batch[i] = nil
			<-r.slots
			if r.unemitted.Add(-1) == maxUnemitted {
				select {
				case r.caughtUp <- struct{}{}:
				default:
				}
			}
			r.flights.Done()
		}
	}
}
