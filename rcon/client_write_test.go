package rcon

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

// writeLog is the client's end of a connection that records the
// packets of every Write and holds the first Write of a command until
// gate is closed, so that other commands pile up behind it.
type writeLog struct {
	net.Conn
	gate    chan struct{}
	blocked chan struct{} // closed when the first command Write waits at gate

	mu     sync.Mutex
	writes []writeShape // one per Write carrying a command or a probe
	bad    error        // a Write that was not whole packets
}

// writeShape is what one Write carried.
type writeShape struct{ cmds, pkts int }

func (w *writeLog) Write(b []byte) (int, error) {
	var shape writeShape
	var login bool
	for rest := b; len(rest) > 0; {
		p, n, err := ParsePacket(rest, 0)
		if err != nil {
			w.mu.Lock()
			w.bad = fmt.Errorf("Write of %d bytes is not whole packets: %w", len(b), err)
			w.mu.Unlock()
			break
		}
		rest = rest[n:]
		shape.pkts++
		switch p.Type {
		case TypeExecCommand:
			shape.cmds++
		case TypeAuth:
			login = true
		}
	}
	if !login {
		w.mu.Lock()
		w.writes = append(w.writes, shape)
		first := len(w.writes) == 1
		w.mu.Unlock()
		if first {
			close(w.blocked)
			select {
			case <-w.gate:
			case <-time.After(10 * time.Second):
			}
		}
	}
	return w.Conn.Write(b)
}

// Pipelined Source commands queued while a Write is in flight go out
// together in the next Write; serial clients, CS2 and Minecraft (whose
// server drops the connection on coalesced packets) write each request
// on its own.
func TestWriteCoalescing(t *testing.T) {
	t.Parallel()
	const n = 8
	for _, tc := range []struct {
		name     string
		opts     Options
		coalesce bool
	}{
		{"source/pipeline", Options{Pipeline: true}, true},
		{"source/serial", Options{}, false},
		{"cs2/pipeline", Options{Dialect: DialectCS2, Pipeline: true}, false},
		{"minecraft/pipeline", Options{Dialect: DialectMinecraft, Pipeline: true}, false},
		{"minecraft/serial", Options{Dialect: DialectMinecraft}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr := serveOurs(t, tc.opts.Dialect, func(_ context.Context, w ResponseWriter, cmd string) {
				fmt.Fprintf(w, "echo %s", cmd)
			})
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			wl := &writeLog{Conn: nc, gate: make(chan struct{}), blocked: make(chan struct{})}
			c, err := NewClient(testCtx(t), wl, "pw", &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			wg := execConcurrently(t, c, n, func(cmd string) string { return "echo " + cmd })
			select {
			case <-wl.blocked:
			case <-time.After(10 * time.Second):
				t.Fatal("no command was written")
			}
			waitQueued(t, c, n-1)
			close(wl.gate)
			wg.Wait()

			wl.mu.Lock()
			defer wl.mu.Unlock()
			if wl.bad != nil {
				t.Fatal(wl.bad)
			}
			cmds, most := 0, 0
			for _, s := range wl.writes {
				cmds += s.cmds
				most = max(most, s.cmds)
				if tc.opts.Dialect == DialectMinecraft && s.pkts != 1 {
					t.Errorf("Minecraft Write with %d packets", s.pkts)
				}
			}
			if cmds != n {
				t.Errorf("%d commands written, want %d", cmds, n)
			}
			switch {
			case tc.coalesce && most != n-1:
				t.Errorf("at most %d commands in one Write, want the %d queued behind the first (writes %v)", most, n-1, wl.writes)
			case !tc.coalesce && most != 1:
				t.Errorf("%d commands in one Write (writes %v)", most, wl.writes)
			}
		})
	}
}

// waitQueued waits until k commands wait behind the Write in flight:
// queued for a shared Write when coalescing, registered when
// pipelining, and briefly otherwise (the others wait for the serial
// slot, where nothing can be observed).
func waitQueued(t *testing.T, c *Client, k int) {
	t.Helper()
	if !c.pipeline {
		time.Sleep(20 * time.Millisecond)
		return
	}
	for range 1000 {
		c.mu.Lock()
		cn, calls := c.cn, len(c.calls)
		c.mu.Unlock()
		queued := calls/2 - 1
		if c.coalesce {
			cn.wq.mu.Lock()
			queued = 0
			for b := cn.wq.buf; len(b) > 0; {
				p, m, err := ParsePacket(b, 0)
				if err != nil {
					t.Fatal(err)
				}
				if p.Type == TypeExecCommand {
					queued++
				}
				b = b[m:]
			}
			cn.wq.mu.Unlock()
		}
		if queued == k {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%d commands never queued", k)
}
