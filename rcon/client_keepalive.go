package rcon

import (
	"context"
	"errors"
	"time"
)

// keepAlive sends an end-of-answer probe on cn whenever no command has
// used the client for Options.KeepAlive, until cn fails.
func (c *Client) keepAlive(cn *conn) {
	defer c.readers.Done()
	every := c.opts.KeepAlive
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-cn.dead:
			return
		case <-t.C:
		}
		if idle := time.Since(time.Unix(0, c.lastUsed.Load())); idle < every {
			t.Reset(every - idle)
			continue
		}
		c.probeIdle(cn)
		t.Reset(every)
	}
}

// errKeepAlive is why a connection whose keep-alive went unanswered is
// dropped.
var errKeepAlive = errors.New("keep-alive probe unanswered")

// probeIdle writes one probe on cn, unless a command is running, and on a
// server known to answer probes waits for the reply: without one within
// max(KeepAlive, the probe wait), the connection counts as lost. Servers
// whose replies carry fixed ids get a probe only when they are known to
// answer it, since an unread reply would be taken for the next answer;
// legacy Rust ignores probes, and so only learns of a dead peer through
// a failed write.
func (c *Client) probeIdle(cn *conn) {
	if c.pipeline {
		cl, err := c.register(cn)
		if err == nil {
			_ = c.queue(time.Now().Add(c.opts.Timeout), cl, Packet{}, true)
			c.retire(cl)
		}
		return
	}
	t := c.learned()
	answered := t.probe == yes || t.dialect == DialectMinecraft
	if len(t.fixedIDs) > 0 && !answered {
		return
	}
	wait := max(c.opts.KeepAlive, c.probeWait())
	dl := time.Now().Add(min(wait, c.opts.Timeout))
	// Take the slot from the idle reader, not from a command.
	if _, err := c.acquire(backgroundCtx, dl); err != nil {
		return
	}
	defer func() { c.release(time.Now()) }()
	if c.cur.Load() != cn || time.Since(time.Unix(0, c.lastUsed.Load())) < c.opts.KeepAlive {
		return // replaced, or a command ran meanwhile
	}
	id := c.newID()
	if err := c.send(cn, dl, c.markerFor(id)); err != nil || !answered {
		return
	}
	for {
		p, err := cn.readBy(dl)
		switch {
		case err == nil && (p.ID == id || (t.acceptsID(p.ID) && isProbeTail(p.Body))):
			if p.ID == id && cn.rd.wholePacketBuffered() { // SRCDS's extra packet
				if q, err := cn.rd.next(); err == nil {
					c.foreign(cn, q)
				}
			}
			return
		case err == nil:
			if !t.acceptsID(p.ID) {
				c.foreign(cn, p)
			}
		case !isTimeoutErr(err):
			c.fail(cn, err)
			return
		case !time.Now().Before(dl):
			c.note(cn, "no reply to the keep-alive probe within %v: connection lost", wait)
			c.fail(cn, errKeepAlive)
			return
		}
	}
}

// backgroundCtx is the context of the client's own waits.
var backgroundCtx = context.Background()
