package rcon_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
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
		p, n, err := rcon.ParsePacket(rest, 0)
		if err != nil {
			w.mu.Lock()
			w.bad = fmt.Errorf("Write of %d bytes is not whole packets: %w", len(b), err)
			w.mu.Unlock()
			break
		}
		rest = rest[n:]
		shape.pkts++
		switch p.Type {
		case rcon.TypeExecCommand:
			shape.cmds++
		case rcon.TypeAuth:
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
			<-w.gate
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
	const cmds = 8
	for _, tc := range []struct {
		name     string
		opts     rcon.Options
		coalesce bool
	}{
		{"source/pipeline", rcon.Options{Pipeline: true}, true},
		{"source/serial", rcon.Options{}, false},
		{"cs2/pipeline", rcon.Options{Dialect: rcon.DialectCS2, Pipeline: true}, false},
		{"minecraft/pipeline", rcon.Options{Dialect: rcon.DialectMinecraft, Pipeline: true}, false},
		{"minecraft/serial", rcon.Options{Dialect: rcon.DialectMinecraft}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				l := n.MustListen(t, "127.0.0.1:27015")
				s := &rcon.Server{Password: pw, Dialect: tc.opts.Dialect, Handler: rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
					fmt.Fprintf(w, "echo %s", cmd)
				})}
				go s.Serve(l)
				defer s.Close()
				nc, err := n.DialContext(bounded(t), "tcp", l.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				wl := &writeLog{Conn: nc, gate: make(chan struct{}), blocked: make(chan struct{})}
				c, err := rcon.NewClient(bounded(t), wl, pw, &tc.opts)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				wg := execConcurrently(t, c, cmds, func(cmd string) string { return "echo " + cmd })
				<-wl.blocked
				// Every other command now waits: in the write queue, behind
				// its registration, or for the serial slot.
				synctest.Wait()
				if rcon.IsPipelined(c) {
					if q := rcon.QueuedCommands(c); q != cmds-1 {
						t.Errorf("%d commands queued behind the first, want %d", q, cmds-1)
					}
				}
				close(wl.gate)
				wg.Wait()

				wl.mu.Lock()
				defer wl.mu.Unlock()
				if wl.bad != nil {
					t.Fatal(wl.bad)
				}
				sent, most := 0, 0
				for _, w := range wl.writes {
					sent += w.cmds
					most = max(most, w.cmds)
					if tc.opts.Dialect == rcon.DialectMinecraft && w.pkts != 1 {
						t.Errorf("Minecraft Write with %d packets", w.pkts)
					}
				}
				if sent != cmds {
					t.Errorf("%d commands written, want %d", sent, cmds)
				}
				switch {
				case tc.coalesce && most != cmds-1:
					t.Errorf("at most %d commands in one Write, want the %d queued behind the first (writes %v)", most, cmds-1, wl.writes)
				case !tc.coalesce && most != 1:
					t.Errorf("%d commands in one Write (writes %v)", most, wl.writes)
				}
			})
		})
	}
}
