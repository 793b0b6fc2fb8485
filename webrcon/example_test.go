package webrcon_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gsq-project/gsq/webrcon"
	"github.com/gsq-project/gsq/webrcon/webrcontest"
)

func ExampleDial() {
	srv := webrcontest.NewServer(webrcontest.Rust, "secret", &webrcontest.SimHandler{Info: webrcon.ServerInfo{Hostname: "My Rust", MaxPlayers: 50}})
	defer srv.Close()

	c, err := webrcon.Dial(context.Background(), srv.Addr().String(), "secret", nil)
	if err != nil {
		log.Fatal(err) // errors.Is(err, webrcon.ErrAuthFailed): the close frame Rust sends
	}
	defer c.Close()
	info, err := c.ServerInfo(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Hostname, info.MaxPlayers)
	// Output: My Rust 50
}
