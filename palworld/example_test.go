package palworld_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gsq-project/gsq/palworld"
	"github.com/gsq-project/gsq/palworld/palworldtest"
)

func ExampleDial() {
	h := palworldtest.NewSimHandler(palworld.Info{ServerName: "My Pals", Version: "v0.6.1.0"}, nil, palworld.Metrics{MaxPlayerNum: 32})
	srv := palworldtest.NewServer("adminpw", h)
	defer srv.Close()

	c, err := palworld.Dial(context.Background(), srv.Addr().String(), "adminpw", nil)
	if err != nil {
		log.Fatal(err) // errors.Is(err, palworld.ErrAuthFailed) for a 401
	}
	defer c.Close()
	m, err := c.Metrics(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	if err := c.Announce(context.Background(), "restart in 5 minutes"); err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.CurrentPlayerNum, "of", m.MaxPlayerNum, h.Actions())
	// Output: 0 of 32 [announce restart in 5 minutes]
}
