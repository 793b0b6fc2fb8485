package ogp_test

import (
	"context"
	"fmt"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func ExampleClient_Query() {
	p, _ := ogptest.ProfileByName("v0.91")
	srv := ogptest.NewServer(p)
	defer srv.Close()

	c := &ogp.Client{Timeout: time.Second}
	defer c.Close()
	q := ogp.Query{Request: ogp.RequestServerInfo | ogp.RequestPlayers,
		Info: ogp.InfoHostName | ogp.InfoPlayerCount | ogp.InfoSlotMax, Player: ogp.PlayerName | ogp.PlayerScore}
	resp, err := c.Query(context.Background(), srv.Addr(), &q)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := resp.Answer
	fmt.Printf("%s: %d/%d\n", a.Info.HostName, a.Info.PlayerCount, a.Info.SlotMax)
	for _, pl := range a.Players.Players[:2] {
		fmt.Println(pl.Name.UTF8(), pl.Score)
	}
	// Output:
	// gsq ogptest server: 4/300
	// Zoë -20
	// player-01-with-a-long-name -13
}

func ExampleServer() {
	srv := &ogp.Server{Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
		return &ogp.Answer{
			Request: ogp.RequestServerInfo | ogp.RequestRules,
			Info:    ogp.ServerInfo{Fields: ogp.InfoHostName, HostName: ogp.Text("my server")},
			Rules:   []ogp.Rule{{Key: ogp.Text("timelimit"), Value: ogp.Text("20")}},
		}, nil
	})}
	_ = srv // srv.ListenAndServe() answers on srv.Addr until srv.Shutdown(ctx)
}
