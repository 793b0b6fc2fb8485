package rconbench

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	gorcon "github.com/gorcon/rcon"
	gorcontest "github.com/gorcon/rcon/rcontest"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

const password = "bench-pw"

// startServer runs our server on loopback and returns its address.
func startServer(b testing.TB, d rcon.Dialect) string {
	b.Helper()
	s := &rcon.Server{Password: password, Handler: &rcontest.SimHandler{}, Dialect: d, MaxConnsPerAddr: -1}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go s.Serve(l)
	b.Cleanup(func() { s.Close() })
	return l.Addr().String()
}

func dial(b testing.TB, addr string, opts *rcon.Options) *rcon.Client {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rcon.Dial(ctx, addr, password, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func reportRate(b *testing.B, unit string) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), unit)
}

// BenchmarkSerial measures serial command round trips (one command in
// flight), "echo x" answered "x\n".
func BenchmarkSerial(b *testing.B) {
	ctx := context.Background()
	ours := func(b *testing.B, d rcon.Dialect) {
		c := dial(b, startServer(b, d), &rcon.Options{Dialect: d})
		b.ReportAllocs()
		for b.Loop() {
			if out, err := c.Exec(ctx, "echo x"); err != nil || out != "x\n" {
				b.Fatalf("%q, %v", out, err)
			}
		}
		reportRate(b, "rt/s")
	}
	// Source: command + probe, answer + mirror + extra packet.
	b.Run("client=ours/server=ours/source", func(b *testing.B) { ours(b, rcon.DialectSource) })
	// CS2: one packet each way, like gorcon.
	b.Run("client=ours/server=ours/cs2", func(b *testing.B) { ours(b, rcon.DialectCS2) })
	gorconClient := func(b *testing.B, addr string) {
		c, err := gorcon.Dial(addr, password)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ReportAllocs()
		for b.Loop() {
			if out, err := c.Execute("echo x"); err != nil || out != "x\n" {
				b.Fatalf("%q, %v", out, err)
			}
		}
		reportRate(b, "rt/s")
	}
	b.Run("client=gorcon/server=ours/source", func(b *testing.B) { gorconClient(b, startServer(b, rcon.DialectSource)) })
	b.Run("client=gorcon/server=gorcon", func(b *testing.B) { gorconClient(b, startGorcon(b, false)) })
	// Our client alone, against gorcon's server (one packet each way).
	b.Run("client=ours/server=gorcon/cs2", func(b *testing.B) {
		c := dial(b, startGorcon(b, true), &rcon.Options{Dialect: rcon.DialectCS2})
		b.ReportAllocs()
		for b.Loop() {
			if out, err := c.Exec(ctx, "echo x"); err != nil || out != "x\n" {
				b.Fatalf("%q, %v", out, err)
			}
		}
		reportRate(b, "rt/s")
	})
}

// startGorcon runs gorcon's rcontest server answering "echo X" with
// "X\n" and returns its address. Its own login handler answers id 0
// whatever the request's id, which our client rightly refuses (see
// rcon/interop_server_test.go); echoAuthID replaces it with one that
// echoes the id, as the spec says.
func startGorcon(b *testing.B, echoAuthID bool) string {
	opts := []gorcontest.Option{
		gorcontest.SetSettings(gorcontest.Settings{Password: password}),
		gorcontest.SetCommandHandler(func(c *gorcontest.Context) {
			out := strings.TrimPrefix(c.Request().Body(), "echo ") + "\n"
			_, _ = gorcon.NewPacket(gorcon.SERVERDATA_RESPONSE_VALUE, c.Request().ID, out).WriteTo(c.Conn())
		}),
	}
	if echoAuthID {
		opts = append(opts, gorcontest.SetAuthHandler(func(c *gorcontest.Context) {
			id := c.Request().ID
			if c.Request().Body() != password {
				id = -1
			}
			_, _ = gorcon.NewPacket(gorcon.SERVERDATA_AUTH_RESPONSE, id, "").WriteTo(c.Conn())
		}))
	}
	s := gorcontest.NewServer(opts...)
	b.Cleanup(s.Close)
	return s.Addr()
}

// BenchmarkPipelined measures commands per second on one Source
// connection with many commands in flight.
func BenchmarkPipelined(b *testing.B) {
	c := dial(b, startServer(b, rcon.DialectSource), &rcon.Options{Pipeline: true})
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(64)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if out, err := c.Exec(ctx, "echo x"); err != nil || out != "x\n" {
				b.Errorf("%q, %v", out, err)
				return
			}
		}
	})
	reportRate(b, "cmd/s")
}

// BenchmarkFetch measures fetching large outputs whole.
func BenchmarkFetch(b *testing.B) {
	ctx := context.Background()
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectMinecraft} {
		for _, n := range []int{100_000, 1 << 20} {
			b.Run(fmt.Sprintf("%v/%dB", d, n), func(b *testing.B) {
				c := dial(b, startServer(b, d), &rcon.Options{Dialect: d})
				want := rcontest.BigOutput(n)
				b.SetBytes(int64(n))
				b.ReportAllocs()
				for b.Loop() {
					if out, err := c.Exec(ctx, fmt.Sprint("big ", n)); err != nil || out != want {
						b.Fatalf("%d bytes, %v", len(out), err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N), "ms/fetch")
			})
		}
	}
}

// BenchmarkIdleConnMemory measures the server's memory (heap + stacks)
// per logged-in idle connection. The client side is plain net.Conns whose
// own cost (a few hundred bytes each) is included.
func BenchmarkIdleConnMemory(b *testing.B) {
	const conns = 1000
	addr := startServer(b, rcon.DialectSource)
	b.ReportAllocs()
	for b.Loop() {
		before := inUse()
		open := make([]net.Conn, 0, conns)
		for range conns {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			login, _ := rcon.Packet{ID: 1, Type: rcon.TypeAuth, Body: []byte(password)}.MarshalBinary()
			if _, err := nc.Write(login); err != nil {
				b.Fatal(err)
			}
			reply := make([]byte, 28) // empty RESPONSE_VALUE + AUTH_RESPONSE
			_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			for n := 0; n < len(reply); {
				k, err := nc.Read(reply[n:])
				if err != nil {
					b.Fatal(err)
				}
				n += k
			}
			open = append(open, nc)
		}
		after := inUse()
		b.ReportMetric(float64(after-before)/conns, "B/conn")
		for _, nc := range open {
			nc.Close()
		}
	}
}

func inUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
