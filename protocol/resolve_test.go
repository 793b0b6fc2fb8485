package protocol_test

import (
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/protocol"
)

// A query whose protocol follows an SRV record resolves the targets that
// rule covers, and only those: a host name without a port, with the srv
// option not off. It asks the resolver of its context.
func TestResolveTargetSRV(t *testing.T) {
	t.Parallel()
	dns := testutil.StartDNS(t)
	p := protocol.Minecraft
	owner := "_" + p.SRV + "._tcp.play.test"
	dns.SetSRV(owner, &net.SRV{Target: "mc7.host.test.", Port: 25577})
	dns.SetA("mc7.host.test", netip.MustParseAddr("127.0.0.2"))
	ctx := protocol.WithResolver(testutil.Context(t), dns.Resolver())
	resolver := func(s protocol.Settings) protocol.TargetResolver {
		q, err := p.Prepare(s)
		if err != nil {
			t.Fatal(err)
		}
		tr, ok := q.(protocol.TargetResolver)
		if !ok {
			t.Fatalf("%s's query is no TargetResolver", p.Name)
		}
		return tr
	}
	q := resolver(protocol.Settings{})
	addr, own, err := q.ResolveTarget(ctx, "play.test")
	if want := netip.MustParseAddrPort("127.0.0.2:25577"); err != nil || !own || addr != want {
		t.Errorf("play.test: %v %v %v, want %v from the record", addr, own, err, want)
	}
	if _, own, err := q.ResolveTarget(ctx, "nowhere.test"); !own || !errors.Is(err, slp.ErrUnreachable) {
		t.Errorf("nowhere.test: own %v, %v; want unreachable", own, err)
	}
	off := resolver(protocol.Settings{Options: map[string]string{"srv": "off"}})
	for _, tc := range []struct {
		q      protocol.TargetResolver
		target string
	}{{q, "play.test:25565"}, {q, "127.0.0.1"}, {q, "[::1]:25565"}, {off, "play.test"}} {
		if addr, own, err := tc.q.ResolveTarget(ctx, tc.target); own || addr.IsValid() || err != nil {
			t.Errorf("%s: %v %v %v, want it left to the caller", tc.target, addr, own, err)
		}
	}
	if n := dns.Asked("SRV", owner); n != 1 {
		t.Errorf("the record was looked up %d times, want once", n)
	}
}
