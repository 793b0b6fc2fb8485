package poller

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/scan"
)

// TestMinecraft monitors Minecraft servers by each of their protocols
// over real loopback: Server List Ping's sample gives the players of a
// vanilla server; Query lists every player; a proxy that shows lines of
// text instead of its players is up with its players hidden, not empty;
// Bedrock gives the counts; a server that closes after the handshake is
// not up, its error saying it does not answer status.
func TestMinecraft(t *testing.T) {
	t.Parallel()
	van := mctest.Start(t, "vanilla")
	vel := mctest.Start(t, "velocity")
	be := mctest.Start(t, "bedrock")
	off := mctest.Start(t, "status-off")
	cfg := loadConfig(t, fmt.Sprintf(`servers:
  - {name: slp, address: '%s', protocol: minecraft}
  - {name: query, address: '%s', protocol: mcquery}
  - {name: proxy, address: '%s', protocol: minecraft}
  - {name: be, address: '%s', protocol: bedrock}
  - {name: off, address: '%s', protocol: minecraft}
`, van.Addr(), van.Addr(), vel.Addr(), be.BedrockAddr(), off.Addr()))
	fast(cfg, 200*time.Millisecond)
	s := start(t, cfg, openStore(t), Options{})
	polled := map[string]monitor.ServerState{}
	s.await(t, "a poll of every server", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventPoll {
			polled[ev.Server] = *ev.State
		}
		return len(polled) == 5
	})
	for _, name := range []string{"slp", "query"} {
		st := polled[name]
		if st.LastError != nil || len(st.Players) != 3 || st.PlayersHidden || *st.Summary.Name != "A gsq Minecraft server" {
			t.Errorf("%s: %+v", name, st)
		}
	}
	if st := polled["proxy"]; st.LastError != nil || st.Players != nil || !st.PlayersHidden || st.Summary.Players == nil || *st.Summary.Players == 0 {
		t.Errorf("proxy: %+v", st)
	}
	if st := polled["be"]; st.LastError != nil || st.Summary.Players == nil || st.Players != nil || st.PlayersHidden {
		t.Errorf("bedrock: %+v", st)
	}
	// Status off: up, and the reason it answers nothing kept.
	if st := polled["off"]; st.Status != monitor.StatusUp || st.LastError == nil || st.LastError.Message != "slp: status "+off.Addr().String()+": up, but not answering status" {
		t.Errorf("status off: %+v", st)
	}
}

// A monitored server given as a name without a port follows the SRV
// record of its protocol at each poll, through the Scanner's Resolver: a
// name with only the record is polled at the record's target, and a
// changed record moves the next polls; a name with a port does not look
// the record up.
func TestMinecraftSRV(t *testing.T) {
	t.Parallel()
	van := mctest.Start(t, "vanilla")
	vel := mctest.Start(t, "velocity")
	dns := testutil.StartDNS(t)
	owner := func(host string) string { return "_" + protocol.Minecraft.SRV + "._tcp." + host }
	loopback := netip.MustParseAddr("127.0.0.1")
	dns.SetA("mc7.host.test", loopback)
	dns.SetSRV(owner("play.test"), &net.SRV{Target: "mc7.host.test.", Port: van.Addr().Port()})
	dns.SetA("direct.test", loopback)
	dns.SetSRV(owner("direct.test"), &net.SRV{Target: "mc7.host.test.", Port: vel.Addr().Port()})
	cfg := loadConfig(t, fmt.Sprintf(`servers:
  - {name: srv, address: play.test, protocol: minecraft}
  - {name: direct, address: 'direct.test:%d', protocol: minecraft}
`, van.Addr().Port()))
	fast(cfg, 200*time.Millisecond)
	s := start(t, cfg, openStore(t), Options{Scanner: scan.Scanner{Resolver: dns.Resolver()}})
	polled := map[string]monitor.ServerState{}
	s.await(t, "a poll of every server", func(ev monitor.Event) bool {
		if ev.Kind == monitor.EventPoll {
			polled[ev.Server] = *ev.State
		}
		return len(polled) == 2
	})
	// Both reach the vanilla server (3 players in its sample), not the
	// proxy (players hidden).
	for _, name := range []string{"srv", "direct"} {
		if st := polled[name]; st.LastError != nil || len(st.Players) != 3 || st.PlayersHidden {
			t.Errorf("%s: %+v, want the vanilla server's state", name, st)
		}
	}
	if n := dns.Asked("SRV", owner("direct.test")); n != 0 {
		t.Errorf("direct.test: its SRV record was looked up %d times; a port was given", n)
	}
	// The record moves to the proxy: a later poll follows it.
	dns.SetSRV(owner("play.test"), &net.SRV{Target: "mc7.host.test.", Port: vel.Addr().Port()})
	s.await(t, "a poll of srv at the proxy", func(ev monitor.Event) bool {
		return ev.Kind == monitor.EventPoll && ev.Server == "srv" && ev.State.LastError == nil && ev.State.PlayersHidden
	})
}
