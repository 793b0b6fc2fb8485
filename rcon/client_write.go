package rcon

import (
	"sync"
	"time"
)

// maxQueueRounds bounds how many Writes a command's goroutine makes for
// the requests of others before it hands the queue to a new goroutine,
// so that its own answer is not kept waiting under a steady stream of
// commands.
const maxQueueRounds = 4

// writeQueue combines the requests of a pipelined connection into as few
// Writes as possible: the goroutine that finds no Write in flight writes
// its request at once; requests queued meanwhile go out together in the
// next Write, and so on until the queue is empty (flat combining). A
// request is never split across Writes.
type writeQueue struct {
	mu       sync.Mutex
	buf      []byte    // requests waiting for the Write in flight
	deadline time.Time // the latest deadline among them
	spare    []byte    // the last Write's buffer, for reuse
	writing  bool      // a goroutine is writing (or will write) buf
}

// queue adds req (unless its type and id are zero) and, if probe is set,
// cl's probe to the connection's write queue and, if no Write is in
// flight, writes the queue.
func (c *Client) queue(dl time.Time, cl *call, req Packet, probe bool) error {
	if !c.coalesce {
		c.wmu.Lock()
		defer c.wmu.Unlock()
		b := c.wbuf[:0]
		if req.ID != 0 {
			b = c.appendPacket(b, cl.cn, req)
		}
		if probe {
			b = c.appendPacket(b, cl.cn, c.markerFor(cl.probeID))
		}
		cl.cn.nc.SetWriteDeadline(dl)
		_, err := cl.cn.nc.Write(b)
		if cap(b) <= maxKeptScratch {
			c.wbuf = b
		}
		if err != nil {
			c.fail(cl.cn, err)
			c.mu.Lock()
			err = cl.cn.err
			c.mu.Unlock()
		}
		return err
	}
	q := &cl.cn.wq
	q.mu.Lock()
	if req.ID != 0 {
		q.buf = c.appendPacket(q.buf, cl.cn, req)
	}
	if probe {
		q.buf = c.appendPacket(q.buf, cl.cn, c.markerFor(cl.probeID))
	}
	if dl.After(q.deadline) {
		q.deadline = dl
	}
	if q.writing {
		// The writer sends it; a failure reaches cl through c.fail.
		q.mu.Unlock()
		return nil
	}
	q.writing = true
	q.mu.Unlock()
	return c.drain(cl.cn, maxQueueRounds)
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

		cn.nc.SetWriteDeadline(dl)
		if _, err := cn.nc.Write(b); err != nil {
			// The connection is dead and c.fail ends every request on
			// it: the ones still queued need not go out.
			c.fail(cn, err)
			q.mu.Lock()
			q.buf = q.buf[:0]
			q.mu.Unlock()
			if n == 0 {
				c.mu.Lock()
				own = cn.err
				c.mu.Unlock()
			}
		}
		prev = b
	}
}
