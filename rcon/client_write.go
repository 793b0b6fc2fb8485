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

// queue writes req (unless its type and id are zero) and, if probeID is
// not 0, the end-of-answer marker with that id, in one Write: through
// the connection's write queue when coalescing, else at once.
func (pl *pipeline) queue(dl time.Time, cn *conn, req Packet, probeID int32) error {
	c := pl.c
	if !pl.coalesce {
		pl.wtok <- struct{}{}
		defer func() { <-pl.wtok }()
		b := pl.append(pl.wbuf[:0], cn, req, probeID)
		cn.nc.SetWriteDeadline(dl)
		_, err := cn.nc.Write(b)
		if cap(b) <= maxKeptScratch {
			pl.wbuf = b
		}
		if err != nil {
			c.fail(cn, err)
			err = c.connErr(cn)
		}
		return err
	}
	q := &cn.wq
	q.mu.Lock()
	q.buf = pl.append(q.buf, cn, req, probeID)
	if dl.After(q.deadline) {
		q.deadline = dl
	}
	if q.writing {
		// The writer sends it; a failure reaches the caller through
		// dropped.
		q.mu.Unlock()
		return nil
	}
	q.writing = true
	q.mu.Unlock()
	return pl.drain(cn, maxQueueRounds)
}

// append appends req (unless zero) and the marker with probeID (unless
// 0) to b.
func (pl *pipeline) append(b []byte, cn *conn, req Packet, probeID int32) []byte {
	if req.ID != 0 {
		b = pl.c.appendPacket(b, cn, req)
	}
	if probeID != 0 {
		b = pl.c.appendPacket(b, cn, marker(probeID, pl.c.know.traits()))
	}
	return b
}

// drain writes the queue of cn until it is empty, at most rounds Writes
// (rounds < 0: no limit) before it hands over to a new goroutine. The
// caller has set q.writing. It returns the error of the first Write,
// which holds the caller's own request.
func (pl *pipeline) drain(cn *conn, rounds int) error {
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
			go pl.drain(cn, -1)
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
			// The connection is dead and fail ends every request on it:
			// the ones still queued need not go out.
			pl.c.fail(cn, err)
			q.mu.Lock()
			q.buf = q.buf[:0]
			q.mu.Unlock()
			if n == 0 {
				own = pl.c.connErr(cn)
			}
		}
		prev = b
	}
}
