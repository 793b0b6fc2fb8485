package satisfactory_test

import (
	"context"
	"fmt"

	"github.com/gsq-project/gsq/satisfactory"
	"github.com/gsq-project/gsq/satisfactory/satisfactorytest"
)

func ExampleClient_State() {
	p, _ := satisfactorytest.LookupProfile("playing")
	srv := satisfactorytest.NewServer(p)
	defer srv.Close()

	c := &satisfactory.Client{}
	defer c.Close()
	r, err := c.State(context.Background(), srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State.Name, r.State.State, r.State.NetCL)
	// Output: gsq Satisfactory server playing 416835
}
