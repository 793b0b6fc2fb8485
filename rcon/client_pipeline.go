package rcon

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Pipelined mode (Options.Pipeline): several commands in flight on one
// connection, each written with its probe, a reader goroutine routing
// packets to them by id.

// call is one pipelined request in flight.
type call struct {
	cn      *conn
	id      int32
	probeID int32
	notify  chan struct{}

	mu       sync.Mutex
	out      []byte
	packets  int
	first    time.Time // when the first packet came
	done     bool
	err      error
	needProb bool // the Terminator asked for a probe mid-answer
	single   bool // the answer is one packet
}

// execPipelined runs cmd as a pipelined request.
func (c *Client) execPipelined(ctx context.Context, dl time.Time, cmd string, x *exchange) error {
	if c.inflight != nil {
		if err := c.wait(ctx, dl, c.inflight); err != nil {
			return err
		}
		defer func() { <-c.inflight }()
	}
	cn, err := c.connection(ctx, dl)
	if err != nil {
		return err
	}
	cl, err := c.register(cn)
	if err != nil {
		return err
	}
	defer c.retire(cl)
	term := c.opts.Terminator
	var probe bool
	if term == nil {
		t := c.learned()
		cl.single = t.single || t.probe == no
		probe = !cl.single
	} else {
		probe = term.Start() == StepProbe
	}
	sent := time.Now()
	if err := c.queue(dl, cl, Packet{ID: cl.id, Type: TypeExecCommand, Body: []byte(cmd)}, probe); err != nil {
		return err
	}
	probed := probe
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		cl.mu.Lock()
		done, err, need := cl.done, cl.err, cl.needProb
		cl.needProb = false
		cl.mu.Unlock()
		if done || err != nil {
			cl.mu.Lock()
			x.out, x.packets = cl.out, cl.packets
			if cl.packets > 0 {
				x.rtt = cl.first.Sub(sent)
			}
			cl.mu.Unlock()
			return err
		}
		if need && !probed {
			probed = true
			if err := c.queue(dl, cl, Packet{}, true); err != nil {
				return err
			}
		}
		if timer == nil {
			timer = time.NewTimer(time.Until(dl))
		}
		select {
		case <-cl.notify:
		case <-ctx.Done():
			return c.ctxErr(ctx, dl)
		case <-timer.C:
			cl.mu.Lock()
			x.out, x.packets = cl.out, cl.packets
			cl.mu.Unlock()
			return c.deadlineErr(ctx, dl, "", x)
		}
	}
}

// register allocates the ids of a new request on cn. It fails if cn
// died since it was picked, as fail would not see the request.
func (c *Client) register(cn *conn) (*call, error) {
	cl := &call{cn: cn, id: c.newID(), probeID: c.newID(), notify: make(chan struct{}, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cn.err != nil {
		return nil, cn.err
	}
	c.calls[cl.id] = cl
	c.calls[cl.probeID] = cl
	return cl, nil
}

// retire forgets cl; its ids count as finished from now on.
func (c *Client) retire(cl *call) {
	c.mu.Lock()
	delete(c.calls, cl.id)
	delete(c.calls, cl.probeID)
	c.mu.Unlock()
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

// readLoop routes the packets of a pipelined connection until it fails.
// The requests that got packets are woken once no whole packet is left
// in the buffer, so that each wakes once for all its packets of one
// read.
func (c *Client) readLoop(cn *conn) {
	defer c.readers.Done()
	for {
		p, err := cn.rd.next()
		if err != nil {
			c.fail(cn, err)
			return
		}
		if cl := c.route(cn, p); cl != nil && !slices.Contains(cn.woken, cl) {
			cn.woken = append(cn.woken, cl)
		}
		if !cn.rd.wholePacketBuffered() || len(cn.woken) >= maxDeferredWakes {
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
func (c *Client) route(cn *conn, p Packet) *call {
	if p.Type == TypeChatValue || p.Type == TypeRustConsole {
		c.unsolicited(cn, p)
		return nil
	}
	c.mu.Lock()
	cl := c.calls[p.ID]
	if cl != nil && p.ID == cl.probeID {
		// Only the first reply to the probe ends the answer; SRCDS's
		// extra packet that follows is a late packet.
		delete(c.calls, p.ID)
	}
	c.mu.Unlock()
	if cl == nil {
		c.foreign(cn, p)
		return nil
	}
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.done {
		return nil
	}
	if p.ID == cl.probeID {
		cl.done = true
		return cl
	}
	if cl.packets == 0 {
		cl.first = time.Now()
	}
	cl.packets++
	if len(cl.out)+len(p.Body) > c.opts.MaxResponseSize {
		cl.err = fmt.Errorf("%w: more than %d bytes", ErrResponseTooLarge, c.opts.MaxResponseSize)
		cl.done = true
		go c.fail(cn, cl.err) // fail locks cl.mu, held here
		return cl
	}
	cl.out = appendCapped(cl.out, p.Body, c.opts.MaxResponseSize)
	cl.done = cl.single
	if term := c.opts.Terminator; term != nil {
		switch term.Packet(cl.packets-1, p.Body) {
		case StepDone:
			cl.done = cl.done || term.Start() != StepProbe
		case StepProbe:
			cl.needProb = true
		}
	}
	return cl
}
