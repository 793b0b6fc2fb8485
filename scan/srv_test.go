package scan

import (
	"net"
	"net/netip"
	"slices"
	"sync"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// srvOwner is the owner name of the SRV record protocol p follows for
// host: "_SERVICE._tcp.HOST", the service from the registry.
func srvOwner(p *protocol.Protocol, host string) string {
	return "_" + p.SRV + "._tcp." + host
}

// A scan of a protocol that follows an SRV record resolves a name given
// without a port as the game does, through the Scanner's Resolver: a name
// with only the record (no address of its own) reaches the record's
// target on its port, with the target in the handshake; a name with a
// port does not look the record up; a name whose lookup fails is asked
// on the default port.
func TestScanSRV(t *testing.T) {
	t.Parallel()
	mc := mctest.Start(t, "vanilla")
	dns := testutil.StartDNS(t)
	p := protocol.Minecraft
	loopback := netip.MustParseAddr("127.0.0.1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := uint16(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	// play.test has no address, only its record.
	dns.SetSRV(srvOwner(p, "play.test"), &net.SRV{Target: "mc7.host.test.", Port: mc.Addr().Port(), Priority: 10, Weight: 5})
	dns.SetA("mc7.host.test", loopback)
	// direct.test's record points to a closed port: a port given skips it.
	dns.SetA("direct.test", loopback)
	dns.SetSRV(srvOwner(p, "direct.test"), &net.SRV{Target: "direct.test.", Port: closed})
	// plain.test has an address and no record.
	dns.SetA("plain.test", loopback)

	q, err := p.Prepare(protocol.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	direct := net.JoinHostPort("direct.test", mc.Addr().String()[len("127.0.0.1:"):])
	var targets []Target
	for _, in := range []string{"play.test", direct, "plain.test"} {
		targets = append(targets, ParseTarget(0, in, p.DefaultPort))
	}
	var mu sync.Mutex
	got := map[string]*Outcome{}
	sum, err := (&Scanner{Query: q, Resolver: dns.Resolver()}).Run(testutil.Context(t), slices.Values(targets), func(o *Outcome) {
		mu.Lock()
		got[o.Target.Input] = o
		mu.Unlock()
	})
	if err != nil || sum.Targets != 3 {
		t.Fatalf("summary %+v, %v", sum, err)
	}

	o := got["play.test"]
	if o == nil || o.Status != StatusAnswered || o.Result.Addr != mc.Addr() {
		t.Fatalf("play.test: %+v, want answered at %v", o, mc.Addr())
	}
	m, _ := o.Result.Detail.(*result.Minecraft)
	if m == nil || m.Target != (slp.Target{Host: "mc7.host.test", Port: mc.Addr().Port(), SRV: true}) {
		t.Errorf("play.test answered as %+v, want the SRV target, from the record", m)
	}

	o = got[direct]
	if o == nil || o.Status != StatusAnswered || o.Result.Addr != mc.Addr() {
		t.Errorf("%s: %+v, want answered at %v", direct, o, mc.Addr())
	}
	if n := dns.Asked("SRV", srvOwner(p, "direct.test")); n != 0 {
		t.Errorf("%s: the SRV record was looked up %d times; a port was given", direct, n)
	}

	o = got["plain.test"]
	want := netip.AddrPortFrom(loopback, p.DefaultPort)
	if o == nil || o.Result.Addr != want {
		t.Errorf("plain.test: %+v, want asked at %v", o, want)
	}
	if n := dns.Asked("SRV", srvOwner(p, "plain.test")); n == 0 {
		t.Error("plain.test: its SRV record was not looked up")
	}
}
