package rconbench

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	gorcon "github.com/gorcon/rcon"

	"github.com/gsq-project/gsq/bench/internal/gomc"
	"github.com/gsq-project/gsq/rcon"
)

// sideBySideBatch is how many round trips each client makes in turn.
// Clients take turns batch by batch on the same server, so a swing in
// the machine's load hits them all alike, and the ratios hold even when
// the absolute figures move.
const sideBySideBatch = 200

// contender is one client in a side-by-side: exec runs "echo x" once.
type contender struct {
	name string
	exec func() error
	rt   int
	took time.Duration
}

// sideBySide runs the contenders in turns, batch by batch, and reports
// each one's round trips per second and its ratio to the first.
func sideBySide(b *testing.B, cs []*contender) {
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cs {
			start := time.Now()
			for range sideBySideBatch {
				if err := c.exec(); err != nil {
					b.Fatalf("%s: %v", c.name, err)
				}
			}
			c.took += time.Since(start)
			c.rt += sideBySideBatch
		}
	}
	rate := func(c *contender) float64 { return float64(c.rt) / c.took.Seconds() }
	for _, c := range cs {
		b.ReportMetric(rate(c), c.name+"-rt/s")
		if c != cs[0] {
			b.ReportMetric(rate(c)/rate(cs[0]), c.name+"/"+cs[0].name)
		}
	}
}

// gsqContender is our client with the given options (nil: zero Options).
func gsqContender(b *testing.B, name, addr string, opts *rcon.Options) *contender {
	c := dial(b, addr, opts)
	ctx := context.Background()
	return &contender{name: name, exec: func() error {
		out, err := c.Exec(ctx, "echo x")
		if err == nil && out != "x\n" {
			err = fmt.Errorf("got %q", out)
		}
		return err
	}}
}

func gorconContender(b *testing.B, addr string) *contender {
	c, err := gorcon.Dial(addr, password, gorcon.SetDeadline(10*time.Second))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &contender{name: "gorcon", exec: func() error {
		out, err := c.Execute("echo x")
		if err == nil && out != "x\n" {
			err = fmt.Errorf("got %q", out)
		}
		return err
	}}
}

func leanContender(b *testing.B, name, addr string, probe bool) *contender {
	c, err := dialLean(addr, password, "echo x", probe)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return &contender{name: name, exec: func() error {
		out, err := c.exec()
		if err == nil && out != "x\n" {
			err = fmt.Errorf("got %q", out)
		}
		return err
	}}
}

// BenchmarkSideBySide measures serial round trips ("echo x", answered
// "x\n") of several clients taking turns on one server:
//
//   - source: our Server on the Source dialect (SRCDS behaviour). lean
//     is the reference that only frames, writes and reads one packet;
//     lean-probe adds Valve's end-of-answer probe in the same Write; gsq
//     is our client with zero Options; gorcon is gorcon/rcon v1.4.0.
//   - minecraft: go-mc v1.20.2's ListenRCON with an echo handler. gsq
//     is our client on the Minecraft dialect.
func BenchmarkSideBySide(b *testing.B) {
	b.Run("source", func(b *testing.B) {
		addr := startServer(b, rcon.DialectSource)
		sideBySide(b, []*contender{
			leanContender(b, "lean", addr, false),
			leanContender(b, "lean-probe", addr, true),
			gsqContender(b, "gsq", addr, nil),
			gorconContender(b, addr),
		})
	})
	b.Run("minecraft", func(b *testing.B) {
		addr := startGoMC(b)
		sideBySide(b, []*contender{
			gorconContender(b, addr),
			gsqContender(b, "gsq", addr, &rcon.Options{Dialect: rcon.DialectMinecraft}),
			leanContender(b, "lean", addr, false),
		})
	})
}

// startGoMC runs go-mc's RCON server with an echo handler and returns
// its address. go-mc answers each command with one packet, whatever its
// length.
func startGoMC(b *testing.B) string {
	return gomc.Serve(b, password, 0, func(cmd string) string { return strings.TrimPrefix(cmd, "echo ") + "\n" })
}
