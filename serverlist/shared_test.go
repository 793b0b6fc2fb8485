package serverlist_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/master/mastertest"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi"
	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// The fake Web API, the fake master and master.Server answer one filter
// from one fleet with the one evaluator: each lists the same servers for
// every filter, and they are the servers Match selects.
func TestListsAgree(t *testing.T) {
	t.Parallel()
	servers := make([]serverlist.Server, 1200)
	for i := range servers {
		servers[i] = serverlist.Server{
			Addr:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 7, byte(i >> 8), byte(i)}), 27015),
			AppID: []uint32{730, 252490, 892970}[i%3], Name: fmt.Sprintf("[EU] server %d", i), Map: []string{"de_dust2", "Procedural Map"}[i/5%2],
			Players: i % 4, MaxPlayers: 3, Secure: i%2 == 0, Dedicated: i%7 != 0, OS: []string{"l", "w"}[i/2%2],
			GameType: []string{"pve,vanilla", "pvp,modded"}[i/3%2], Region: serverlist.RegionEurope,
		}
	}
	fleet := serverlist.NewFleet(servers)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	api := steamapitest.NewServer(steamapitest.Profile{}, fleet, "key")
	defer api.Close()
	web := &steamapi.Client{Key: "key", BaseURL: api.URL(), MinInterval: -1}
	open, _ := mastertest.LookupProfile("open")
	fake := mastertest.NewServer(open, fleet)
	defer fake.Close()
	real := &master.Server{Handler: master.FleetHandler(fleet), RateLimit: -1}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go real.Serve(pc)
	defer real.Shutdown(context.Background())
	udp := &master.Client{}
	defer udp.Close()

	for _, filter := range []string{
		``,
		`\appid\730`,
		`\napp\730\empty\1`,
		`\noplayers\1\linux\1`,
		`\full\1\secure\1\dedicated\1`,
		`\gametype\vanilla\map\de_dust2`,
		`\nor\2\appid\730\appid\252490`,
		`\nand\2\secure\1\linux\1`,
		`\name_match\[eu] server 1*`,
		`\type\l`,
	} {
		flt, err := serverlist.Parse(filter)
		if err != nil {
			t.Fatal(err)
		}
		var want []netip.AddrPort
		for i := range servers {
			if flt.Match(&servers[i]) {
				want = append(want, servers[i].Addr)
			}
		}
		slices.SortFunc(want, netip.AddrPort.Compare)
		var fromAPI []netip.AddrPort
		if _, err := web.List(ctx, filter, func(s *serverlist.Server) bool {
			fromAPI = append(fromAPI, s.Addr)
			return true
		}); err != nil {
			t.Fatalf("%q: Web API: %v", filter, err)
		}
		for name, addr := range map[string]netip.AddrPort{"fake master": fake.Addr(), "master.Server": pc.LocalAddr().(*net.UDPAddr).AddrPort()} {
			var got []netip.AddrPort
			if _, err := udp.List(ctx, addr, master.Query{Region: serverlist.RegionWorld, Filter: filter}, func(page []netip.AddrPort) bool {
				got = append(got, page...)
				return true
			}); err != nil {
				t.Fatalf("%q: %s: %v", filter, name, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%q: %s listed %d servers, Match selects %d", filter, name, len(got), len(want))
			}
		}
		if !slices.Equal(fromAPI, want) || len(want) == 0 {
			t.Errorf("%q: the Web API listed %d servers, Match selects %d", filter, len(fromAPI), len(want))
		}
	}
}
