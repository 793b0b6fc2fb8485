package rcon_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// These tests drive the client against the rcontest profile servers,
// complementing rcontest's own client tests with client-side features:
// pipelining over coalesced answers, events and abandoned commands.

func startProfile(t *testing.T, p rcontest.Profile, f rcontest.Faults) *rcontest.Server {
	t.Helper()
	s := rcontest.NewUnstartedServer(p, "pw", nil)
	s.Faults = f
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func dialProfile(t *testing.T, s *rcontest.Server, opts rcon.Options) *rcon.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rcon.Dial(ctx, s.Addr().String(), "pw", &opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestRcontestPipelinedCoalesced(t *testing.T) {
	t.Parallel()
	for _, f := range []rcontest.Faults{{Coalesce: true}, {Coalesce: true, Segments: []int{4093, 5, 1}}} {
		t.Run(fmt.Sprint(f.Segments), func(t *testing.T) {
			t.Parallel()
			s := startProfile(t, rcontest.SRCDS, f)
			c := dialProfile(t, s, rcon.Options{Pipeline: true})
			var wg sync.WaitGroup
			for i := range 12 {
				wg.Go(func() {
					n := 1000 * i
					got, err := c.Exec(bounded(t), fmt.Sprint("big ", n))
					if err != nil || got != rcontest.BigOutput(n) {
						t.Errorf("big %d: %d bytes, %v", n, len(got), err)
					}
				})
			}
			wg.Wait()
		})
	}
}

func TestRcontestSquadChatEvents(t *testing.T) {
	t.Parallel()
	s := startProfile(t, rcontest.Squad, rcontest.Faults{})
	c := dialProfile(t, s, rcon.Options{Profile: "squad"})
	for i := range 3 {
		if got, err := c.Exec(bounded(t), fmt.Sprint("echo ", i)); err != nil || got != fmt.Sprint(i, "\n") {
			t.Fatalf("Exec = %q, %v", got, err)
		}
	}
	for range 3 {
		select {
		case ev := <-c.Events():
			if ev.Type != rcon.TypeChatValue || len(ev.Body) == 0 {
				t.Fatalf("event %+v", ev)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("missing chat event")
		}
	}
}

// Legacy Rust answers "say" with id -1, and precedes each answer with a
// console line, which goes to Events.
func TestRcontestRustLegacySay(t *testing.T) {
	t.Parallel()
	s := startProfile(t, rcontest.RustLegacy, rcontest.Faults{})
	c := dialProfile(t, s, rcon.Options{})
	if got, err := c.Exec(bounded(t), "say hello"); err != nil || got != "Console: hello\n" {
		t.Fatalf("say = %q, %v", got, err)
	}
	if got, err := c.Exec(bounded(t), "echo x"); err != nil || got != "x\n" {
		t.Fatalf("echo = %q, %v", got, err)
	}
	var lines []string
	for len(lines) < 2 {
		select {
		case ev := <-c.Events():
			if ev.Type != rcon.TypeRustConsole {
				t.Fatalf("event %+v", ev)
			}
			lines = append(lines, string(ev.Body))
		case <-time.After(10 * time.Second):
			t.Fatalf("events so far: %q", lines)
		}
	}
	if !strings.Contains(strings.Join(lines, "|"), "say hello") {
		t.Fatalf("say's console line missing from events %q", lines)
	}
}

// A command the server swallows: with the SRCDS probe the answer is
// empty (the mirror still comes); without a probe (Factorio) it times
// out. Either way the next command gets its own answer.
func TestRcontestDroppedCommand(t *testing.T) {
	t.Parallel()
	for _, p := range []rcontest.Profile{rcontest.SRCDS, rcontest.Factorio} {
		t.Run(p.String(), func(t *testing.T) {
			t.Parallel()
			s := startProfile(t, p, rcontest.Faults{DropEvery: 2})
			c := dialProfile(t, s, rcon.Options{})
			if got, err := c.Exec(bounded(t), "echo one"); err != nil || got != "one\n" {
				t.Fatalf("first = %q, %v", got, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			got, err := c.Exec(ctx, "echo two")
			if p == rcontest.SRCDS && (err != nil || got != "") || p == rcontest.Factorio && !errors.Is(err, rcon.ErrTimeout) {
				t.Fatalf("swallowed command = %q, %v", got, err)
			}
			if got, err := c.Exec(bounded(t), "echo three"); err != nil || got != "three\n" {
				t.Fatalf("third = %q, %v", got, err)
			}
		})
	}
}

// A Minecraft command abandoned while the vanilla parser has not read it
// yet must not make the next command coalesce with it.
func TestRcontestMinecraftAfterTimeout(t *testing.T) {
	t.Parallel()
	s := startProfile(t, rcontest.Minecraft, rcontest.Faults{Delay: 60 * time.Millisecond})
	c := dialProfile(t, s, rcon.Options{Dialect: rcon.DialectMinecraft})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Exec(ctx, "big 9000"); !errors.Is(err, rcon.ErrTimeout) {
		t.Fatalf("err = %v", err)
	}
	for _, n := range []int{10, 9000} {
		if got, err := c.Exec(bounded(t), fmt.Sprint("big ", n)); err != nil || got != rcontest.BigOutput(n) {
			t.Fatalf("big %d: %d bytes, %v", n, len(got), err)
		}
	}
	if s.Hangups() != 0 {
		t.Fatalf("server closed %d connections", s.Hangups())
	}
}
