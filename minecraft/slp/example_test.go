package slp_test

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

func ExampleClient_Status() {
	srv := mctest.NewServer(mctest.Profile{}) // a vanilla server
	defer srv.Close()

	r, err := (&slp.Client{}).Status(context.Background(), srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	s := r.Status
	fmt.Println(s.Description.Text())
	fmt.Println(s.Version.Name, *s.Version.Protocol)
	fmt.Println(*s.Players.Online, "of", *s.Players.Max, "online; the sample names", s.Players.Sample[0].Name)
	fmt.Println("favicon", s.Favicon.Size, "bytes, pong", r.Pong)
	// Output:
	// A gsq Minecraft server
	// 1.21.1 767
	// 3 of 20 online; the sample names thinkofdeath
	// favicon 600 bytes, pong true
}

// A server that closes the connection right after the handshake is up,
// but does not answer status requests.
func ExampleErrNoStatus() {
	p, _ := mctest.LookupProfile("status-off")
	srv := mctest.NewServer(p)
	defer srv.Close()

	_, err := (&slp.Client{}).Status(context.Background(), srv.Addr())
	fmt.Println(errors.Is(err, slp.ErrNoStatus))
	// Output: true
}

func ExampleServer() {
	h, err := slp.NewStaticHandler(&slp.Status{
		Version:     &slp.Version{Name: "1.21.1"},
		Description: slp.TextDescription("§aMy Go server"),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := &slp.Server{Handler: h}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())

	r, err := (&slp.Client{}).Status(context.Background(), l.Addr().(*net.TCPAddr).AddrPort())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Status.Description.Text(), r.Status.Version.Name)
	// Output: My Go server 1.21.1
}
