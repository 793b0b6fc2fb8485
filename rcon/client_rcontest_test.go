package rcon_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/console/consoletest"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// These tests drive the client against the rcontest profiles with
// faults: pipelining over coalesced answers, events and swallowed
// commands.

func TestRcontestPipelinedCoalesced(t *testing.T) {
	t.Parallel()
	for _, f := range []rcontest.Faults{{Coalesce: true}, {Coalesce: true, Segments: []int{4093, 5, 1}}} {
		t.Run(fmt.Sprint(f.Segments), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, rcontest.SRCDS, nil, func(s *rcontest.Server) { s.Faults = f })
				c := dialOn(t, n, s, &rcon.Options{Pipeline: true})
				var wg sync.WaitGroup
				for i := range 12 {
					wg.Go(func() {
						n := 1000 * i
						if got, err := c.Exec(bounded(t), fmt.Sprint("big ", n)); err != nil || got != rcontest.BigOutput(n) {
							t.Errorf("big %d: %d bytes, %v", n, len(got), err)
						}
					})
				}
				wg.Wait()
			})
		})
	}
}

func TestRcontestSquadChatEvents(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.Squad, nil, nil)
		c := dialOn(t, n, s, &rcon.Options{Profile: "squad"})
		for i := range 3 {
			mustExec(t, c, fmt.Sprint("echo ", i), fmt.Sprint(i, "\n"))
		}
		for range 3 {
			e := consoletest.Recv(t, c.Events(), time.Second)
			if e.Kind != console.KindChat || e.Player != "Player" || e.Text != "hello from squad" || e.PlayerID != "76561198000000000" || e.Channel != "all" {
				t.Fatalf("event %+v", e)
			}
		}
	})
}

// Legacy Rust answers "say" with id -1, and precedes each answer with a
// console line, which goes to Events.
func TestRcontestRustLegacySay(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.RustLegacy, nil, nil)
		c := dialOn(t, n, s, nil)
		mustExec(t, c, "say hello", "Console: hello\n")
		mustExec(t, c, "echo x", "x\n")
		var lines []string
		for len(lines) < 2 {
			e := consoletest.Recv(t, c.Events(), time.Second)
			if e.Kind != console.KindLog {
				t.Fatalf("event %+v", e)
			}
			lines = append(lines, e.Text)
		}
		if !strings.Contains(strings.Join(lines, "|"), "say hello") {
			t.Fatalf("say's console line missing from events %q", lines)
		}
	})
}

// A command the server swallows: with the SRCDS probe the answer is
// empty (the mirror still comes); without a probe (Factorio) it times
// out. Either way the next command gets its own answer.
func TestRcontestDroppedCommand(t *testing.T) {
	t.Parallel()
	for _, p := range []rcontest.Profile{rcontest.SRCDS, rcontest.Factorio} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			bubble(t, func(t *testing.T, n *consoletest.Network) {
				s := fake(t, n, p, nil, func(s *rcontest.Server) { s.Faults.DropEvery = 2 })
				c := dialOn(t, n, s, nil)
				mustExec(t, c, "echo one", "one\n")
				ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				got, err := c.Exec(ctx, "echo two")
				if p == rcontest.SRCDS && (err != nil || got != "") || p == rcontest.Factorio && !errors.Is(err, rcon.ErrTimeout) {
					t.Fatalf("swallowed command = %q, %v", got, err)
				}
				mustExec(t, c, "echo three", "three\n")
			})
		})
	}
}

// A Minecraft command abandoned while the vanilla parser has not read it
// yet must not make the next command coalesce with it.
func TestRcontestMinecraftAfterTimeout(t *testing.T) {
	t.Parallel()
	bubble(t, func(t *testing.T, n *consoletest.Network) {
		s := fake(t, n, rcontest.Minecraft, nil, func(s *rcontest.Server) { s.Faults.Delay = 60 * time.Millisecond })
		c := dialOn(t, n, s, &rcon.Options{Dialect: rcon.DialectMinecraft})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := c.Exec(ctx, "big 9000"); !errors.Is(err, rcon.ErrTimeout) {
			t.Fatalf("err = %v", err)
		}
		for _, size := range []int{10, 9000} {
			mustExec(t, c, fmt.Sprint("big ", size), rcontest.BigOutput(size))
		}
		if s.Hangups() != 0 {
			t.Fatalf("the server closed %d connections", s.Hangups())
		}
	})
}
