package rcon_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/gsq-project/gsq/rcon"
)

func ExampleServer() {
	srv := &rcon.Server{
		Password: "changeme",
		Handler: rcon.HandlerFunc(func(_ context.Context, w rcon.ResponseWriter, cmd string) {
			// Output of any size is streamed and split into packets.
			fmt.Fprintf(w, "you said %q\n", cmd)
			w.WriteString(strings.Repeat("x", 10000))
		}),
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := rcon.Dial(ctx, l.Addr().String(), "changeme", nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	out, err := c.Exec(ctx, "status")
	if err != nil {
		panic(err)
	}
	first, _, _ := strings.Cut(out, "\n")
	fmt.Println(first, len(out))
	// Output: you said "status" 10018
}
