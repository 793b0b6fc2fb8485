package rcon_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/gsq-project/gsq/rcon"
)

// The tests in this file need real sockets: the client against our own
// Server over loopback TCP, and a peek at a socket the server closed.

// serveOurs runs the package's Server on loopback.
func serveOurs(t *testing.T, d rcon.Dialect, h rcon.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rcon.Server{Password: pw, Dialect: d, Handler: h}
	done := make(chan struct{})
	go func() { defer close(done); s.Serve(ln) }()
	t.Cleanup(func() { s.Close(); <-done })
	return ln.Addr().String()
}

// The client against the package's own Server, in every dialect, with
// output large enough to be split and commands in parallel.
func TestClientAgainstServer(t *testing.T) {
	t.Parallel()
	out := bigOutput(300 << 10)
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectCS2, rcon.DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			addr := serveOurs(t, d, func(_ context.Context, w rcon.ResponseWriter, cmd string) {
				if cmd == "big" {
					io.WriteString(w, out)
					return
				}
				fmt.Fprintf(w, "echo %s", cmd)
			})
			want := out // unlike vanilla, Server keeps surrogate pairs whole
			c, err := rcon.Dial(bounded(t), addr, pw, &rcon.Options{Dialect: d, Pipeline: true})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var wg sync.WaitGroup
			for i := range 6 {
				wg.Go(func() {
					cmd := "big"
					if i%2 == 1 {
						cmd = fmt.Sprintf("say %d Жёлтый", i)
					}
					got, err := c.Exec(bounded(t), cmd)
					if cmd != "big" && got != "echo "+cmd || cmd == "big" && got != want || err != nil {
						t.Errorf("%s: got %d bytes, %v", cmd, len(got), err)
					}
				})
			}
			wg.Wait()
			// A round trip on a real socket takes time.
			if r, err := c.Do(bounded(t), "rtt"); err != nil || r.RTT <= 0 || r.Packets != 1 {
				t.Errorf("Do = %+v, %v; want one packet and a round-trip time", r, err)
			}
			if _, err := rcon.Dial(bounded(t), addr, "wrong", &rcon.Options{Dialect: d}); err == nil || !strings.Contains(err.Error(), "authentication failed") {
				t.Fatalf("wrong password: %v", err)
			}
		})
	}
}

func benchExec(b *testing.B, d rcon.Dialect, out string, pipeline bool) {
	b.ReportAllocs()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s := &rcon.Server{Password: pw, Dialect: d, Handler: rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, _ string) {
		w.WriteString(out)
	})}
	go s.Serve(ln)
	defer s.Close()
	c, err := rcon.Dial(context.Background(), ln.Addr().String(), pw, &rcon.Options{Dialect: d, Pipeline: pipeline})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.SetBytes(int64(len(out)))
	b.ResetTimer()
	if pipeline {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := c.Do(context.Background(), "status"); err != nil {
					b.Error(err)
					return
				}
			}
		})
		return
	}
	for b.Loop() {
		if _, err := c.Do(context.Background(), "status"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExecSmall(b *testing.B) {
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectMinecraft} {
		b.Run(d.String(), func(b *testing.B) { benchExec(b, d, "hostname: test\nplayers: 3 (16 max)\n", false) })
	}
}

func BenchmarkExecPipelined(b *testing.B) {
	benchExec(b, rcon.DialectSource, "hostname: test\nplayers: 3 (16 max)\n", true)
}

func BenchmarkExec1MiB(b *testing.B) {
	out := bigOutput(1 << 20)
	for _, d := range []rcon.Dialect{rcon.DialectSource, rcon.DialectCS2, rcon.DialectMinecraft} {
		b.Run(d.String(), func(b *testing.B) { benchExec(b, d, out, false) })
	}
}
