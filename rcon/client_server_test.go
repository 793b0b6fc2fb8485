package rcon

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// serveOurs runs this package's Server on loopback.
func serveOurs(t *testing.T, d Dialect, h HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Password: "pw", Dialect: d, Handler: h}
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
	for _, d := range []Dialect{DialectSource, DialectCS2, DialectMinecraft} {
		t.Run(d.String(), func(t *testing.T) {
			t.Parallel()
			addr := serveOurs(t, d, func(_ context.Context, w ResponseWriter, cmd string) {
				if cmd == "big" {
					io.WriteString(w, out)
					return
				}
				fmt.Fprintf(w, "echo %s", cmd)
			})
			want := out // unlike vanilla, Server keeps surrogate pairs whole
			c, err := Dial(testCtx(t), addr, "pw", &Options{Dialect: d, Pipeline: true})
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
					got, err := c.Exec(testCtx(t), cmd)
					if cmd != "big" && got != "echo "+cmd || cmd == "big" && got != want || err != nil {
						t.Errorf("%s: got %d bytes, %v", cmd, len(got), err)
					}
				})
			}
			wg.Wait()
			if _, err := Dial(testCtx(t), addr, "wrong", &Options{Dialect: d}); err == nil || !strings.Contains(err.Error(), "authentication failed") {
				t.Fatalf("wrong password: %v", err)
			}
		})
	}
}
