package fivem_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/fivem/fivemtest"
)

func ExampleClient_Query() {
	p, _ := fivemtest.LookupProfile("players-disabled")
	srv := fivemtest.NewServer(p)
	defer srv.Close()

	r := (&fivem.Client{}).Query(context.Background(), srv.Addr(), true, true, true)
	fmt.Println(r.Dynamic.Hostname, r.Dynamic.Clients, r.Dynamic.MaxClients, r.Info.Game())
	fmt.Println(errors.Is(r.PlayersErr, fivem.ErrNotAvailable))
	// Output:
	// ^2gsq ^7FiveM test 3 48 gta5
	// true
}
