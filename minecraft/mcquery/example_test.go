package mcquery_test

import (
	"context"
	"fmt"

	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/mctest"
)

func ExampleClient_FullStat() {
	srv := mctest.NewServer(mctest.Profile{Query: true}) // enable-query=true
	defer srv.Close()

	full, _, err := (&mcquery.Client{}).FullStat(context.Background(), srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	version, _ := full.Value("version")
	fmt.Println(version, full.NumPlayers(), full.MaxPlayers())
	for _, p := range full.Players {
		fmt.Println(p)
	}
	// Output:
	// 1.21.1 3 20
	// thinkofdeath
	// Dinnerbone
	// Notch
}
