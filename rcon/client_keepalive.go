package rcon

import (
	"context"
	"time"
)

// keepAlive sends a probe on cn whenever no command has used the client
// for Options.KeepAlive, until cn fails. Profiles whose replies carry
// foreign ids get no keep-alive: its reply could not be told from the
// next command's.
func (c *Client) keepAlive(cn *conn) {
	defer c.readers.Done()
	if len(c.prof.anyIDs) > 0 {
		return
	}
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

// probeIdle writes one empty RESPONSE_VALUE probe on cn, unless a command
// is running. Its reply is dropped as a late packet; on Minecraft, whose
// server must not get two packets back to back, the next command first
// waits for it (see settle).
func (c *Client) probeIdle(cn *conn) {
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.Timeout)
	defer cancel()
	if !c.pipeline {
		select {
		case c.slot <- struct{}{}:
		default:
			return // a command is running: the connection is not idle
		}
		defer func() { <-c.slot }()
		c.settle(ctx)
	}
	cl, err := c.register(cn)
	if err != nil {
		return
	}
	if err := c.send(ctx, cl, "", true); err != nil {
		c.retire(cl, nil)
		return // send dropped the connection; the next command reconnects
	}
	if !c.opts.Dialect.backToBack() {
		c.mu.Lock()
		c.abandoned = cl
		c.mu.Unlock()
		return
	}
	c.retire(cl, nil)
}
