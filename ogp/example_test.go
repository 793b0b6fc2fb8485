package ogp_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func ExampleClient_Query() {
	p, _ := ogptest.LookupProfile("v0.91")
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
	// The first query learns the challenge from an error 3 answer.
	fmt.Printf("%d datagrams sent, %d re-challenged\n", resp.Stats.Sent, resp.Stats.Rechallenged)
	// Output:
	// gsq ogptest server: 4/300
	// Zoë -20
	// player-01-with-a-long-name -13
	// 2 datagrams sent, 1 re-challenged
}

func ExampleServer() {
	srv := &ogp.Server{Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) {
		// Everything the server has; it sends what the query asks for.
		return &ogp.Answer{
			Request: ogp.RequestServerInfo | ogp.RequestRules,
			Info:    ogp.ServerInfo{Fields: ogp.InfoHostName | ogp.InfoPlayerCount, HostName: ogp.Text("my server"), PlayerCount: 3},
			Rules:   []ogp.Rule{{Key: ogp.Text("timelimit"), Value: ogp.Text("20")}},
		}, nil
	})}
	// srv.ListenAndServe() would listen on all interfaces, port 27015;
	// here the server takes a loopback socket on a free port.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go srv.Serve(pc)
	defer srv.Shutdown(context.Background())

	c := &ogp.Client{}
	defer c.Close()
	q := ogp.Query{Request: ogp.RequestServerInfo | ogp.RequestRules, Info: ogp.InfoHostName}
	resp, err := c.Query(context.Background(), pc.LocalAddr().(*net.UDPAddr).AddrPort(), &q)
	if err != nil {
		fmt.Println(err)
		return
	}
	a := resp.Answer
	fmt.Printf("%s (%v)\n", a.Info.HostName, a.Info.Fields)
	for _, r := range a.Rules {
		fmt.Printf("%s = %s\n", r.Key, r.Value)
	}
	// Output:
	// my server (host-name)
	// timelimit = 20
}
