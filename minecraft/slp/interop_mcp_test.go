//go:build interop

package slp_test

import (
	"encoding/json"
	"net/netip"
	"os/exec"
	"testing"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

func node(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	return bin
}

// TestInteropMinecraftProtocolServer has our client read the status of
// minecraft-protocol 1.54.0's server (installed by .ci/install-peers).
func TestInteropMinecraftProtocolServer(t *testing.T) {
	mod := peertest.Module(t, "minecraft-protocol")
	port := peertest.Start(t, node(t), "testdata/mcp-server.js", mod)
	addr, err := netip.ParseAddrPort("127.0.0.1:" + port)
	if err != nil {
		t.Fatalf("port %q: %v", port, err)
	}
	r, err := (&slp.Client{}).Status(testutil.Context(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Status
	if !r.Pong || s.Version.Name != "1.21.1" || *s.Version.Protocol != 767 || *s.Players.Max != 42 || *s.Players.Online != 0 ||
		s.Description.Text() != "minecraft-protocol server" || s.Description.Legacy() != "minecraft-protocol §aserver" || s.Favicon != nil {
		t.Errorf("%+v %+v", r, s)
	}
	// The legacy pings. minecraft-protocol answers them with its own
	// protocol, 767; the vanilla server sends 127 there, the marker of a
	// 1.7+ server (its LegacyQueryHandler; the field notes' §1.3), so
	// our client cannot tell minecraft-protocol from a 1.6 server. Who is
	// right is the vanilla server: this asserts the peer's behaviour, so
	// that a fix on its side shows up here.
	for _, v := range []slp.LegacyVariant{slp.Legacy14, slp.Legacy16} {
		r, err := (&slp.Client{Legacy: slp.LegacyOnly, LegacyVariant: v}).Status(testutil.Context(t), addr)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		if l := r.Legacy; *l.Protocol != 767 || l.Modern() || l.Version != "1.21.1" || l.MOTD != "minecraft-protocol §aserver" || l.Max != 42 {
			t.Errorf("%v: %+v", v, l)
		}
	}
}

// mcpPing is what minecraft-protocol's ping prints.
type mcpPing struct {
	Version struct {
		Name     string `json:"name"`
		Protocol int    `json:"protocol"`
	} `json:"version"`
	Players struct {
		Max    int `json:"max"`
		Online int `json:"online"`
		Sample []struct {
			Name string `json:"name"`
			ID   string `json:"id"`
		} `json:"sample"`
	} `json:"players"`
	Description json.RawMessage `json:"description"`
	Favicon     string          `json:"favicon"`
	Latency     *int            `json:"latency"`
}

// TestInteropMinecraftProtocolPing has minecraft-protocol's ping read
// our server (the fakes' slp.Server), and the pong come back.
func TestInteropMinecraftProtocolPing(t *testing.T) {
	mod := peertest.Module(t, "minecraft-protocol")
	for _, name := range []string{"vanilla", "byte-writes", "huge", "velocity"} {
		t.Run(name, func(t *testing.T) {
			srv := mctest.Start(t, name)
			out := peertest.Run(t, node(t), "testdata/mcp-ping.js", mod, srv.Addr().String())
			var got mcpPing
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v\n%.300s", err, out)
			}
			p, _ := mctest.LookupProfile(name)
			want := p.Status()
			if got.Version.Name != want.Version.Name || got.Players.Max != int(*want.Players.Max) || len(got.Players.Sample) != len(want.Players.Sample) {
				t.Errorf("%+v", got)
			}
			// The pong: a proxy closes instead, and the peer waits
			// noPongTimeout and reports no latency.
			if (got.Latency != nil) == p.NoPong {
				t.Errorf("latency %v, profile's NoPong %v", got.Latency, p.NoPong)
			}
			if want.Favicon != nil && want.Favicon.DataURL() != stripSpace(got.Favicon) {
				t.Error("favicon differs")
			}
		})
	}
}

func stripSpace(s string) string {
	out := make([]byte, 0, len(s))
	for i := range len(s) {
		if s[i] != '\n' {
			out = append(out, s[i])
		}
	}
	return string(out)
}
