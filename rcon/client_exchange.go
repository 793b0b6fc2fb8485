package rcon

import (
	"context"
	"fmt"
	"time"

	"github.com/gsq-project/gsq/console"
)

// This file holds what both modes (serial and pipelined) do with one
// command: the exchange they collect its answer in, what each packet read
// is to it, and how the Terminator's steps are carried out.

// mode is how the commands of a client share its connection: serial (one
// at a time, each reading its own answer, client_serial.go) or pipelined
// (several in flight, a reader goroutine routing answers by id,
// client_pipeline.go). Client.run is the one path into either.
type mode interface {
	// exec runs r, called at start, on the live connection within ctx
	// and dl, giving keep the output (see Client.run, which calls it on
	// the concrete type).
	exec(ctx context.Context, dl, start time.Time, r request, keep func(out []byte, owned bool)) (answer, error)
	// attach starts reading cn, a new live connection; the goroutine it
	// starts counts in Client.readers.
	attach(cn *conn)
	// probeIdle sends a keep-alive on cn.
	probeIdle(cn *conn)
	// dropped fails what is in flight on cn, which died of err.
	dropped(cn *conn, err error)
}

// newMode picks the mode at the first login, once the login reply has
// shown whether replies carry the request's id.
func (c *Client) newMode() mode {
	if c.opts.Pipeline && c.know.canPipeline() {
		c.know.assumeInOrder()
		return newPipeline(c)
	}
	return newSerial(c)
}

// exchange is one command and its answer.
type exchange struct {
	console.Exchange // what the Terminator sees
	request

	start   time.Time // when the call began
	cn      *conn
	id      int32
	probeID int32 // the end-of-answer marker's id: the one out, or (pipelined) the one reserved
	// markFirst: Start asked for the marker on a server that must not get
	// two packets in one read; it goes out after the first packet.
	markFirst  bool
	out        []byte
	rtt        time.Duration
	quick      bool // nothing was waited for between start and the write
	written    bool // the command went out
	singleByte bool // the answer came from legacy Rust as single bytes
	progress   int64
}

// answer tells what x's caller learns besides the output.
func (x *exchange) answer() answer {
	return answer{packets: x.Messages, rtt: x.rtt, singleByte: x.singleByte}
}

// done records that x got its whole answer (err nil) on its connection,
// which has then served.
func (x *exchange) done(err error) {
	if err == nil && x.cn != nil {
		x.cn.served.Store(true)
	}
}

// wrote reports the write of the command to Send, if x is Send's.
func (x *exchange) wrote(err error) {
	if x.detach != nil {
		x.detach.report(err)
	}
}

// role is what a packet read while an answer is collected is to it.
type role int8

const (
	roleOther  role = iota // another request's, or nobody's
	roleEvent              // said unasked: an event
	roleAnswer             // part of the answer
	roleMarker             // the end marker's reply, or the server's own end of the answer
	roleTail               // the extra packet after a marker's reply that carried a fixed id
)

// classify says what p is to the answer x collects from a server with
// traits t.
func classify(x *exchange, t *traits, p Packet) role {
	switch {
	case p.Type == TypeChatValue || p.Type == TypeRustConsole:
		return roleEvent
	case t.rust && p.ID == -1 && p.Type == TypeResponseValue:
		if len(p.Body) == 0 {
			return roleMarker // legacy Rust's end of an answer
		}
		return roleAnswer // legacy Rust answers "say" with id -1
	case x.probeID != 0 && p.ID == x.probeID:
		return roleMarker
	case p.ID == x.id:
		return roleAnswer
	case t.acceptsID(p.ID) && p.Type == TypeResponseValue:
		if x.Marked && isProbeTail(p.Body) {
			// A server with fixed reply ids: its mirror (empty) came
			// before this extra packet and added nothing.
			return roleTail
		}
		return roleAnswer
	}
	return roleOther
}

// take adds an answer packet's body to x. It reads the clock only for the
// first packet when the round-trip time is wanted, and while the
// Terminator waits on the time since the last packet; it reports whether
// it did.
func (c *Client) take(x *exchange, body []byte) (clock bool, err error) {
	x.Messages++
	x.Bytes += len(body)
	x.LastSize = len(body)
	if x.Messages == 1 && x.wantRTT || x.Wait > 0 {
		x.Last, clock = time.Now(), true
		if x.Messages == 1 {
			x.rtt = x.Last.Sub(x.Sent)
		}
	}
	if len(x.out)+len(body) > c.opts.MaxResponseSize {
		return clock, fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.opts.MaxResponseSize)
	}
	x.out = appendCapped(x.out, body, c.opts.MaxResponseSize)
	return clock, nil
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

// lateMarker is a marker whose exchange ended without its reply (the
// Terminator gave up on it): a reply that comes after all goes to the
// Terminator, which may learn from it.
type lateMarker struct {
	id int32
	x  console.Exchange
}

// gaveUp records that x ended with its marker unanswered.
func (c *Client) gaveUp(x *exchange) {
	c.late.Store(&lateMarker{id: x.probeID, x: x.Exchange})
}

// foreign handles a packet that is not part of the answer being read.
func (c *Client) foreign(cn *conn, p Packet) {
	switch {
	case p.Type == TypeChatValue || p.Type == TypeRustConsole:
		c.unsolicited(p)
	case c.issued(p.ID):
		if l := c.late.Load(); l != nil && l.id == p.ID && c.late.CompareAndSwap(l, nil) {
			l.x.Ended, l.x.Marked = true, false
			c.term.Marker(&l.x, p.Body)
		}
		c.dropLate(cn, p)
	default:
		c.unsolicited(p)
	}
}

// dropLate drops a packet of a request that is over. The extra packet
// SRCDS sends after a probe's mirror (or an empty one, Squad's malformed
// form) is expected and dropped silently; when it is empty, the 7 stray
// bytes Squad sends after it are skipped too.
func (c *Client) dropLate(cn *conn, p Packet) {
	if len(p.Body) == 0 {
		cn.rd.skipNext(squadTail)
		return
	}
	if isProbeTail(p.Body) {
		return
	}
	c.log.Printf("late", "rcon: %s: dropped late packet id %d type %v (%d bytes)", c.addr, p.ID, p.Type, len(p.Body))
}

// earlier returns the earlier of a and b.
func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
