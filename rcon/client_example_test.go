package rcon_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"strings"

	"github.com/gsq-project/gsq/rcon"
)

func ExampleDial() {
	// A Source RCON server on loopback that upper-cases commands.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := &rcon.Server{Password: "secret", Handler: rcon.HandlerFunc(
		func(_ context.Context, w rcon.ResponseWriter, cmd string) {
			w.WriteString(strings.ToUpper(cmd))
		})}
	go srv.Serve(ln)
	defer srv.Close()

	ctx := context.Background()
	c, err := rcon.Dial(ctx, ln.Addr().String(), "secret", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, err := c.Exec(ctx, "status")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(out)
	// Output: STATUS
}
