package battleye_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
)

func ExampleDial() {
	srv := betest.NewServer(betest.DayZ, "secret", &betest.SimHandler{Players: players})
	defer srv.Close()

	c, err := battleye.Dial(context.Background(), srv.Addr().String(), "secret", nil)
	if err != nil {
		log.Fatal(err) // errors.Is(err, battleye.ErrAuthFailed), battleye.ErrNoResponse, ...
	}
	defer c.Close()
	out, err := c.Exec(context.Background(), "players")
	if err != nil {
		log.Fatal(err)
	}
	ps, err := battleye.ParsePlayers(out)
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range ps {
		fmt.Printf("#%d %s verified=%v lobby=%v\n", p.Slot, p.Name, p.Verified, p.Lobby)
	}
	// Output:
	// #0 Survivor verified=true lobby=false
	// #1 Jörg (Lobby) x verified=false lobby=true
}
