package master_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"

	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/master/mastertest"
	"github.com/gsq-project/gsq/serverlist"
)

// A gsq master lists a private fleet the way Valve's listed the public
// one.
func ExampleServer() {
	var servers []serverlist.Server
	for i := range 500 {
		servers = append(servers, serverlist.Server{
			Addr:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), 27015),
			AppID: 240, Players: i % 3,
		})
	}
	s := &master.Server{Handler: master.FleetHandler(serverlist.NewFleet(servers))}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	go s.Serve(pc)
	defer s.Shutdown(context.Background())

	c := &master.Client{}
	defer c.Close()
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	r, err := c.List(context.Background(), addr, master.Query{Region: serverlist.RegionWorld, Filter: `\appid\240\empty\1`}, nil)
	fmt.Println(r.Addresses, r.Pages, r.Complete, err)
	// Output: 333 2 true <nil>
}

// List hands out each page as it comes: a scanner queries the first
// servers while the rest are listed.
func ExampleClient_List() {
	p, _ := mastertest.LookupProfile("valve")
	var servers []serverlist.Server
	for i := range 1000 {
		servers = append(servers, serverlist.Server{Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 27015)})
	}
	srv := mastertest.NewServer(p, serverlist.NewFleet(servers))
	defer srv.Close()

	c := &master.Client{}
	defer c.Close()
	r, err := c.List(context.Background(), srv.Addr(), master.Query{Region: serverlist.RegionWorld}, func(page []netip.AddrPort) bool {
		fmt.Println(len(page), "from", page[0])
		return true
	})
	fmt.Println(r.Addresses, err)
	// Output:
	// 231 from 10.1.0.0:27015
	// 231 from 10.1.0.231:27015
	// 231 from 10.1.1.206:27015
	// 231 from 10.1.2.181:27015
	// 76 from 10.1.3.156:27015
	// 1000 <nil>
}
