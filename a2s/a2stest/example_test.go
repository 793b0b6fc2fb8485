package a2stest_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

func ExampleNewServer() {
	srv := a2stest.NewServer(a2stest.Profile{}) // the modern profile
	defer srv.Close()

	c := &a2s.Client{}
	defer c.Close()
	res, err := c.Info(context.Background(), srv.Addr())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Info.Name, res.Info.Map)
	// Output: gsq test server de_dust2
}

func ExampleLookupProfile() {
	p, err := a2stest.LookupProfile("rust")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Name, p.Framing)
	_, err = a2stest.LookupProfile("quake")
	fmt.Println(err)
	// Output:
	// rust unsplit
	// a2stest: unknown profile "quake" (known: modern, legacy, goldsource-dual, split-out-of-order, bzip2-nosize, oversized, rust, ship, dayz, banned, lossy)
}

// printer is a PacketWriter that prints the replies instead of sending
// them.
type printer struct{}

func (printer) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	if msg, err := a2s.ParseBanned(b); err == nil {
		fmt.Printf("to %v: banned: %s\n", to, msg)
	}
	return len(b), nil
}

// A Responder answers datagrams from a socket of your own; here, an INFO
// query to the banned profile.
func ExampleProfile_NewResponder() {
	p, _ := a2stest.LookupProfile("banned")
	r := p.NewResponder(nil)
	query, _ := a2s.Request{Type: a2s.TypeInfoRequest}.AppendBinary(nil)
	r.HandlePacket(printer{}, netip.MustParseAddrPort("192.0.2.1:27005"), query)
	// Output: to 192.0.2.1:27005: banned: You have been banned from this server.
}
