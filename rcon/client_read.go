package rcon

import (
	"context"
	"sync"
	"time"
)

// On a serial connection a command reads its own answer from the socket,
// in its own goroutine: handing each packet over from a reader goroutine
// costs a wake-up per command, which is most of a loopback round trip.
// Between commands someone must still read, to pass unsolicited packets
// to Events and to notice a dropped connection, so a connection left
// idle for idleReadDelay is read by its idleReader goroutine until a
// command wants it back. The right to read goes with a token; a command
// that finds the idle reader holding it sets a past read deadline to
// interrupt it. Reader resumes an interrupted read, so no packet is lost
// wherever the interruption lands.

// idleReadDelay is how long a serial connection goes unread after a
// command before its idleReader takes over. Commands sent back to back
// never wait for the hand-over.
const idleReadDelay = time.Millisecond

// pastDeadline interrupts a blocked read at once.
var pastDeadline = time.Unix(1, 0)

// readTurn decides who reads a serial connection.
type readTurn struct {
	token chan struct{} // holds a value while nobody reads
	idle  *time.Timer   // fires idleReadDelay after the last command

	mu      sync.Mutex
	idling  bool // the idleReader is reading
	waiting int  // commands waiting for the token
}

func (t *readTurn) init() {
	t.token = make(chan struct{}, 1)
	t.token <- struct{}{}
	t.idle = time.NewTimer(idleReadDelay)
}

// idleReader reads cn whenever it is idle, until it fails.
func (c *Client) idleReader(cn *conn) {
	defer c.readers.Done()
	t := &cn.turn
	for {
		select {
		case <-t.idle.C:
		case <-cn.dead:
			t.idle.Stop()
			return
		}
		select {
		case <-t.token:
		default:
			continue // a command is reading; it re-arms the timer when done
		}
		err := c.readIdle(cn)
		t.token <- struct{}{}
		if err != nil {
			c.fail(cn, err)
			return
		}
	}
}

// readIdle reads and routes packets until a command wants to read. It
// returns the error that ended the connection, if that is what ended it.
func (c *Client) readIdle(cn *conn) error {
	t := &cn.turn
	t.mu.Lock()
	if t.waiting > 0 {
		t.mu.Unlock()
		return nil
	}
	cn.nc.SetReadDeadline(time.Time{})
	t.idling = true
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.idling = false
		t.mu.Unlock()
	}()
	for {
		p, err := cn.rd.ReadPacket()
		if err != nil && !isTimeoutErr(err) {
			return err
		}
		if err == nil {
			if cl := c.route(cn, p); cl != nil {
				cl.wake()
			}
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

// takeTurn gets the right to read cn, interrupting the idleReader if it
// has it.
func (c *Client) takeTurn(ctx context.Context, cn *conn) error {
	t := &cn.turn
	select {
	case <-t.token:
		return nil
	default:
	}
	t.mu.Lock()
	t.waiting++
	if t.idling {
		cn.nc.SetReadDeadline(pastDeadline)
	}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		t.waiting--
		t.mu.Unlock()
	}()
	select {
	case <-t.token:
		return nil
	case <-ctx.Done():
		return ctxErr(ctx)
	case <-cn.dead:
		c.mu.Lock()
		defer c.mu.Unlock()
		return cn.err
	}
}

// endTurn gives the right to read cn back and re-arms the idle timer.
func (c *Client) endTurn(cn *conn) {
	cn.turn.token <- struct{}{}
	cn.turn.idle.Reset(idleReadDelay)
}

// readFor reads and routes packets of cn until cl has packets or an
// error, or until silence (when > 0) passes with nothing read. It
// reports whether the silence passed. The caller has the turn to read.
func (c *Client) readFor(ctx context.Context, cl *call, silence time.Duration) (silent bool, err error) {
	cn := cl.cn
	end, _ := ctx.Deadline() // withTimeout always sets one
	var quiet time.Time
	if silence > 0 {
		quiet = time.Now().Add(silence)
	}
	dl := end
	if !quiet.IsZero() && quiet.Before(end) {
		dl = quiet
	}
	cn.nc.SetReadDeadline(dl)
	for !cl.ready() {
		p, err := cn.rd.ReadPacket()
		if err == nil {
			c.route(cn, p)
			continue
		}
		if !isTimeoutErr(err) {
			c.fail(cn, err)
			c.mu.Lock()
			defer c.mu.Unlock()
			return false, cn.err
		}
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return false, ctxErr(ctx)
		case !now.Before(end):
			return false, deadlineErr()
		case !quiet.IsZero() && !now.Before(quiet):
			return true, nil
		}
		// A deadline left by an earlier command's cancellation hook.
		cn.nc.SetReadDeadline(dl)
	}
	return false, nil
}
