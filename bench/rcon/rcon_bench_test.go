package rconbench

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

const password = "bench-pw"

// startServer runs our server on loopback and returns its address.
func startServer(b testing.TB, d rcon.Dialect) string {
	b.Helper()
	// No connection caps: BenchmarkIdleConnMemory holds 1000 connections from one address.
	s := &rcon.Server{Password: password, Handler: &rcontest.SimHandler{}, Dialect: d, MaxConnsPerAddr: -1, MaxConns: -1}
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
