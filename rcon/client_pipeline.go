package rcon

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/console"
)

// Pipelined mode (Options.Pipeline): several commands in flight on one
// connection, a reader goroutine routing packets to them by id and
// calling the Terminator for them; each command's own goroutine writes
// what it asks for and waits.

// pipeline runs commands in flight together.
type pipeline struct {
	c        *Client
	inflight chan struct{} // one token per command in flight, if bounded
	coalesce bool          // requests share Writes (see conn.wq)

	wtok chan struct{} // held for each Write when not coalescing (a channel: a wait on it is one synctest sees)
	wbuf []byte        // encoding scratch, guarded by wtok

	mu    sync.Mutex
	calls map[int32]*call // by command id and marker id

	// lastRead is when readLoop last read a packet, Unix ns. A request
	// waits for a quiet period of the connection, not only of its own
	// answer: the server may be sending the answers of requests before it.
	lastRead atomic.Int64
}

func newPipeline(c *Client) *pipeline {
	pl := &pipeline{c: c, calls: make(map[int32]*call), coalesce: c.opts.Dialect == DialectSource, wtok: make(chan struct{}, 1)}
	if c.opts.MaxInFlight > 0 {
		pl.inflight = make(chan struct{}, c.opts.MaxInFlight)
	}
	return pl
}

// call is one pipelined request in flight.
type call struct {
	x      *exchange // &xs
	xs     exchange
	notify chan struct{}

	mu       sync.Mutex // guards x and what follows, against readLoop
	done     bool
	err      error
	needMark bool // the Terminator asked for a marker, for the waiter to send
}

// exec runs r as a pipelined request.
func (pl *pipeline) exec(ctx context.Context, dl, start time.Time, r request, keep func([]byte, bool)) (answer, error) {
	cl := newCall(exchange{request: r, start: start})
	err := pl.run(ctx, dl, cl)
	cl.x.done(err)
	keep(cl.x.out, true)
	return cl.x.answer(), err
}

// newCall returns a call for x.
func newCall(x exchange) *call {
	cl := &call{xs: x, notify: make(chan struct{}, 1)}
	cl.x = &cl.xs
	return cl
}

func (pl *pipeline) run(ctx context.Context, dl time.Time, cl *call) error {
	c, x := pl.c, cl.x
	if pl.inflight != nil {
		if err := c.wait(ctx, dl, pl.inflight); err != nil {
			return err
		}
		defer func() { <-pl.inflight }()
	}
	cn, err := c.connection(ctx, dl)
	if err != nil {
		return err
	}
	if x.detach != nil && !x.detach.begin() {
		return context.Canceled // Send's caller went away first
	}
	x.cn = cn
	if err := pl.register(cl); err != nil {
		return err
	}
	defer pl.retire(cl)
	defer func() {
		// From now on readLoop leaves x alone.
		cl.mu.Lock()
		cl.done = true
		cl.mu.Unlock()
	}()
	cl.mu.Lock()
	x.Sent = time.Now()
	x.Last = x.Sent
	mark := c.term.Start(&x.Exchange) == console.StepMark
	if mark {
		x.Marked, x.MarkedWithCommand = true, true
	}
	cl.mu.Unlock()
	probe := int32(0)
	if mark {
		probe = x.probeID
	}
	err = pl.queue(dl, cn, Packet{ID: x.id, Type: TypeExecCommand, Body: []byte(x.cmd)}, probe)
	x.wrote(err)
	if err != nil {
		return err
	}
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		cl.mu.Lock()
		done, err, need := cl.done, cl.err, cl.needMark
		cl.needMark = false
		var quiet time.Time // when Silence is due
		if x.Wait > 0 {
			quiet = pl.quiet(x)
		}
		cl.mu.Unlock()
		if done || err != nil {
			return err
		}
		if need {
			if err := pl.remark(dl, cl); err != nil {
				return err
			}
			continue
		}
		until := dl
		if !quiet.IsZero() {
			until = earlier(until, quiet)
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(until))
		} else {
			timer.Reset(time.Until(until))
		}
		select {
		case <-cl.notify:
		case <-ctx.Done():
			return c.ctxErr(ctx, dl)
		case <-timer.C:
			now := time.Now()
			cl.mu.Lock()
			switch {
			case cl.done || cl.err != nil:
			case !now.Before(dl):
				cl.done = true
				err := c.deadlineErr(ctx, dl, "", x)
				cl.mu.Unlock()
				return err
			case x.Wait > 0 && !now.Before(pl.quiet(x)):
				step := c.term.Silence(&x.Exchange)
				x.Last = now
				pl.apply(cl, step, true)
			}
			cl.mu.Unlock()
		}
	}
}

// quiet is when x's quiet period ends, counted from the last packet of
// the connection if that came after the last of x's answer.
func (pl *pipeline) quiet(x *exchange) time.Time {
	last := x.Last
	if r := time.Unix(0, pl.lastRead.Load()); r.After(last) {
		last = r
	}
	return last.Add(x.Wait)
}

// remark writes the marker the Terminator asked for, under a new id: the
// one out, if any, is taken as lost.
func (pl *pipeline) remark(dl time.Time, cl *call) error {
	c, x := pl.c, cl.x
	id := c.newID()
	pl.mu.Lock()
	delete(pl.calls, x.probeID)
	pl.calls[id] = cl
	pl.mu.Unlock()
	cl.mu.Lock()
	x.probeID, x.Marked, x.MarkedWithCommand = id, true, false
	if x.Wait > 0 {
		x.Last = time.Now() // the marker's wait counts from here
	}
	cl.mu.Unlock()
	return pl.queue(dl, x.cn, Packet{}, id)
}

// apply carries out a Terminator's step for cl, whose lock the caller
// holds; silence tells that Silence took it.
func (pl *pipeline) apply(cl *call, step console.Step, silence bool) {
	x := cl.x
	switch step {
	case console.StepDone:
		switch {
		case !x.Marked:
			cl.done = true
		case silence:
			pl.c.gaveUp(x)
			cl.done = true
		}
	case console.StepMark:
		cl.needMark = !x.Marked
	case console.StepRemark:
		cl.needMark = true
	}
}

// register allocates the ids of a new request on cl.x.cn. It fails if
// the connection died since it was picked, as dropped would not see the
// request.
func (pl *pipeline) register(cl *call) error {
	c, x := pl.c, cl.x
	x.id, x.probeID = c.newID(), c.newID()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if err := c.connErr(x.cn); err != nil {
		return err
	}
	pl.calls[x.id] = cl
	pl.calls[x.probeID] = cl
	return nil
}

// retire forgets cl; its ids count as finished from now on.
func (pl *pipeline) retire(cl *call) {
	pl.mu.Lock()
	delete(pl.calls, cl.x.id)
	delete(pl.calls, cl.x.probeID)
	pl.mu.Unlock()
}

// dropped fails the requests in flight on cn.
func (pl *pipeline) dropped(cn *conn, err error) {
	var calls []*call
	pl.mu.Lock()
	for id, cl := range pl.calls {
		if cl.x.cn == cn {
			delete(pl.calls, id)
			if !slices.Contains(calls, cl) {
				calls = append(calls, cl)
			}
		}
	}
	pl.mu.Unlock()
	for _, cl := range calls {
		cl.finish(err)
	}
}

// finish ends cl with err (nil: complete) and wakes its waiter.
func (cl *call) finish(err error) {
	cl.mu.Lock()
	if err != nil && cl.err == nil {
		cl.err = err
	}
	cl.done = true
	cl.mu.Unlock()
	cl.wake()
}

func (cl *call) wake() {
	select {
	case cl.notify <- struct{}{}:
	default:
	}
}

// attach starts the read loop of cn.
func (pl *pipeline) attach(cn *conn) { go pl.readLoop(cn) }

// readLoop routes the packets of a pipelined connection until it fails.
// The requests that got packets are woken once no whole packet is left
// in the buffer, so that each wakes once for all its packets of one
// read.
func (pl *pipeline) readLoop(cn *conn) {
	defer pl.c.readers.Done()
	for {
		p, err := cn.rd.next()
		if err != nil {
			pl.c.fail(cn, err)
			return
		}
		if cl := pl.route(cn, p); cl != nil && !slices.Contains(cn.woken, cl) {
			cn.woken = append(cn.woken, cl)
		}
		if !cn.rd.wholePacketBuffered() || len(cn.woken) >= maxDeferredWakes {
			pl.lastRead.Store(time.Now().UnixNano())
			cn.wakeAll()
		}
	}
}

// wakeAll wakes the requests that readLoop got packets for.
func (cn *conn) wakeAll() {
	for i, cl := range cn.woken {
		cl.wake()
		cn.woken[i] = nil
	}
	cn.woken = cn.woken[:0]
}

// maxDeferredWakes bounds the requests readLoop holds back from waking.
const maxDeferredWakes = 16

// route hands p (whose body is shared) to the request it answers, and
// otherwise drops it as late or makes it an event. It returns the
// request that got p, for the caller to wake.
func (pl *pipeline) route(cn *conn, p Packet) *call {
	c := pl.c
	if p.Type == TypeChatValue || p.Type == TypeRustConsole {
		c.unsolicited(p)
		return nil
	}
	pl.mu.Lock()
	cl := pl.calls[p.ID]
	if cl != nil && p.ID != cl.x.id {
		// Only the first reply to the marker ends the answer; SRCDS's
		// extra packet that follows is a late packet.
		delete(pl.calls, p.ID)
	}
	pl.mu.Unlock()
	if cl == nil {
		c.foreign(cn, p)
		return nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	x := cl.x
	switch {
	case cl.done:
		return nil
	case p.ID != x.id:
		if !x.Marked {
			return nil // the marker was not sent: not its reply
		}
		step := c.term.Marker(&x.Exchange, p.Body)
		x.Marked = false
		if step == console.StepRemark {
			cl.needMark = true
		} else {
			cl.done = true
		}
		return cl
	}
	clock, err := c.take(x, p.Body)
	if err != nil {
		cl.err, cl.done = err, true
		go c.fail(cn, err) // fail takes locks routes hold
		return cl
	}
	step := c.term.Message(&x.Exchange, p.Body)
	if x.Wait > 0 && !clock {
		x.Last = time.Now()
	}
	pl.apply(cl, step, false)
	return cl
}

// probeIdle writes one marker on cn, whose reply is dropped as late.
func (pl *pipeline) probeIdle(cn *conn) {
	cl := newCall(exchange{cn: cn})
	if pl.register(cl) != nil {
		return
	}
	_ = pl.queue(time.Now().Add(pl.c.opts.Timeout), cn, Packet{}, cl.x.probeID)
	pl.retire(cl)
}
