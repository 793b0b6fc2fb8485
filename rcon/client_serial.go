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
)

// On a serial connection a command reads its own answer from the socket,
// in its own goroutine: handing each packet over from a reader goroutine
// costs a wake-up per command, which is most of a loopback round trip.
// Between commands someone must still read, to pass unsolicited packets
// to Events and to notice a lost connection, so a connection left idle
// for idleReadDelay is read by its idleReader goroutine until a command
// wants it back. Whoever holds the client's serial slot reads: a command
// that finds the idle reader holding it sets a past read deadline to
// interrupt it. Reader resumes an interrupted read, so no packet is lost
// wherever the interruption lands.

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
func (c *Client) acquire(ctx context.Context, dl time.Time) (quick bool, err error) {
	select {
	case c.slot <- struct{}{}:
		return true, nil
	default:
	}
	t := &c.turn
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
	return false, c.wait(ctx, dl, c.slot)
}

// release gives the serial slot back; last is about when it was last
// used.
func (c *Client) release(last time.Time) {
	if c.opts.CommandDelay > 0 {
		c.mu.Lock()
		c.lastDone = time.Now()
		c.mu.Unlock()
	}
	c.turn.lastEnd.Store(last.UnixNano())
	<-c.slot
}

// idleReader reads cn whenever it is idle, until it fails.
func (c *Client) idleReader(cn *conn) {
	defer c.readers.Done()
	t := &c.turn
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
		case c.slot <- struct{}{}:
		default:
			timer.Reset(idleReadDelay) // a command reads
			continue
		}
		err := c.readIdle(cn)
		<-c.slot
		if err != nil {
			c.fail(cn, err)
			return
		}
		timer.Reset(idleReadDelay)
	}
}

// readIdle reads and routes packets until someone waits for the slot. It
// returns the error that ended the connection, if that is what ended it.
func (c *Client) readIdle(cn *conn) error {
	t := &c.turn
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
			c.foreign(cn, p)
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
// have. The caller holds the serial slot.
func (c *Client) closedSince(cn *conn) bool {
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
		c.foreign(cn, p)
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
// that fails. The caller is cn's only writer.
func (c *Client) write(cn *conn, dl time.Time, b []byte) error {
	if cn.wdl.After(dl) || !cn.wdl.After(dl.Add(-deadlineSlack)) {
		cn.nc.SetWriteDeadline(dl)
		cn.wdl = dl
	}
	_, err := cn.nc.Write(b)
	if err != nil {
		c.fail(cn, err)
		c.mu.Lock()
		err = cn.err
		c.mu.Unlock()
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
func (c *Client) send(cn *conn, dl time.Time, p Packet, more ...Packet) error {
	c.wbuf = c.appendPacket(c.wbuf[:0], cn, p)
	for _, q := range more {
		c.wbuf = c.appendPacket(c.wbuf, cn, q)
	}
	err := c.write(cn, dl, c.wbuf)
	if cap(c.wbuf) > maxKeptScratch {
		c.wbuf = nil
	}
	return err
}

// exchange is one command and its answer.
type exchange struct {
	start    time.Time // when Exec was called
	cn       *conn
	id       int32
	probeID  int32 // the end-of-answer probe out, 0 if none
	early    bool  // the probe went out in the command's segment
	out      []byte
	packets  int
	sent     time.Time // when the command was written
	quick    bool      // nothing was waited for between start and the write
	lastFull bool      // the last packet was a full SRCDS fragment
	wantRTT  bool      // the caller wants the round-trip time
	rtt      time.Duration
	last     time.Time // when the last packet of the answer (or a part of one) came
	// singleByte: the answer came from legacy Rust before it was asked
	// for UTF-8, as single bytes.
	singleByte bool

	progress int64 // the Reader's progress when last looked at
}

// execSerial runs cmd holding the serial slot.
func (c *Client) execSerial(ctx context.Context, dl time.Time, cmd string, x *exchange, keep func([]byte, bool)) error {
	quick, err := c.acquire(ctx, dl)
	if err != nil {
		keep(nil, true)
		return err
	}
	x.quick = quick
	defer func() { c.release(cmp.Or(x.last, x.start)) }()
	if ctx.Done() != nil {
		// Reads carry the deadline; a cancellation must interrupt them.
		stop := context.AfterFunc(ctx, c.interruptRead)
		defer stop()
	}
	x.out = c.scratch[:0]
	err = c.execOn(ctx, dl, cmd, x)
	// A small buffer is kept for the next command; a large one is handed
	// over, so that the output exists once.
	reuse := cap(x.out) <= maxKeptScratch
	keep(x.out, !reuse)
	if reuse {
		c.scratch = x.out[:0]
	} else {
		c.scratch = nil
	}
	x.out = nil
	return err
}

// interruptRead wakes whoever reads the live connection.
func (c *Client) interruptRead() {
	c.mu.Lock()
	cn := c.cn
	c.mu.Unlock()
	if cn != nil {
		cn.nc.SetReadDeadline(pastDeadline)
	}
}

// execOn runs cmd on the live connection, reconnecting first if it was
// lost. The caller holds the slot.
func (c *Client) execOn(ctx context.Context, dl time.Time, cmd string, x *exchange) error {
	if c.opts.CommandDelay > 0 || c.abandoned.Load() != nil {
		x.quick = false
		if err := c.pause(ctx, dl); err != nil {
			return err
		}
		c.settle(ctx, dl)
	}
	live := c.cur.Load()
	if live != nil && x.start.UnixNano()-c.turn.lastEnd.Load() > int64(peekAfter) && c.closedSince(live) {
		// The server closed the connection since it was last read: dial
		// again before the command goes out, rather than lose it.
		c.fail(live, io.EOF)
	}
	cn, err := c.connection(ctx, dl)
	if err != nil {
		return err
	}
	x.quick = x.quick && cn == live
	t := c.learned()
	if t.rust && !cn.utf8Sent {
		x.quick = false
		if err := c.switchUTF8(ctx, dl, cn); err != nil {
			return err
		}
	}
	x.cn, x.id = cn, c.newID()
	err = c.collect(ctx, dl, cmd, x, &t)
	x.singleByte = !cn.utf8Sent && c.srv.Load().rust
	if err != nil && (errors.Is(err, ErrTimeout) || errors.Is(err, context.Canceled)) {
		c.abandon(x, &t)
	}
	return err
}

// pause waits out CommandDelay since the previous command.
func (c *Client) pause(ctx context.Context, dl time.Time) error {
	if c.opts.CommandDelay <= 0 {
		return nil
	}
	c.mu.Lock()
	wait := time.Until(c.lastDone.Add(c.opts.CommandDelay))
	c.mu.Unlock()
	if wait <= 0 {
		return nil
	}
	if time.Now().Add(wait).After(dl) {
		return c.deadlineErr(ctx, dl, "CommandDelay goes past the deadline", nil)
	}
	return sleep(ctx, wait)
}

// marker is the end-of-answer probe with id for a server with traits t:
// an empty RESPONSE_VALUE, which SRCDS mirrors, or an empty command on
// the Minecraft dialect and on servers that hung up on a RESPONSE_VALUE.
// Vanilla Minecraft answers an empty command harmlessly ("Unknown or
// incomplete command"), and servers built on go-mc pass it to their
// handler, where a type-0 probe makes go-mc hang up.
func marker(id int32, t *traits) Packet {
	if t.dialect == DialectMinecraft || t.execMarker {
		return Packet{ID: id, Type: TypeExecCommand}
	}
	return Packet{ID: id, Type: TypeResponseValue}
}

// markerFor is the end-of-answer probe with id for the server as known.
func (c *Client) markerFor(id int32) Packet {
	t := c.learned()
	return marker(id, &t)
}

// collect writes cmd and reads its answer into x.out. t is what is known
// of the server; collect updates it as it learns.
func (c *Client) collect(ctx context.Context, dl time.Time, cmd string, x *exchange, t *traits) error {
	cn := x.cn
	req := Packet{ID: x.id, Type: TypeExecCommand, Body: []byte(cmd)}
	// The round trip counts from the write; when nothing was waited for
	// since the call began, the call's start is that moment (within the
	// client's sub-microsecond preparation), and the clock is not read
	// again.
	x.sent = x.start
	if !x.quick {
		x.sent = time.Now()
	}
	var err error
	if c.earlyProbe(t) {
		x.probeID, x.early = c.newID(), true
		err = c.send(cn, dl, req, marker(x.probeID, t))
	} else {
		err = c.send(cn, dl, req)
	}
	if err != nil {
		return err
	}
	x.progress = cn.rd.progress()
	wait := time.Duration(0) // the probe wait, once needed
	for {
		until, verdictDue := dl, time.Time{}
		if c.awaitingVerdict(x, t) {
			if wait == 0 {
				wait = c.probeWait()
			}
			verdictDue = x.last.Add(wait)
		} else if c.opts.Terminator != nil {
			if s := c.opts.Terminator.Silence(x.packets); s > 0 {
				verdictDue = x.sent.Add(s)
				if x.packets > 0 {
					verdictDue = x.last.Add(s)
				}
			}
		}
		if !verdictDue.IsZero() && verdictDue.Before(until) {
			until = verdictDue
		}
		p, err := cn.readBy(until)
		if err != nil {
			if !isTimeoutErr(err) {
				return c.lost(x, t, err)
			}
			now := time.Now()
			switch {
			case ctx.Err() != nil:
				return c.ctxErr(ctx, dl)
			case !now.Before(dl):
				return c.deadlineErr(ctx, dl, "", x)
			case cn.rd.progress() != x.progress:
				// Part of a packet came: the server is still sending.
				x.progress, x.last = cn.rd.progress(), now
			case !verdictDue.IsZero() && !now.Before(verdictDue):
				if done, err := c.noReply(dl, x, t); done || err != nil {
					return err
				}
			}
			continue
		}
		x.progress = cn.rd.progress()
		done, err := c.handle(dl, x, t, p)
		if done || err != nil {
			return err
		}
	}
}

// lost handles the loss of x's connection while x waits for its answer.
// A server that hangs up between packets after answering, while the
// client waits to learn whether it answers probes at all, hung up on the
// probe (go-mc's does): the answer is whole, and the client uses
// Minecraft's rules, with an empty command as the end-of-answer marker,
// from then on. One that hangs up on a probe written with the command
// takes no probes there.
func (c *Client) lost(x *exchange, t *traits, err error) error {
	cn := x.cn
	clean := cn.rd.atBoundary() && (errors.Is(err, io.EOF) || isConnReset(err))
	c.fail(cn, err)
	switch {
	case !clean || c.opts.Terminator != nil || x.probeID == 0:
	case x.packets > 0 && !x.early && t.probe == unknown && !t.minecraftRules():
		c.learn(cn, func(s *traits) bool { ok := !s.execMarker; s.minecraft, s.execMarker = true, true; return ok },
			"the server hung up on the end-of-answer probe (as go-mc's does): the answer is whole; Minecraft's rules, with an empty command as the end marker, from now on")
		return nil
	case x.packets == 0 && x.early && t.backToBack == unknown:
		c.learn(cn, func(s *traits) bool { ok := s.backToBack != no; s.backToBack = no; return ok },
			"the server hung up on a probe in the command's segment: probing after the answer's first packet from now on")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return cn.err
}

// earlyProbe reports whether the probe goes out in the command's segment:
// only once the server has answered a probe and is not known to drop one
// that arrives with the command (the first such command tests that), or
// when a Terminator asks for it on a dialect that allows it.
func (c *Client) earlyProbe(t *traits) bool {
	if term := c.opts.Terminator; term != nil {
		return term.Start() == StepProbe && t.dialect != DialectMinecraft
	}
	return t.probe == yes && t.backToBack != no && !t.single && !t.rust && !t.minecraftRules() && len(t.fixedIDs) == 0
}

// awaitingVerdict reports whether the answer's end waits on a probe
// whose fate is unknown: the client has yet to learn whether this server
// answers probes (or, for an early probe, probes in the command's
// segment), so an unanswered one must not hold the command until its
// deadline.
func (c *Client) awaitingVerdict(x *exchange, t *traits) bool {
	if x.probeID == 0 || x.packets == 0 || c.opts.Terminator != nil || t.minecraftRules() {
		return false // Minecraft's marker is answered: wait for it
	}
	return t.probe == unknown || (x.early && t.backToBack == unknown)
}

// noReply handles a probe that went unanswered for the probe wait, or a
// Terminator's quiet period.
func (c *Client) noReply(dl time.Time, x *exchange, t *traits) (done bool, err error) {
	cn := x.cn
	switch {
	case c.opts.Terminator != nil:
		return true, nil
	case x.lastFull:
		// The last packet was a full SRCDS fragment, which more follow:
		// the server is slow, not silent.
		x.last = time.Now()
		return false, nil
	case x.early:
		// It answers probes, but dropped the one that came with the
		// command: probe after the first packet from now on.
		t.backToBack = no
		c.learn(cn, func(s *traits) bool { ok := s.backToBack != no; s.backToBack = no; return ok },
			"a probe in the command's segment went unanswered: the server drops requests that arrive while it handles one (as ARK does); probing after the answer's first packet")
		x.probeID, x.early = c.newID(), false
		x.last = time.Now()
		return false, c.send(cn, dl, marker(x.probeID, t))
	}
	t.probe, t.single = no, true
	c.gaveUp.Store(x.probeID)
	c.learn(cn, func(s *traits) bool { ok := s.probe != no; s.probe, s.single = no, true; return ok },
		"the end-of-answer probe went unanswered (as on Factorio, Palworld and legacy Rust): one packet per answer")
	return true, nil
}

// handle takes one packet read while x waits for its answer.
func (c *Client) handle(dl time.Time, x *exchange, t *traits, p Packet) (done bool, err error) {
	cn := x.cn
	switch {
	case p.Type == TypeChatValue || p.Type == TypeRustConsole:
		c.unsolicited(cn, p)
		if p.Type == TypeRustConsole {
			t.rust = true
		}
		return false, nil
	case t.rust && p.ID == -1 && p.Type == TypeResponseValue:
		if len(p.Body) == 0 {
			return true, nil // legacy Rust's end of an answer
		}
		return false, c.take(x, t, p) // legacy Rust answers "say" with id -1
	case x.probeID != 0 && p.ID == x.probeID:
		c.probeReply(x, t, p)
		return true, nil
	case p.ID == x.id || (t.acceptsID(p.ID) && p.Type == TypeResponseValue):
		if p.ID != x.id && x.probeID != 0 && isProbeTail(p.Body) {
			// A server with fixed reply ids: its mirror (empty) came
			// before this extra packet and added nothing.
			c.probeAnswered(x, t)
			return true, nil
		}
		if err := c.take(x, t, p); err != nil {
			return true, err
		}
		return c.step(dl, x, t, p.Body)
	}
	c.foreign(cn, p)
	*t = c.learned() // a late probe reply may have taught something
	return false, nil
}

// take appends an answer packet to the output. It looks at the clock
// only for the first packet when the round-trip time is wanted, and when
// the end of the answer may hang on the time since the last packet (a
// probe's fate, a Terminator's quiet period).
func (c *Client) take(x *exchange, t *traits, p Packet) error {
	x.packets++
	x.lastFull = len(p.Body) == DefaultSourceSplitSize
	if x.packets == 1 && x.wantRTT || c.opts.Terminator != nil || c.awaitingVerdict(x, t) {
		x.last = time.Now()
		if x.packets == 1 {
			x.rtt = x.last.Sub(x.sent)
		}
	}
	if len(x.out)+len(p.Body) > c.opts.MaxResponseSize {
		err := fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.opts.MaxResponseSize)
		c.fail(x.cn, err)
		return err
	}
	x.out = appendCapped(x.out, p.Body, c.opts.MaxResponseSize)
	return nil
}

// appendCapped appends b to out (len(out)+len(b) <= limit), growing it
// at most to limit bytes, so a response never takes more memory than its
// limit. The capacity doubles, but goes straight to the limit once it
// would pass half of it, so that growing to the limit allocates at most
// twice the limit in all.
func appendCapped(out, b []byte, limit int) []byte {
	if n := len(out) + len(b); n > cap(out) {
		size := max(2*cap(out), n, 512)
		if size > limit/2 {
			size = limit
		}
		grown := make([]byte, len(out), size)
		copy(grown, out)
		out = grown
	}
	return append(out, b...)
}

// step decides what follows an answer packet with the given body.
func (c *Client) step(dl time.Time, x *exchange, t *traits, body []byte) (done bool, err error) {
	var s Step
	switch {
	case c.opts.Terminator != nil:
		s = c.opts.Terminator.Packet(x.packets-1, body)
		if s == StepContinue && c.opts.Terminator.Start() == StepProbe {
			s = StepProbe // held back until the command was read
		}
	case t.minecraftRules():
		s = StepDone
		if fullFragment(body) {
			s = StepProbe
		}
	case t.rust:
		s = StepContinue
	case t.single || t.probe == no:
		s = StepDone
	default:
		s = StepProbe
	}
	switch {
	case x.probeID != 0:
		// Once a probe is out, only its reply ends the answer: the next
		// command must not follow it before the server read it.
		return false, nil
	case s == StepDone:
		return true, nil
	case s == StepProbe:
		x.probeID = c.newID()
		if x.last.IsZero() {
			x.last = time.Now() // the probe's wait counts from here
		}
		return false, c.send(x.cn, dl, marker(x.probeID, t))
	}
	return false, nil
}

// probeReply takes the first reply to x's probe, which ends the answer.
func (c *Client) probeReply(x *exchange, t *traits, p Packet) {
	cn := x.cn
	if c.opts.Terminator != nil || t.dialect == DialectMinecraft {
		return
	}
	if len(p.Body) > 0 && !t.minecraft {
		t.minecraft = true
		c.learn(cn, func(s *traits) bool { ok := !s.minecraft; s.minecraft, s.probe = true, yes; return ok },
			"the probe was answered %q: a Minecraft server; probing only after a full fragment, never back to back", DecodeText(p.Body))
		return
	}
	c.probeAnswered(x, t)
	// SRCDS's extra packet follows the mirror; take it now if it is
	// here, else late() drops it when it comes.
	if cn.rd.wholePacketBuffered() {
		if q, err := cn.rd.next(); err == nil {
			c.foreign(cn, q)
		}
	}
}

// probeAnswered records that the server answered x's probe.
func (c *Client) probeAnswered(x *exchange, t *traits) {
	if t.probe != yes {
		t.probe = yes
		c.learn(x.cn, func(s *traits) bool { ok := s.probe != yes; s.probe = yes; return ok },
			"the end-of-answer probe is mirrored (SRCDS)")
	}
	if x.early && t.backToBack != yes {
		t.backToBack = yes
		c.learn(x.cn, func(s *traits) bool { ok := s.backToBack != yes; s.backToBack = yes; return ok },
			"a probe in the command's segment is answered: probing with each command")
	}
}

// foreign handles a packet that is not part of the answer being read.
func (c *Client) foreign(cn *conn, p Packet) {
	switch {
	case p.Type == TypeChatValue || p.Type == TypeRustConsole:
		c.unsolicited(cn, p)
	case c.abandonedReply(cn, p.ID):
	case c.issued(p.ID):
		if p.ID == c.gaveUp.Load() && p.ID != 0 {
			// The probe the client gave up on was answered after all.
			c.learn(cn, func(s *traits) bool {
				ok := s.probe != yes
				s.probe, s.single = yes, s.dialect == DialectCS2
				return ok
			},
				"a late reply to an end-of-answer probe thought unanswered: probes are answered after all")
		}
		c.late(cn, p)
	default:
		c.unsolicited(cn, p)
	}
}

// switchUTF8 asks legacy Rust to send text as UTF-8: until it gets a
// packet of type 5, it sends each character as its low byte. The packet
// goes out alone, and the command only after the server had time to read
// it, since legacy Rust handles only the first packet of each read.
func (c *Client) switchUTF8(ctx context.Context, dl time.Time, cn *conn) error {
	id := c.newID()
	if err := c.send(cn, dl, Packet{ID: id, Type: TypeRustUTF8}); err != nil {
		return err
	}
	cn.utf8Sent = true
	c.note(cn, "asked legacy Rust for UTF-8 text (a type-5 packet)")
	until := time.Now().Add(c.probeWait())
	if until.After(dl) {
		until = dl
	}
	for time.Now().Before(until) {
		p, err := cn.readBy(until)
		if err != nil {
			if !isTimeoutErr(err) {
				c.fail(cn, err)
				c.mu.Lock()
				defer c.mu.Unlock()
				return cn.err
			}
			if ctx.Err() != nil {
				return c.ctxErr(ctx, dl)
			}
			continue
		}
		if p.ID == id {
			return nil
		}
		c.foreign(cn, p)
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
func (c *Client) abandon(x *exchange, t *traits) {
	switch {
	case len(t.fixedIDs) > 0 && !(x.probeID == 0 && x.packets > 0 && (t.single || t.probe == no)):
		c.fail(x.cn, fmt.Errorf("%w: a command was abandoned on a server whose replies carry fixed ids", ErrConnClosed))
	case t.minecraftRules() && x.packets == 0:
		c.abandoned.Store(&abandonedReq{cn: x.cn, ids: [2]int32{x.id, x.probeID}})
	}
}

// abandonedReply reports whether id is the abandoned request's, marking
// it answered.
func (c *Client) abandonedReply(cn *conn, id int32) bool {
	a := c.abandoned.Load()
	if a == nil || a.cn != cn || id == 0 || (id != a.ids[0] && id != a.ids[1]) {
		return false
	}
	a.answered.Store(true)
	return false // still dropped as a late packet
}

// settle waits, within dl and abandonedGrace, until the request abandoned
// by the previous command has been answered. The caller holds the slot.
func (c *Client) settle(ctx context.Context, dl time.Time) {
	a := c.abandoned.Load()
	if a == nil {
		return
	}
	defer c.abandoned.CompareAndSwap(a, nil)
	if a.answered.Load() {
		return
	}
	until := time.Now().Add(abandonedGrace)
	if until.After(dl) {
		until = dl
	}
	cn := a.cn
	for !a.answered.Load() && time.Now().Before(until) && ctx.Err() == nil {
		p, err := cn.readBy(until)
		if err != nil {
			if !isTimeoutErr(err) {
				c.fail(cn, err)
				return
			}
			continue
		}
		c.foreign(cn, p)
	}
}
