package rcon

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/console"
)

// Serial mode (the default): one command at a time. A command reads its
// own answer from the socket, in its own goroutine: handing each packet
// over from a reader goroutine costs a wake-up per command, which is most
// of a loopback round trip. Between commands someone must still read, to
// pass unsolicited packets to Events and to notice a lost connection, so
// a connection left idle for idleReadDelay is read by its idleReader
// goroutine until a command wants it back. Whoever holds the serial slot
// reads: a command that finds the idle reader holding it sets a past read
// deadline to interrupt it. Reader resumes an interrupted read, so no
// packet is lost wherever the interruption lands.

// idleReadDelay is how long a serial connection goes unread after a
// command before its idleReader takes over. Commands sent back to back
// never wait for the hand-over.
const idleReadDelay = 20 * time.Millisecond

// peekAfter is how long a serial connection may go unread before a
// command first checks that the server has not closed it: a command
// written on a connection the server closed fails, and may or may not
// have run, so the client would rather dial again first. Commands sent
// back to back skip the check, which costs a system call.
const peekAfter = time.Millisecond

// deadlineSlack is how much earlier than asked a read or write deadline
// already set may fall and still be kept: setting one costs a timer
// update, which commands in a row would otherwise pay each time.
const deadlineSlack = 10 * time.Millisecond

// serial runs one command at a time; whoever holds its slot owns the
// connection's reading and writing.
type serial struct {
	c    *Client
	slot chan struct{} // held for a whole command, or by the idle reader
	turn readTurn

	// Guarded by the slot.
	wbuf    []byte // encoding scratch
	scratch []byte // output of the command holding the slot

	lastDone  atomic.Int64 // with CommandDelay, when the last command ended, Unix ns
	abandoned atomic.Pointer[abandonedReq]
	x         exchange // the command holding the slot's
}

func newSerial(c *Client) *serial {
	return &serial{c: c, slot: make(chan struct{}, 1)}
}

// readTurn is who waits for the serial slot while the idle reader holds
// it.
type readTurn struct {
	lastEnd atomic.Int64 // when a command last gave the slot back, Unix ns

	mu      sync.Mutex
	idling  *conn // the connection the idle reader reads while it holds the slot
	waiting int   // goroutines waiting for the slot
}

// acquire takes the serial slot within ctx and dl, interrupting the idle
// reader if it holds it. quick reports that it was free.
func (s *serial) acquire(ctx context.Context, dl time.Time) (quick bool, err error) {
	select {
	case s.slot <- struct{}{}:
		return true, nil
	default:
	}
	t := &s.turn
	t.mu.Lock()
	t.waiting++
	if t.idling != nil {
		t.idling.nc.SetReadDeadline(pastDeadline)
	}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.waiting--
		t.mu.Unlock()
	}()
	return false, s.c.wait(ctx, dl, s.slot)
}

// release gives the serial slot back; last is about when it was last
// used.
func (s *serial) release(last time.Time) {
	if s.c.opts.CommandDelay > 0 {
		s.lastDone.Store(time.Now().UnixNano())
	}
	s.turn.lastEnd.Store(last.UnixNano())
	<-s.slot
}

// attach starts the idle reader of cn.
func (s *serial) attach(cn *conn) {
	s.turn.lastEnd.Store(time.Now().UnixNano())
	go s.idleReader(cn)
}

// dropped has nothing to fail: a command in flight finds out by itself.
func (s *serial) dropped(*conn, error) {}

// idleReader reads cn whenever it is idle, until it fails.
func (s *serial) idleReader(cn *conn) {
	defer s.c.readers.Done()
	t := &s.turn
	timer := time.NewTimer(idleReadDelay)
	defer timer.Stop()
	for {
		select {
		case <-timer.C:
		case <-cn.dead:
			return
		}
		if wait := idleReadDelay - time.Since(time.Unix(0, t.lastEnd.Load())); wait > 0 {
			timer.Reset(wait)
			continue
		}
		select {
		case s.slot <- struct{}{}:
		default:
			timer.Reset(idleReadDelay) // a command reads
			continue
		}
		err := s.readIdle(cn)
		<-s.slot
		if err != nil {
			s.c.fail(cn, err)
			return
		}
		timer.Reset(idleReadDelay)
	}
}

// readIdle reads and routes packets until someone waits for the slot. It
// returns the error that ended the connection, if that is what ended it.
func (s *serial) readIdle(cn *conn) error {
	t := &s.turn
	t.mu.Lock()
	if t.waiting > 0 {
		t.mu.Unlock()
		return nil
	}
	cn.nc.SetReadDeadline(time.Time{})
	t.idling = cn
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.idling = nil
		t.mu.Unlock()
		cn.rdl = time.Time{} // perhaps interrupted: unknown
	}()
	for {
		p, err := cn.rd.next()
		if err != nil && !isTimeoutErr(err) {
			return err
		}
		if err == nil {
			s.foreign(cn, p)
		}
		t.mu.Lock()
		if t.waiting > 0 {
			t.mu.Unlock()
			return nil
		}
		if err != nil {
			// A deadline left by a command's cancellation hook.
			cn.nc.SetReadDeadline(time.Time{})
		}
		t.mu.Unlock()
	}
}

// maxPendingPackets bounds the packets closedSince reads before it gives
// up looking for a close behind them.
const maxPendingPackets = 64

// closedSince reports whether the server closed cn since it was last
// read. A close waits behind the packets that came before it (the tail
// of the last answer, an unsolicited line the idle reader has not read
// yet), so those are read and routed first, as the idle reader would
// have. The caller holds the slot.
func (s *serial) closedSince(cn *conn) bool {
	for range maxPendingPackets {
		closed, pending := peek(cn.nc)
		if closed || !pending {
			return closed
		}
		// Whole packets are in the socket's buffer; a part of one waits
		// a moment for the rest, and then the command goes ahead.
		p, err := cn.readBy(time.Now().Add(time.Millisecond))
		if err != nil {
			return !isTimeoutErr(err)
		}
		s.foreign(cn, p)
	}
	return false
}

// readBy reads the next packet of cn, waiting until dl at most. The
// caller holds the serial slot.
func (cn *conn) readBy(dl time.Time) (Packet, error) {
	if !cn.rd.wholePacketBuffered() && (cn.rdl.After(dl) || !cn.rdl.After(dl.Add(-deadlineSlack))) {
		cn.nc.SetReadDeadline(dl)
		cn.rdl = dl
	}
	p, err := cn.rd.next()
	if err != nil && isTimeoutErr(err) {
		cn.rdl = time.Time{} // maybe an interruption: set it again
	}
	return p, err
}

// write writes b to cn with the deadline dl and drops the connection if
// that fails. The caller holds the slot.
func (s *serial) write(cn *conn, dl time.Time, b []byte) error {
	if cn.wdl.After(dl) || !cn.wdl.After(dl.Add(-deadlineSlack)) {
		cn.nc.SetWriteDeadline(dl)
		cn.wdl = dl
	}
	_, err := cn.nc.Write(b)
	if err != nil {
		s.c.fail(cn, err)
		err = s.c.connErr(cn)
	}
	return err
}

// appendPacket appends p to b, showing it to Options.Debug.
func (c *Client) appendPacket(b []byte, cn *conn, p Packet) []byte {
	n := len(b)
	b, _ = p.AppendBinary(b)
	if c.opts.Debug != nil {
		c.opts.Debug("send", cn.peer, b[n:])
	}
	return b
}

// send writes the packets in one Write (the caller holds the slot).
func (s *serial) send(cn *conn, dl time.Time, p Packet, more ...Packet) error {
	s.wbuf = s.c.appendPacket(s.wbuf[:0], cn, p)
	for _, q := range more {
		s.wbuf = s.c.appendPacket(s.wbuf, cn, q)
	}
	err := s.write(cn, dl, s.wbuf)
	if cap(s.wbuf) > maxKeptScratch {
		s.wbuf = nil
	}
	return err
}

// exec runs r holding the serial slot, in the slot's exchange.
func (s *serial) exec(ctx context.Context, dl, start time.Time, r request, keep func([]byte, bool)) (answer, error) {
	quick, err := s.acquire(ctx, dl)
	if err != nil {
		keep(nil, true)
		return answer{}, err
	}
	x := &s.x
	*x = exchange{request: r, start: start, quick: quick, out: s.scratch[:0]}
	last := start // when the connection was last used
	defer func() { s.release(last) }()
	if ctx.Done() != nil {
		// Reads carry the deadline; a cancellation must interrupt them.
		stop := context.AfterFunc(ctx, s.c.interruptRead)
		defer stop()
	}
	err = s.execOn(ctx, dl, x)
	x.done(err)
	// A small buffer is kept for the next command; a large one is handed
	// over, so that the output exists once.
	reuse := cap(x.out) <= maxKeptScratch
	keep(x.out, !reuse)
	if reuse {
		s.scratch = x.out[:0]
	} else {
		s.scratch = nil
	}
	a := x.answer()
	last = cmp.Or(x.Last, x.start)
	*x = exchange{} // holds nothing of the command's
	return a, err
}

// interruptRead wakes whoever reads the live connection.
func (c *Client) interruptRead() {
	if cn := c.cur.Load(); cn != nil {
		cn.nc.SetReadDeadline(pastDeadline)
	}
}

// execOn runs x on the live connection, reconnecting first if it was
// lost. The caller holds the slot.
func (s *serial) execOn(ctx context.Context, dl time.Time, x *exchange) error {
	c := s.c
	if c.opts.CommandDelay > 0 || s.abandoned.Load() != nil {
		x.quick = false
		if err := s.pause(ctx, dl); err != nil {
			return err
		}
		s.settle(ctx, dl)
	}
	live := c.cur.Load()
	if live != nil && x.start.UnixNano()-s.turn.lastEnd.Load() > int64(peekAfter) && s.closedSince(live) {
		// The server closed the connection since it was last read: dial
		// again before the command goes out, rather than lose it.
		c.fail(live, io.EOF)
	}
	cn, err := c.connection(ctx, dl)
	if err != nil {
		return err
	}
	x.quick = x.quick && cn == live
	if c.know.traits().rust && !cn.utf8Sent {
		x.quick = false
		if err := s.switchUTF8(ctx, dl, cn); err != nil {
			return err
		}
	}
	if x.detach != nil && !x.detach.begin() {
		return context.Canceled // Send's caller went away first
	}
	x.cn, x.id = cn, c.newID()
	err = s.collect(ctx, dl, x)
	x.singleByte = !cn.utf8Sent && c.know.traits().rust
	if err != nil && x.written && (errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled)) {
		s.abandon(x)
	}
	return err
}

// pause waits out CommandDelay since the previous command.
func (s *serial) pause(ctx context.Context, dl time.Time) error {
	if s.c.opts.CommandDelay <= 0 {
		return nil
	}
	wait := time.Until(time.Unix(0, s.lastDone.Load()).Add(s.c.opts.CommandDelay))
	if wait <= 0 {
		return nil
	}
	if time.Now().Add(wait).After(dl) {
		return s.c.deadlineErr(ctx, dl, "CommandDelay goes past the deadline", nil)
	}
	return sleep(ctx, wait)
}

// collect writes x's command and reads its answer into x.out, as the
// Terminator steps.
func (s *serial) collect(ctx context.Context, dl time.Time, x *exchange) error {
	c, cn := s.c, x.cn
	req := Packet{ID: x.id, Type: TypeExecCommand, Body: []byte(x.cmd)}
	// The round trip counts from the write; when nothing was waited for
	// since the call began, the call's start is that moment (within the
	// client's sub-microsecond preparation), and the clock is not read
	// again.
	x.Sent = x.start
	if !x.quick {
		x.Sent = time.Now()
	}
	x.Last = x.Sent
	t := c.know.traits()
	step := c.term.Start(&x.Exchange)
	var err error
	switch {
	case step == console.StepMark && t.oneAtATime():
		x.markFirst = true
		err = s.send(cn, dl, req)
	case step == console.StepMark:
		x.probeID, x.Marked, x.MarkedWithCommand = c.newID(), true, true
		err = s.send(cn, dl, req, marker(x.probeID, t))
	default:
		err = s.send(cn, dl, req)
	}
	x.wrote(err)
	if err != nil {
		return err
	}
	x.written = true
	x.progress = cn.rd.progress()
	for {
		until := dl
		var quiet time.Time // when Silence is due
		if x.Wait > 0 {
			quiet = x.Last.Add(x.Wait)
			until = earlier(until, quiet)
		}
		p, err := cn.readBy(until)
		if err != nil {
			if !isTimeoutErr(err) {
				return s.lost(x, err)
			}
			now := time.Now()
			switch {
			case ctx.Err() != nil:
				return c.ctxErr(ctx, dl)
			case !now.Before(dl):
				return c.deadlineErr(ctx, dl, "", x)
			case cn.rd.progress() != x.progress:
				// Part of a packet came: the server is still sending.
				x.progress, x.Last = cn.rd.progress(), now
			case !quiet.IsZero() && !now.Before(quiet):
				step := c.term.Silence(&x.Exchange)
				x.Last = now
				if done, err := s.act(dl, x, step, true); done || err != nil {
					return err
				}
			}
			continue
		}
		x.progress = cn.rd.progress()
		done, err := s.handle(dl, x, p)
		if done || err != nil {
			return err
		}
	}
}

// handle takes one packet read while x waits for its answer.
func (s *serial) handle(dl time.Time, x *exchange, p Packet) (done bool, err error) {
	c, cn := s.c, x.cn
	switch r := classify(x, c.know.traits(), p); r {
	case roleEvent:
		c.unsolicited(p)
		return false, nil
	case roleMarker, roleTail:
		mine := x.Marked
		body := p.Body
		if r == roleTail {
			body = nil
		}
		step := c.term.Marker(&x.Exchange, body)
		x.Marked = false
		if step == console.StepRemark {
			return s.act(dl, x, step, false)
		}
		// SRCDS's extra packet follows the mirror; take it now if it is
		// here, else dropLate drops it when it comes.
		if mine && cn.rd.wholePacketBuffered() {
			if q, err := cn.rd.next(); err == nil {
				s.foreign(cn, q)
			}
		}
		return true, nil
	case roleAnswer:
		clock, err := c.take(x, p.Body)
		if err != nil {
			c.fail(cn, err)
			return true, err
		}
		step := c.term.Message(&x.Exchange, p.Body)
		if x.Wait > 0 && !clock {
			x.Last = time.Now()
		}
		if x.markFirst && !x.Marked {
			x.markFirst = false
			if step == console.StepContinue {
				step = console.StepMark // held back until the command was read
			}
		}
		return s.act(dl, x, step, false)
	}
	s.foreign(cn, p)
	return false, nil
}

// act carries out a Terminator's step; silence tells that Silence took it.
func (s *serial) act(dl time.Time, x *exchange, step console.Step, silence bool) (done bool, err error) {
	switch step {
	case console.StepDone:
		if !x.Marked {
			return true, nil
		}
		if silence {
			s.c.gaveUp(x)
			return true, nil
		}
		// Once a marker is out, only its reply ends the answer: the next
		// command must not follow it before the server read it.
		return false, nil
	case console.StepMark:
		if x.Marked {
			return false, nil
		}
	case console.StepRemark:
	default:
		return false, nil
	}
	x.probeID, x.Marked, x.MarkedWithCommand = s.c.newID(), true, false
	if x.Wait > 0 {
		x.Last = time.Now() // the marker's wait counts from here
	}
	return false, s.send(x.cn, dl, marker(x.probeID, s.c.know.traits()))
}

// lost handles the loss of x's connection while x waits for its answer:
// a loss at a packet boundary may leave the answer whole, as the
// Terminator judges.
func (s *serial) lost(x *exchange, err error) error {
	cn := x.cn
	whole := cn.rd.atBoundary() && (errors.Is(err, io.EOF) || isConnReset(err)) && s.c.term.Lost(&x.Exchange)
	if whole {
		cn.served.Store(true) // it is replaced at once
	}
	s.c.fail(cn, err)
	if whole {
		return nil
	}
	return s.c.connErr(cn)
}

// foreign handles a packet that is not part of the answer being read,
// noting the reply to a request abandoned before it.
func (s *serial) foreign(cn *conn, p Packet) {
	if a := s.abandoned.Load(); a != nil && a.cn == cn && p.ID != 0 && (p.ID == a.ids[0] || p.ID == a.ids[1]) {
		a.answered.Store(true)
	}
	s.c.foreign(cn, p)
}

// switchUTF8 asks legacy Rust to send text as UTF-8: until it gets a
// packet of type 5, it sends each character as its low byte. The packet
// goes out alone, and the command only after the server had time to read
// it, since legacy Rust handles only the first packet of each read.
func (s *serial) switchUTF8(ctx context.Context, dl time.Time, cn *conn) error {
	c := s.c
	id := c.newID()
	if err := s.send(cn, dl, Packet{ID: id, Type: TypeRustUTF8}); err != nil {
		return err
	}
	cn.utf8Sent = true
	c.note("asked legacy Rust for UTF-8 text (a type-5 packet)")
	until := earlier(time.Now().Add(c.know.probeWait()), dl)
	for time.Now().Before(until) {
		p, err := cn.readBy(until)
		if err != nil {
			if !isTimeoutErr(err) {
				c.fail(cn, err)
				return c.connErr(cn)
			}
			if ctx.Err() != nil {
				return c.ctxErr(ctx, dl)
			}
			continue
		}
		if p.ID == id {
			return nil
		}
		s.foreign(cn, p)
	}
	return nil
}

// abandonedGrace bounds how long a command waits for the first reply to
// a command abandoned before it on a connection that must not get two
// packets back to back (Minecraft closes the connection when two arrive
// in one read).
const abandonedGrace = 2 * time.Second

// abandonedReq is a request given up before its answer came.
type abandonedReq struct {
	cn       *conn
	ids      [2]int32
	answered atomic.Bool
}

// abandon deals with the command of x, given up before its answer was
// complete. Its late packets are dropped by id; but where ids cannot tell
// them from the next command's the connection is dropped, and where two
// packets must not be written back to back the next command first waits
// for it (see settle).
func (s *serial) abandon(x *exchange) {
	t := s.c.know.traits()
	switch {
	case len(t.fixedIDs) > 0 && !(!x.Marked && x.Messages > 0 && (t.single || t.probe == no)):
		s.c.fail(x.cn, fmt.Errorf("%w: a command was abandoned on a server whose replies carry fixed ids", ErrConnClosed))
	case t.minecraftRules() && x.Messages == 0:
		s.abandoned.Store(&abandonedReq{cn: x.cn, ids: [2]int32{x.id, x.probeID}})
	}
}

// settle waits, within dl and abandonedGrace, until the request abandoned
// by the previous command has been answered. The caller holds the slot.
func (s *serial) settle(ctx context.Context, dl time.Time) {
	a := s.abandoned.Load()
	if a == nil {
		return
	}
	defer s.abandoned.CompareAndSwap(a, nil)
	if a.answered.Load() {
		return
	}
	until := earlier(time.Now().Add(abandonedGrace), dl)
	cn := a.cn
	for !a.answered.Load() && time.Now().Before(until) && ctx.Err() == nil {
		p, err := cn.readBy(until)
		if err != nil {
			if !isTimeoutErr(err) {
				s.c.fail(cn, err)
				return
			}
			continue
		}
		s.foreign(cn, p)
	}
}

// probeIdle writes one probe on cn, unless a command is running, and on a
// server known to answer probes waits for the reply: without one within
// max(KeepAlive, the probe wait), the connection counts as lost. Servers
// whose replies carry fixed ids get a probe only when they are known to
// answer it, since an unread reply would be taken for the next answer;
// legacy Rust ignores probes, and so only learns of a dead peer through
// a failed write.
func (s *serial) probeIdle(cn *conn) {
	c := s.c
	t := c.know.traits()
	answered := t.probe == yes || t.dialect == DialectMinecraft
	if len(t.fixedIDs) > 0 && !answered {
		return
	}
	wait := max(c.opts.KeepAlive, c.know.probeWait())
	dl := time.Now().Add(min(wait, c.opts.Timeout))
	// Take the slot from the idle reader, not from a command.
	if _, err := s.acquire(context.Background(), dl); err != nil {
		return
	}
	defer func() { s.release(time.Now()) }()
	if c.cur.Load() != cn || c.idle.Since() < c.opts.KeepAlive {
		return // replaced, or a command ran meanwhile
	}
	id := c.newID()
	if err := s.send(cn, dl, marker(id, t)); err != nil || !answered {
		return
	}
	for {
		p, err := cn.readBy(dl)
		switch {
		case err == nil && (p.ID == id || (t.acceptsID(p.ID) && isProbeTail(p.Body))):
			if p.ID == id && cn.rd.wholePacketBuffered() { // SRCDS's extra packet
				if q, err := cn.rd.next(); err == nil {
					s.foreign(cn, q)
				}
			}
			return
		case err == nil:
			if !t.acceptsID(p.ID) {
				s.foreign(cn, p)
			}
		case !isTimeoutErr(err):
			c.fail(cn, err)
			return
		case !time.Now().Before(dl):
			c.note("no reply to the keep-alive probe within %v: connection lost", wait)
			c.fail(cn, errKeepAlive)
			return
		}
	}
}

// errKeepAlive is why a connection whose keep-alive went unanswered is
// dropped.
var errKeepAlive = errors.New("keep-alive probe unanswered")
