package slp_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// fakeResolver answers SRV lookups from a table and every name with
// 127.0.0.1: no DNS is asked.
type fakeResolver struct {
	srv     map[string][]*net.SRV
	lookups []string
}

func (r *fakeResolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	r.lookups = append(r.lookups, "_"+service+"._"+proto+"."+name)
	recs, ok := r.srv[name]
	if !ok {
		return "", nil, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return name, recs, nil
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if host == "nowhere.test" {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// The vanilla client's SRV rule: looked up only without a port, targets by
// priority, the SRV target in the handshake, and the next target when one
// is unreachable.
func TestSRV(t *testing.T) {
	t.Parallel()
	hosts := make(chan string, 4)
	h, _ := slp.NewStaticHandler(mctest.DefaultStatus())
	addr := serve(t, &slp.Server{Handler: slp.HandlerFunc(func(r *slp.Request) *slp.Reply {
		hosts <- r.Handshake.Host
		return h.ServeStatus(r)
	})})
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closedPort := uint16(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	res := &fakeResolver{srv: map[string][]*net.SRV{
		"mc.test": {
			{Target: "backup.mc.test.", Port: addr.Port(), Priority: 20, Weight: 5},
			{Target: "play.mc.test.", Port: closedPort, Priority: 10, Weight: 5},
			{Target: "zero.mc.test.", Port: closedPort, Priority: 20, Weight: 0},
		},
	}}
	c := &slp.Client{Resolver: res}
	ts, err := c.Resolve(testutil.Context(t), "mc.test")
	if err != nil || len(ts) != 3 || ts[0].Host != "play.mc.test" || ts[1].Host != "backup.mc.test" || !ts[0].SRV {
		t.Fatalf("Resolve = %+v, %v; want play, then backup (weight 5 before weight 0)", ts, err)
	}
	// ResolveAddr gives the first target that resolves, and its address.
	tg, a, err := c.ResolveAddr(testutil.Context(t), "mc.test")
	if err != nil || tg.Host != "play.mc.test" || !tg.SRV || a != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), closedPort) {
		t.Errorf("ResolveAddr = %+v %v, %v; want play.mc.test at its port", tg, a, err)
	}
	if _, _, err := c.ResolveAddr(testutil.Context(t), "nowhere.test"); !errors.Is(err, slp.ErrUnreachable) {
		t.Errorf("ResolveAddr of a name that does not resolve: %v", err)
	}
	r, err := c.StatusHost(testutil.Context(t), "mc.test")
	if err != nil {
		t.Fatal(err)
	}
	if r.Target.Host != "backup.mc.test" || r.Target.Port != addr.Port() || !r.Target.SRV || r.Addr != addr {
		t.Errorf("answered by %+v at %v", r.Target, r.Addr)
	}
	if got := <-hosts; got != "backup.mc.test" {
		t.Errorf("the handshake named %q, want the SRV target", got)
	}
	// With a port, an IP address, or NoSRV, no SRV lookup.
	res.lookups = nil
	for _, tc := range []struct {
		in   string
		c    *slp.Client
		want slp.Target
	}{
		{"mc.test:" + addr.String()[len("127.0.0.1:"):], c, slp.Target{Host: "mc.test", Port: addr.Port()}},
		{"127.0.0.1", c, slp.Target{Host: "127.0.0.1", Port: 25565}},
		{"mc.test", &slp.Client{Resolver: res, NoSRV: true}, slp.Target{Host: "mc.test", Port: 25565}},
	} {
		ts, err := tc.c.Resolve(testutil.Context(t), tc.in)
		if err != nil || len(ts) != 1 || ts[0] != tc.want {
			t.Errorf("%s: %+v %v", tc.in, ts, err)
		}
	}
	if len(res.lookups) != 0 {
		t.Errorf("SRV looked up: %v", res.lookups)
	}
	// A name without SRV records is asked on 25565.
	if ts, _ := c.Resolve(testutil.Context(t), "plain.test"); len(ts) != 1 || ts[0] != (slp.Target{Host: "plain.test", Port: 25565}) {
		t.Errorf("no SRV: %+v", ts)
	}
	if _, err := c.StatusHost(testutil.Context(t), "nowhere.test:25565"); !errors.Is(err, slp.ErrUnreachable) {
		t.Errorf("a name that does not resolve: %v", err)
	}
	if _, err := c.Resolve(testutil.Context(t), "bad host:x"); err == nil {
		t.Error("a malformed address read")
	}
}
