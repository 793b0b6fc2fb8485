package steamapi_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi"
	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// List lists every server a filter selects, past the 10,000 a request
// returns, handing each out as the answer is read; relay addresses are
// flagged, for no query reaches them.
func ExampleClient_List() {
	var servers []serverlist.Server
	for i := range 15000 {
		servers = append(servers, serverlist.Server{
			Addr:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), 28016),
			AppID: 252490, Secure: i%2 == 0, Dedicated: true, Players: i % 4, MaxPlayers: 100,
		})
	}
	p, _ := steamapitest.LookupProfile("relays")
	api := steamapitest.NewServer(p, serverlist.NewFleet(servers), "my-key")
	defer api.Close()

	c := &steamapi.Client{Key: "my-key", BaseURL: api.URL(), MinInterval: -1}
	n := 0
	res, err := c.List(context.Background(), `\appid\252490`, func(s *serverlist.Server) bool {
		n++
		return true
	})
	fmt.Println(n, res.Relays, res.Requests, res.Complete(), err)
	// Output: 15000 3000 3 true <nil>
}

// Listed answers "is my server listed, and if not, why".
func ExampleClient_Listed() {
	fleet := serverlist.NewFleet([]serverlist.Server{{Addr: netip.MustParseAddrPort("203.0.113.7:27016"), GamePort: 27015, AppID: 4000, GameDir: "garrysmod"}})
	api := steamapitest.NewServer(steamapitest.Profile{}, fleet, "")
	defer api.Close()

	c := &steamapi.Client{BaseURL: api.URL()}
	for _, addr := range []string{"203.0.113.7:27015", "203.0.113.8:27015"} {
		l, err := c.Listed(context.Background(), netip.MustParseAddrPort(addr))
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(l.Listed, l.Why)
	}
	// Output:
	// true listed: app 4000 (garrysmod), query port 27016, game port 27015, steamid 0
	// false Steam knows no server at 203.0.113.8: the server's heartbeat does not reach Steam's master (is it started as a public server, and may it send UDP out to Steam?), or it stopped more than a few minutes ago
}
