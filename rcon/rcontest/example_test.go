package rcontest_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// A fake server that behaves like Palworld: every reply carries id 0.
// A client with no options finds that out from the login reply.
func ExampleNewServer() {
	srv := rcontest.NewServer(rcontest.Palworld, "secret", nil)
	defer srv.Close()

	ctx := context.Background()
	c, err := rcon.Dial(ctx, srv.Addr().String(), "secret", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, err := c.Exec(ctx, "echo hello")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Print(out)
	fmt.Println(srv.Received() >= 2) // the login and the command, at least
	// Output:
	// hello
	// true
}

// Faults on top of a profile: every other command is swallowed.
func ExampleServer_faults() {
	srv := rcontest.NewUnstartedServer(rcontest.CS2, "secret", nil)
	srv.Faults = rcontest.Faults{DropEvery: 2}
	srv.Start()
	defer srv.Close()

	ctx := context.Background()
	c, err := rcon.Dial(ctx, srv.Addr().String(), "secret", &rcon.Options{Dialect: rcon.DialectCS2})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, _ := c.Exec(ctx, "echo first")
	fmt.Print(out)
	short, cancel := context.WithTimeout(ctx, 50_000_000) // 50 ms
	defer cancel()
	_, err = c.Exec(short, "echo second")
	fmt.Println(err != nil, srv.Dropped())
	// Output:
	// first
	// true 1
}

// SimHandler answers the commands the README shows, for any server.
func ExampleSimHandler() {
	h := &rcontest.SimHandler{MaxPlayers: 20, Players: []rcontest.SimPlayer{{Name: "alice"}, {Name: "bob"}}}
	srv := rcontest.NewServer(rcontest.Minecraft, "secret", h)
	defer srv.Close()

	ctx := context.Background()
	c, err := rcon.Dial(ctx, srv.Addr().String(), "secret", &rcon.Options{Dialect: rcon.DialectMinecraft})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	out, _ := c.Exec(ctx, "list")
	fmt.Print(out)
	// Output: There are 2 of a max of 20 players online: alice, bob
}

func ExampleLookupProfile() {
	p, err := rcontest.LookupProfile("ARK")
	fmt.Println(p, err)
	_, err = rcontest.LookupProfile("quake")
	fmt.Println(err)
	// Output:
	// ark <nil>
	// rcontest: unknown profile "quake" (known: srcds, cs2, minecraft, factorio, palworld, conan, squad, ark, rust-legacy, gomc)
}
