package protocol_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// Server List Ping through the registry's stream path: the vanilla fake's
// status fills the Summary and lists its sample; a server that closes
// after the handshake is up, not answering status (ErrNoStatus, kind
// protocol); a proxy's hover-text sample hides the players; a 1.6
// server answers the legacy ping.
func TestClientAsksMinecraft(t *testing.T) {
	t.Parallel()
	var c protocol.Client
	defer c.Close()
	q := protocol.Minecraft.MustPrepare(protocol.Settings{})
	ask := func(profile string) *result.Result {
		srv := mctest.Start(t, profile)
		return c.Ask(testutil.Context(t), q, srv.Addr().String(), srv.Addr(), protocol.Waits{Deadline: 5 * time.Second}, nil)
	}

	r := ask("vanilla")
	d, _ := r.Detail.(*result.Minecraft)
	if r.Err != nil || d == nil || d.Status == nil || !d.Pong || r.Ping <= 0 {
		t.Fatalf("vanilla: %+v, %v", r, r.Err)
	}
	if *r.Summary.Name != "A gsq Minecraft server" || *r.Summary.Players != 3 || *r.Summary.MaxPlayers != 20 || *r.Summary.Version != "1.21.1" {
		t.Errorf("vanilla summary %s", r.Summary.AppendJSON(nil))
	}
	if l := r.PlayerList(); len(l) != 3 || l[0].Name != "thinkofdeath" || d.PlayersHidden() {
		t.Errorf("vanilla players %+v (hidden %v)", l, d.PlayersHidden())
	}

	// A host name with a port: the handshake names it, and the result
	// says which target answered.
	srv := mctest.Start(t, "vanilla")
	named := "localhost:" + strconv.Itoa(int(srv.Addr().Port()))
	r = c.Ask(testutil.Context(t), q, named, srv.Addr(), protocol.Waits{}, nil)
	if js := string(r.AppendJSON(nil)); r.Err != nil || !strings.Contains(js, `"target":{"host":"localhost","port":`+strconv.Itoa(int(srv.Addr().Port()))+`,"srv":false}`) {
		t.Errorf("named target: %s", js)
	}

	r = ask("status-off")
	if r.Err == nil || r.Err.Kind != result.KindProtocol || !errors.Is(r.Err, slp.ErrNoStatus) || r.Detail.Answered() {
		t.Errorf("status-off: %+v, %v", r, r.Err)
	}

	r = ask("velocity")
	d, _ = r.Detail.(*result.Minecraft)
	if r.Err != nil || d.Pong || r.PlayerList() != nil || !d.PlayersHidden() {
		t.Errorf("velocity: pong %v, players %v, hidden %v, %v", d.Pong, r.PlayerList(), d.PlayersHidden(), r.Err)
	}

	r = ask("legacy-1.6")
	d, _ = r.Detail.(*result.Minecraft)
	if r.Err != nil || d.Legacy == nil || d.Status != nil || r.PlayerList() != nil || r.Summary.Players == nil {
		t.Errorf("legacy-1.6: %+v, %v", d, r.Err)
	}
}

// The options reach the exchange: the favicon's image on request, the
// handshake's protocol (a proxy echoes it), and bad values are errors.
func TestMinecraftOptions(t *testing.T) {
	t.Parallel()
	var c protocol.Client
	defer c.Close()
	srv := mctest.Start(t, "velocity")
	q := protocol.Minecraft.MustPrepare(protocol.Settings{Options: map[string]string{"version": "765"}})
	r := c.Ask(testutil.Context(t), q, srv.Addr().String(), srv.Addr(), protocol.Waits{}, nil)
	if js := string(r.AppendJSON(nil)); !strings.Contains(js, `"version":{"name":`) || !strings.Contains(js, `"protocol":765}`) {
		t.Errorf("the proxy did not echo 765: %s", js)
	}
	van := mctest.Start(t, "vanilla")
	noPing := protocol.Minecraft.MustPrepare(protocol.Settings{Options: map[string]string{"ping": "off"}})
	if r := c.Ask(testutil.Context(t), noPing, van.Addr().String(), van.Addr(), protocol.Waits{}, nil); r.Err != nil || r.Detail.(*result.Minecraft).Pong {
		t.Errorf("ping=off: %s", r.AppendJSON(nil))
	}
	for _, opt := range []string{"hash", "image"} {
		q := protocol.Minecraft.MustPrepare(protocol.Settings{Options: map[string]string{"favicon": opt}})
		r := c.Ask(testutil.Context(t), q, van.Addr().String(), van.Addr(), protocol.Waits{}, nil)
		js := string(r.AppendJSON(nil))
		if !strings.Contains(js, `"sha256":"`) || strings.Contains(js, `"data_b64"`) != (opt == "image") {
			t.Errorf("favicon %s: %s", opt, js)
		}
	}
	for _, bad := range []map[string]string{{"version": "new"}, {"favicon": "png"}, {"legacy": "sometimes"}, {"dialect": "v1"}} {
		if _, err := protocol.Minecraft.Prepare(protocol.Settings{Options: bad}); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

// Query and Bedrock through the shared socket: the full stat lists every
// player; the basic stat, asked for info alone, lists none; a Bedrock
// pong fills the Summary; Query on a Bedrock-only port times out.
func TestClientAsksMCQueryAndBedrock(t *testing.T) {
	t.Parallel()
	var c protocol.Client
	defer c.Close()
	van := mctest.Start(t, "vanilla")
	full := protocol.MCQuery.MustPrepare(protocol.Settings{})
	r := c.Ask(testutil.Context(t), full, "mc", van.Addr(), protocol.Waits{}, nil)
	if r.Err != nil || len(r.PlayerList()) != 3 || *r.Summary.Players != 3 || *r.Summary.Map != "world" || *r.Summary.Version != "1.21.1" {
		t.Errorf("full stat: %s, %v", r.AppendJSON(nil), r.Err)
	}
	basic := protocol.MCQuery.MustPrepare(protocol.Settings{Sections: []result.Section{result.SectionInfo}})
	r = c.Ask(testutil.Context(t), basic, "mc", van.Addr(), protocol.Waits{}, nil)
	if r.Err != nil || r.PlayerList() != nil || *r.Summary.Players != 3 || r.Summary.Version != nil {
		t.Errorf("basic stat: %s, %v", r.AppendJSON(nil), r.Err)
	}

	be := mctest.Start(t, "bedrock")
	r = c.Ask(testutil.Context(t), protocol.Bedrock.MustPrepare(protocol.Settings{}), "be", be.BedrockAddr(), protocol.Waits{}, nil)
	if r.Err != nil || r.Summary.Name == nil || r.Summary.Players == nil || r.PlayerList() != nil {
		t.Errorf("bedrock: %s, %v", r.AppendJSON(nil), r.Err)
	}
	r = c.Ask(testutil.Context(t), full, "be", be.BedrockAddr(), protocol.Waits{Timeout: 50 * time.Millisecond, Retries: -1}, nil)
	if r.Err == nil || r.Err.Kind != result.KindTimeout || r.SectionErr(result.SectionPlayers) == nil {
		t.Errorf("Query of a Bedrock server: %s", r.AppendJSON(nil))
	}
}

// BenchmarkAskMinecraft asks the vanilla fake for its status through the
// registry's stream path (a connection, the status, the ping and pong)
// and encodes the result as gsq scan does: the cost per server of a
// Minecraft scan, the server's included (it runs in this process).
func BenchmarkAskMinecraft(b *testing.B) {
	srv := mctest.Start(b, "vanilla")
	var c protocol.Client
	defer c.Close()
	q := protocol.Minecraft.MustPrepare(protocol.Settings{})
	target := srv.Addr().String()
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		r := c.Ask(b.Context(), q, target, srv.Addr(), protocol.Waits{}, nil)
		if r.Err != nil {
			b.Fatal(r.Err)
		}
		buf = r.AppendJSON(buf[:0])
	}
}

// --option proxy-protocol=1|2 sends a PROXY header first, which a server
// behind HAProxy expects; without it such a server closes the
// connection.
func TestMinecraftProxyProtocol(t *testing.T) {
	t.Parallel()
	h, err := slp.NewStaticHandler(mctest.DefaultStatus())
	if err != nil {
		t.Fatal(err)
	}
	srv := &slp.Server{Handler: h, ProxyProtocol: true}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := l.Addr().(*net.TCPAddr).AddrPort()
	var c protocol.Client
	defer c.Close()
	for _, v := range []string{"0", "1", "2"} {
		q := protocol.Minecraft.MustPrepare(protocol.Settings{Options: map[string]string{"proxy-protocol": v}})
		r := c.Ask(testutil.Context(t), q, addr.String(), addr, protocol.Waits{Deadline: 5 * time.Second}, nil)
		if (r.Err == nil) != (v != "0") {
			t.Errorf("proxy-protocol=%s: %v", v, r.Err)
		}
	}
}
