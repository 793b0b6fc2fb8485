package rcon

import (
	"context"
	"sync"
	"time"
)

// maxQueueRounds bounds how many Writes a command's goroutine makes for
// the requests of others before it hands the queue to a new goroutine,
// so that its own answer is not kept waiting under a steady stream of
// commands.
const maxQueueRounds = 4

// writeQueue combines the requests of a pipelined Source connection
// into as few Writes as possible: the goroutine that finds no Write in
// flight writes its request at once; requests queued meanwhile go out
// together in the next Write, and so on until the queue is empty (flat
// combining). A request is never split across Writes. Minecraft never
// gets here: its server drops the connection when two packets arrive in
// one read (field notes §1.2), and serial clients keep one request per
// Write.
type writeQueue struct {
	mu       sync.Mutex
	buf      []byte    // requests waiting for the Write in flight
	deadline time.Time // the latest deadline among them
	spare    []byte    // the last Write's buffer, for reuse
	writing  bool      // a goroutine is writing (or will write) buf
}

// send writes the request of cl: the command, unless cmd is empty, then
// the probe if probe is set, in one Write. A failed Write leaves the
// stream in an unknown state, so the connection is dropped.
func (c *Client) send(ctx context.Context, cl *call, cmd string, probe bool) error {
	if c.coalesce {
		return c.queue(ctx, cl, cmd, probe)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = c.appendRequest(c.wbuf[:0], cl, cmd, probe)
	dl, _ := ctx.Deadline()
	err := c.writeTo(cl.cn, dl, c.wbuf)
	if cap(c.wbuf) > maxKeptScratch {
		c.wbuf = nil
	}
	return c.writeErr(ctx, cl.cn, err)
}

// appendRequest appends the wire form of cl's request to b.
func (c *Client) appendRequest(b []byte, cl *call, cmd string, probe bool) []byte {
	if cmd != "" {
		b = c.appendPacket(b, Packet{ID: cl.id, Type: TypeExecCommand, Body: []byte(cmd)})
	}
	if probe {
		b = c.appendPacket(b, cl.probe())
	}
	return b
}

// appendPacket appends p to b, showing it to Options.Debug.
func (c *Client) appendPacket(b []byte, p Packet) []byte {
	n := len(b)
	b, _ = p.AppendBinary(b)
	if c.opts.Debug != nil {
		c.opts.Debug("send", b[n:])
	}
	return b
}

// queue adds the request of cl to its connection's write queue and, if
// no Write is in flight, writes the queue.
func (c *Client) queue(ctx context.Context, cl *call, cmd string, probe bool) error {
	q := &cl.cn.wq
	q.mu.Lock()
	q.buf = c.appendRequest(q.buf, cl, cmd, probe)
	if dl, ok := ctx.Deadline(); ok && dl.After(q.deadline) {
		q.deadline = dl
	}
	if q.writing {
		// The writer sends it; a failure reaches cl through c.fail.
		q.mu.Unlock()
		return nil
	}
	q.writing = true
	q.mu.Unlock()
	return c.writeErr(ctx, cl.cn, c.drain(cl.cn, maxQueueRounds))
}

// drain writes the queue of cn until it is empty, at most rounds Writes
// (rounds < 0: no limit) before it hands over to a new goroutine. The
// caller has set q.writing. It returns the error of the first Write,
// which holds the caller's own request.
func (c *Client) drain(cn *conn, rounds int) error {
	q := &cn.wq
	var own error
	var prev []byte // the buffer just written
	for n := 0; ; n++ {
		q.mu.Lock()
		if cap(prev) <= maxKeptScratch {
			q.spare = prev[:0]
		}
		if n == rounds && len(q.buf) > 0 {
			q.mu.Unlock()
			go c.drain(cn, -1)
			return own
		}
		if len(q.buf) == 0 {
			q.writing = false
			q.mu.Unlock()
			return own
		}
		b, dl := q.buf, q.deadline
		q.buf, q.spare, q.deadline = q.spare, nil, time.Time{}
		q.mu.Unlock()

		if err := c.writeTo(cn, dl, b); err != nil {
			// The connection is dead and c.fail has ended every
			// request on it: the ones still queued need not go out.
			q.mu.Lock()
			q.buf = q.buf[:0]
			q.mu.Unlock()
			if n == 0 {
				own = err
			}
		}
		prev = b
	}
}

// writeTo writes b to cn with the write deadline dl (zero: none) and
// drops the connection if that fails.
func (c *Client) writeTo(cn *conn, dl time.Time, b []byte) error {
	cn.nc.SetWriteDeadline(dl)
	_, err := cn.nc.Write(b)
	if err != nil {
		c.fail(cn, err)
	}
	return err
}

// writeErr turns the error of a Write for a request bounded by ctx into
// the error its command returns.
func (c *Client) writeErr(ctx context.Context, cn *conn, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctxErr(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return cn.err
}
