package sdtd_test

import (
	"context"
	"fmt"
	"log"

	"github.com/gsq-project/gsq/sdtd"
	"github.com/gsq-project/gsq/sdtd/sdtdtest"
)

func ExampleDial() {
	srv := sdtdtest.NewServer("secret", &sdtdtest.SimHandler{Players: players})
	defer srv.Close()

	c, err := sdtd.Dial(context.Background(), srv.Addr().String(), "secret", nil)
	if err != nil {
		log.Fatal(err) // errors.Is(err, sdtd.ErrAuthFailed): never sent again
	}
	defer c.Close()
	ps, err := c.Players(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	for _, p := range ps {
		fmt.Printf("%d %s level %d\n", p.EntityID, p.Name, p.Level)
	}
	// Output:
	// 171 Ann level 3
	// 172 Bo, the builder level 9
}
