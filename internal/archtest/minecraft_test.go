package archtest

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// The conventions of TestTimeoutIsNetError and TestRetriesAgree, on the
// Minecraft packages (kept in a file of their own).

func TestMinecraftTimeoutIsNetError(t *testing.T) {
	t.Parallel()
	udp := addrOf(silentUDP(t))
	tcp := netip.MustParseAddrPort(silentTCP(t))
	t.Run("slp", func(t *testing.T) {
		t.Parallel()
		_, err := (&slp.Client{Timeout: short}).Status(testutil.Context(t), tcp)
		checkTimeout(t, "slp", err, slp.ErrTimeout, tcp.String())
	})
	t.Run("mcquery", func(t *testing.T) {
		t.Parallel()
		_, _, err := (&mcquery.Client{Timeout: short, Retries: -1}).BasicStat(testutil.Context(t), udp)
		checkTimeout(t, "mcquery", err, mcquery.ErrTimeout, udp.String())
	})
	t.Run("bedrock", func(t *testing.T) {
		t.Parallel()
		_, err := (&bedrock.Client{Timeout: short, Retries: -1}).Status(testutil.Context(t), udp)
		checkTimeout(t, "bedrock", err, bedrock.ErrTimeout, udp.String())
	})
}

func TestMinecraftRetriesAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		pkg      string
		def      int
		exchange func(ctx context.Context, retries int, addr netip.AddrPort)
	}{
		{"mcquery", mcquery.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			_, _, _ = (&mcquery.Client{Timeout: short, Retries: retries}).BasicStat(ctx, addr)
		}},
		{"bedrock", bedrock.DefaultRetries, func(ctx context.Context, retries int, addr netip.AddrPort) {
			_, _ = (&bedrock.Client{Timeout: short, Retries: retries}).Status(ctx, addr)
		}},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			t.Parallel()
			for _, retries := range []int{-1, 1, 0} {
				srv := silentUDP(t)
				tc.exchange(testutil.Context(t), retries, addrOf(srv))
				want := 1 + retries
				switch {
				case retries == 0:
					want = 1 + tc.def
				case retries < 0:
					want = 1
				}
				if got := received(t, srv); got != want {
					t.Errorf("Retries %d: %d datagrams sent, want %d", retries, got, want)
				}
			}
		})
	}
}

// The Minecraft servers report the address they are bound to, and the
// fake its ports.
func TestMinecraftServersReportBoundAddress(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, name string, got, want net.Addr) {
		t.Helper()
		if got == nil || got.String() != want.String() {
			t.Errorf("%s: LocalAddr() = %v, want %v", name, got, want)
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, _ := slp.NewStaticHandler(&slp.Status{Description: slp.TextDescription("x")})
	s := &slp.Server{Handler: h}
	served := make(chan error, 1)
	go func() { served <- s.Serve(l) }()
	if _, err := (&slp.Client{}).Status(testutil.Context(t), l.Addr().(*net.TCPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	check(t, "slp", s.LocalAddr(), l.Addr())
	_ = s.Shutdown(testutil.Context(t))
	<-served

	pc := silentUDP(t)
	read := make(chan struct{}, 1)
	q := &mcquery.Server{Debug: func(string, netip.AddrPort, []byte) {
		select {
		case read <- struct{}{}:
		default:
		}
	}}
	go func() { served <- q.Serve(pc) }()
	c, err := net.DialUDP("udp", nil, pc.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hs, _ := mcquery.Request{Type: mcquery.TypeHandshake, SessionID: 1}.AppendBinary(nil)
	c.Write(hs)
	select { // Serve runs once the handshake is read
	case <-read:
	case <-testutil.Context(t).Done():
		t.Fatal("the handshake was never read")
	}
	check(t, "mcquery", q.LocalAddr(), pc.LocalAddr())
	_ = q.Shutdown(testutil.Context(t))
	<-served

	pc = silentUDP(t)
	b := &bedrock.Server{Handler: bedrock.NewStaticHandler(&bedrock.Status{Edition: bedrock.Text("MCPE")})}
	go func() { served <- b.Serve(pc) }()
	if _, err := (&bedrock.Client{}).Status(testutil.Context(t), addrOf(pc)); err != nil {
		t.Fatal(err)
	}
	check(t, "bedrock", b.LocalAddr(), pc.LocalAddr())
	_ = b.Shutdown(testutil.Context(t))
	<-served

	for _, name := range mctest.ProfileNames() {
		srv := mctest.Start(t, name)
		for _, a := range []netip.AddrPort{srv.Addr(), srv.BedrockAddr()} {
			if a.IsValid() && (!a.Addr().IsLoopback() || a.Port() == 0) {
				t.Errorf("mctest %s: address %v, want a loopback address with its port", name, a)
			}
		}
		if !srv.Addr().IsValid() && !srv.BedrockAddr().IsValid() {
			t.Errorf("mctest %s: no address", name)
		}
	}
}
