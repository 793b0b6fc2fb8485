package slp_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

func status(t *testing.T, c *slp.Client, name string) *slp.Response {
	t.Helper()
	r, err := c.Status(testutil.Context(t), mctest.Start(t, name).Addr())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func TestVanilla(t *testing.T) {
	t.Parallel()
	r := status(t, &slp.Client{}, "vanilla")
	s := r.Status
	if !r.Pong || s.Version.Name != "1.21.1" || *s.Version.Protocol != 767 || *s.Players.Online != 3 || *s.Players.Max != 20 {
		t.Errorf("%+v %+v", r, s)
	}
	if got := s.Description.Text(); got != "A gsq Minecraft server" {
		t.Errorf("MOTD %q", got)
	}
	if got := s.Description.Legacy(); got != "A gsq §6§lMinecraft§r server" {
		t.Errorf("legacy MOTD %q", got)
	}
	if len(s.Players.Sample) != 3 || s.Players.Sample[0].Fake || s.Players.Sample[0].Name != "thinkofdeath" {
		t.Errorf("sample %+v", s.Players.Sample)
	}
	want := mctest.DefaultStatus().Favicon
	if s.Favicon == nil || s.Favicon.SHA256 != want.SHA256 || s.Favicon.Size != want.Size || s.Favicon.PNG != nil {
		t.Errorf("favicon %+v, want hash %s size %d and no image", s.Favicon, want.SHA256, want.Size)
	}
	if s.EnforcesSecureChat == nil || !*s.EnforcesSecureChat || r.Trailer != nil || r.Legacy != nil {
		t.Errorf("%+v", r)
	}
	// The image on request.
	r = status(t, &slp.Client{KeepFavicon: true}, "vanilla")
	if !bytes.Equal(r.Status.Favicon.PNG, want.PNG) {
		t.Error("KeepFavicon: the image is not the server's")
	}
}

// A server that closes right after the handshake is up, not answering
// status: not a timeout, not unreachable.
func TestNoStatus(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"status-off", "starting"} {
		srv := mctest.Start(t, name)
		_, err := (&slp.Client{}).Status(testutil.Context(t), srv.Addr())
		var op *slp.OpError
		if !errors.Is(err, slp.ErrNoStatus) || neterr.IsTimeout(err) || errors.Is(err, slp.ErrUnreachable) || !errors.As(err, &op) {
			t.Errorf("%s: %v, want ErrNoStatus alone", name, err)
		}
		if srv.Received() != 2 {
			t.Errorf("%s: %d connections, want the modern one and the legacy fallback", name, srv.Received())
		}
	}
}

// A proxy closes after the status: the round trip is the status's, and
// the version's protocol is the client's own, echoed.
func TestProxy(t *testing.T) {
	t.Parallel()
	r := status(t, &slp.Client{Protocol: 765}, "velocity")
	if r.Pong || *r.Status.Version.Protocol != 765 {
		t.Errorf("pong %v, protocol %d", r.Pong, *r.Status.Version.Protocol)
	}
	for _, p := range r.Status.Players.Sample {
		if !p.Fake {
			t.Errorf("hover line %+v not marked fake", p)
		}
	}
	if got := r.Status.Description.Text(); got != "A gsq proxy\ntwo lines" {
		t.Errorf("MOTD %q", got)
	}
	if r = status(t, &slp.Client{}, "velocity"); *r.Status.Version.Protocol != slp.DefaultProtocol {
		t.Errorf("default protocol %d", *r.Status.Version.Protocol)
	}
}

// A 1.6 server closes a modern handshake: the client falls back to the
// legacy ping; with LegacyNever it reports the server up but silent.
func TestLegacyServer(t *testing.T) {
	t.Parallel()
	srv := mctest.Start(t, "legacy-1.6")
	r, err := (&slp.Client{}).Status(testutil.Context(t), srv.Addr())
	if err != nil || r.Legacy == nil || r.Status != nil {
		t.Fatalf("%+v %v", r, err)
	}
	if l := r.Legacy; *l.Protocol != 78 || l.Modern() || l.Version != "1.6.4" || l.MOTD != "A §6legacy§r server" || l.Online != 2 || l.Max != 20 {
		t.Errorf("%+v", l)
	}
	if _, err := (&slp.Client{Legacy: slp.LegacyNever}).Status(testutil.Context(t), srv.Addr()); !errors.Is(err, slp.ErrNoStatus) {
		t.Errorf("LegacyNever: %v", err)
	}
	before := srv.Received()
	for _, v := range []slp.LegacyVariant{slp.LegacyBeta, slp.Legacy14, slp.Legacy16} {
		r, err := (&slp.Client{Legacy: slp.LegacyOnly, LegacyVariant: v}).Status(testutil.Context(t), srv.Addr())
		motd := "A §6legacy§r server"
		if v == slp.LegacyBeta {
			motd = "A legacy server" // § separates the beta format's fields: the codes are dropped
		}
		if err != nil || r.Legacy.MOTD != motd || r.Legacy.Online != 2 || (v == slp.LegacyBeta) != (r.Legacy.Protocol == nil) {
			t.Errorf("%v: %+v %v", v, r, err)
		}
	}
	if n := srv.Received() - before; n != 3 {
		t.Errorf("LegacyOnly: %d connections for 3 pings: a modern handshake went out", n)
	}
}

// A modern server answers legacy pings with protocol 127, which is not
// its protocol.
func TestLegacyPingModernServer(t *testing.T) {
	t.Parallel()
	r := status(t, &slp.Client{Legacy: slp.LegacyOnly}, "vanilla")
	if !r.Legacy.Modern() || r.Legacy.Version != "1.21.1" || r.Legacy.MOTD != "A gsq §6§lMinecraft§r server" || r.Legacy.Max != 20 {
		t.Errorf("%+v", r.Legacy)
	}
}

func TestForge(t *testing.T) {
	t.Parallel()
	m := status(t, &slp.Client{}, "forge-1.12").Status.Mods
	if m == nil || m.Kind != "modinfo" || m.Type != "FML" || len(m.Mods) != 5 || m.Mods[4] != (slp.Mod{ID: "jei", Version: "4.16.1.302"}) {
		t.Errorf("FML1: %+v", m)
	}
	m = status(t, &slp.Client{}, "forge").Status.Mods
	if m == nil || m.Kind != "forgeData" || !m.Compressed || m.Err != nil || len(m.Mods) != 42 || len(m.Channels) != 42 || *m.FMLNetworkVersion != 3 {
		t.Fatalf("compressed forgeData: %+v", m)
	}
	if got := m.Mods[5]; got != (slp.Mod{ID: "gsqmod003", IgnoreServerOnly: true}) {
		t.Errorf("mod 5: %+v", got)
	}
	if got := m.Mods[4]; got != (slp.Mod{ID: "gsqmod002", Version: "1.2.0"}) {
		t.Errorf("mod 4: %+v", got)
	}
	if s := status(t, &slp.Client{}, "neoforge").Status; s.IsModded == nil || !*s.IsModded || s.Mods != nil {
		t.Errorf("NeoForge: %+v", s)
	}
}

// The Better Compatibility Checker's string after the JSON is kept raw.
func TestTrailer(t *testing.T) {
	t.Parallel()
	r := status(t, &slp.Client{}, "bcc")
	want, _ := mctest.LookupProfile("bcc")
	if !bytes.Equal(r.Trailer, want.Trailer) || r.Status.Version.Name != "1.21.1" {
		t.Errorf("trailer %q", r.Trailer)
	}
}

// Replies one byte per write, and a 100 KB status, are read whole.
func TestFraming(t *testing.T) {
	t.Parallel()
	r := status(t, &slp.Client{}, "byte-writes")
	if !r.Pong || r.Status.Description.Text() != "A gsq Minecraft server" {
		t.Errorf("%+v", r)
	}
	r = status(t, &slp.Client{}, "huge")
	if len(r.JSON) < 100_000 || r.Status.Favicon == nil || r.Status.Favicon.Malformed || r.Status.Favicon.Size != 50000 || len(r.Status.Mods.Mods) != 1002 {
		t.Errorf("%d bytes, favicon %+v", len(r.JSON), r.Status.Favicon)
	}
	if _, err := (&slp.Client{MaxResponseSize: 64 << 10}).Status(testutil.Context(t), mctest.Start(t, "huge").Addr()); !errors.Is(err, slp.ErrTooLarge) {
		t.Errorf("MaxResponseSize 64 KiB: %v", err)
	}
}

func TestDebug(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var dirs []string
	c := &slp.Client{Debug: func(dir string, _ netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		dirs = append(dirs, dir)
	}}
	status(t, c, "vanilla")
	mu.Lock()
	defer mu.Unlock()
	if len(dirs) != 4 || dirs[0] != "send" || dirs[1] != "recv" || dirs[2] != "send" || dirs[3] != "recv" {
		t.Errorf("Debug saw %v, want send recv send recv", dirs)
	}
}

// silentTCP accepts connections and never answers.
func silentTCP(t *testing.T) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().(*net.TCPAddr).AddrPort()
}

func TestTimeoutAndRefused(t *testing.T) {
	t.Parallel()
	addr := silentTCP(t)
	_, err := (&slp.Client{Timeout: 50 * time.Millisecond}).Status(testutil.Context(t), addr)
	if !errors.Is(err, slp.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || !neterr.IsTimeout(err) {
		t.Errorf("silent server: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err = (&slp.Client{}).Status(ctx, addr)
	if !errors.Is(err, slp.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("context deadline: %v", err)
	}
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := l.Addr().(*net.TCPAddr).AddrPort()
	l.Close()
	if _, err := (&slp.Client{}).Status(testutil.Context(t), closed); !errors.Is(err, slp.ErrUnreachable) || neterr.IsTimeout(err) {
		t.Errorf("closed port: %v", err)
	}
}

// The PROXY header, v1 and v2, names the client to a server that expects
// one; a client without it is dropped.
func TestProxyProtocol(t *testing.T) {
	t.Parallel()
	seen := make(chan netip.AddrPort, 4)
	h, _ := slp.NewStaticHandler(mctest.DefaultStatus())
	srv := &slp.Server{ProxyProtocol: true, Handler: slp.HandlerFunc(func(r *slp.Request) *slp.Reply {
		seen <- r.RemoteAddr
		return h.ServeStatus(r)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := l.Addr().(*net.TCPAddr).AddrPort()
	for _, v := range []int{1, 2} {
		var local netip.AddrPort
		d := &net.Dialer{Control: nil}
		c := &slp.Client{ProxyProtocol: v, Dialer: d, Debug: func(dir string, _ netip.AddrPort, b []byte) {}}
		r, err := c.Status(testutil.Context(t), addr)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		local = <-seen
		if !local.Addr().IsLoopback() || local.Port() == addr.Port() || r.Status == nil {
			t.Errorf("v%d: the server saw %v", v, local)
		}
	}
	if _, err := (&slp.Client{Legacy: slp.LegacyNever}).Status(testutil.Context(t), addr); !errors.Is(err, slp.ErrNoStatus) {
		t.Errorf("no header: %v", err)
	}
}
