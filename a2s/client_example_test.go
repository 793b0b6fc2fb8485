package a2s_test

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

func ExampleClient() {
	srv := a2stest.NewServer(a2stest.Profile{}) // a fake server on 127.0.0.1
	defer srv.Close()

	c := &a2s.Client{Timeout: time.Second}
	defer c.Close()
	ctx := context.Background()
	info, err := c.Info(ctx, srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	// PLAYER and RULES reuse the challenge INFO earned.
	players, err := c.Players(ctx, srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	rules, err := c.Rules(ctx, srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s on %s: %d players, %d rules\n", info.Info.Name, info.Info.Map, len(players.List), len(rules.List))
	// Output: gsq test server on de_dust2: 3 players, 100 rules
}

func ExampleServer() {
	h, err := a2s.NewStaticHandler(&a2s.Info{
		Format:     a2s.TypeInfoReply,
		Protocol:   17,
		Name:       a2s.Text("my Go server"),
		Map:        a2s.Text("arena"),
		Folder:     a2s.Text("mygame"),
		Game:       a2s.Text("My Game"),
		MaxPlayers: 16,
		ServerType: 'd',
		Version:    a2s.Text("1.0"),
	}, &a2s.Players{}, &a2s.Rules{})
	if err != nil {
		fmt.Println(err)
		return
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &a2s.Server{Handler: h} // challenges and rate limits on by default
	go srv.Serve(pc)
	defer srv.Shutdown(context.Background())

	info, err := a2s.QueryInfo(context.Background(), pc.LocalAddr().(*net.UDPAddr).AddrPort())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(info.Name, info.Map, info.MaxPlayers)
	// Output: my Go server arena 16
}
