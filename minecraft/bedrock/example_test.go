package bedrock_test

import (
	"context"
	"fmt"

	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mctest"
)

func ExampleClient_Status() {
	p, _ := mctest.LookupProfile("bedrock")
	srv := mctest.NewServer(p)
	defer srv.Close()

	r, err := (&bedrock.Client{}).Status(context.Background(), srv.BedrockAddr())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := r.Status
	fmt.Println(s.Edition, s.MOTD, s.Version, *s.Online, *s.Max, r.Transport)
	// Output: MCPE gsq Bedrock server 1.21.40 2 10 raknet
}
