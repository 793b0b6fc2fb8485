package cli

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// gsq serve's Minecraft modes answer the three protocols with the
// content flags' server: the MOTD with its § codes, the counts, a sample
// with offline-mode UUIDs, every player over Query, the Bedrock pong.
func TestServeMinecraft(t *testing.T) {
	t.Parallel()
	c := sim.Content{Name: "§aMy server", MaxPlayers: 20, Map: "survival"}
	for _, n := range []string{"Steve", "Alex"} {
		c.Players = append(c.Players, sim.Player{Name: n})
	}
	m, err := startMinecraft("127.0.0.1:0", "127.0.0.1:0", c, nil, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.shutdown(context.Background()) })
	var cl protocol.Client
	defer cl.Close()
	ctx := testutil.Context(t)
	for _, tc := range []struct {
		p    *protocol.Protocol
		addr string
		want string
	}{
		{protocol.Minecraft, m.java.String(), `"sample":[{"name":"Steve","id":"5627dd98-e6be-3c21-b8a8-e92344183641","fake":false},{"name":"Alex"`},
		{protocol.MCQuery, m.java.String(), `"players":[{"name":"Steve"},{"name":"Alex"}]`},
		{protocol.Bedrock, m.bed.String(), `"level_name":"survival"`},
	} {
		addr := m.java
		if tc.p == protocol.Bedrock {
			addr = m.bed
		}
		r := cl.Ask(ctx, tc.p.MustPrepare(protocol.Settings{}), tc.addr, addr, protocol.Waits{Deadline: 5 * time.Second}, nil)
		js := string(r.AppendJSON(nil))
		if r.Err != nil || *r.Summary.Name != "My server" || *r.Summary.Players != 2 || *r.Summary.MaxPlayers != 20 || !strings.Contains(js, tc.want) {
			t.Errorf("%s: %s", tc.p.Name, js)
		}
		if tc.p == protocol.Minecraft && r.Detail.(*result.Minecraft).Status.Description.Legacy() != "§aMy server" {
			t.Errorf("the MOTD lost its codes: %s", js)
		}
	}
}

// A burst of Bedrock pings from one address gets a bounded number of
// pongs, each at most 512 bytes: the pong has no challenge, so the
// budget per source keeps the server from amplifying.
func TestServeBedrockBounded(t *testing.T) {
	t.Parallel()
	m, err := startMinecraft("", "127.0.0.1:0", sim.Default(), nil, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.shutdown(context.Background()) })
	conn, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(m.bed))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const pings = 50
	for i := range pings {
		ping, _ := bedrock.Ping{Time: int64(i)}.AppendBinary(nil)
		conn.Write(ping)
	}
	pongs := 0
	buf := make([]byte, 2048)
	for {
		conn.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := conn.Read(buf)
		if err != nil {
			break
		}
		if n > bedrock.DefaultMaxPongSize {
			t.Errorf("a pong of %d bytes", n)
		}
		pongs++
	}
	if pongs == 0 || pongs >= pings/2 {
		t.Errorf("%d pongs to %d pings from one address", pongs, pings)
	}
}

func TestServeMinecraftUsage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--minecraft", "127.0.0.1:99999"}, "--minecraft \"127.0.0.1:99999\""},
		{[]string{"--bedrock", "nowhere:x"}, "--bedrock \"nowhere:x\""},
		{[]string{"--fleet", "2", "--minecraft", "127.0.0.1:0"}, "--minecraft does not apply to --fleet"},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, append([]string{"serve"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s", tc.args, code, stderr)
		}
	}
}

// --minecraft-profile plays an mctest profile, quirks included: status
// off, a proxy without pong, a 1.6 server (its connection quirk too),
// a Bedrock pong with an empty version; a profile without Query leaves
// the UDP port closed.
func TestServeMinecraftProfile(t *testing.T) {
	t.Parallel()
	var cl protocol.Client
	defer cl.Close()
	ctx := testutil.Context(t)
	ask := func(p *protocol.Protocol, addr netip.AddrPort) *result.Result {
		return cl.Ask(ctx, p.MustPrepare(protocol.Settings{}), addr.String(), addr, protocol.Waits{Timeout: 200 * time.Millisecond, Retries: -1, Deadline: 5 * time.Second}, nil)
	}
	for _, tc := range []struct {
		profile string
		check   func(m *minecraftServers) string
	}{
		{"status-off", func(m *minecraftServers) string {
			if r := ask(protocol.Minecraft, m.java); !r.Detail.(*result.Minecraft).NoStatus {
				return string(r.AppendJSON(nil))
			}
			if r := ask(protocol.MCQuery, m.java); r.Err == nil || r.Err.Kind != result.KindUnreachable {
				return "Query answered, or did not fail as a closed port: " + string(r.AppendJSON(nil))
			}
			return ""
		}},
		{"velocity", func(m *minecraftServers) string {
			if r := ask(protocol.Minecraft, m.java); r.Err != nil || r.Detail.(*result.Minecraft).Pong || !r.PlayersHidden() {
				return string(r.AppendJSON(nil))
			}
			return ""
		}},
		{"legacy-1.6", func(m *minecraftServers) string {
			if r := ask(protocol.Minecraft, m.java); r.Err != nil || r.Detail.(*result.Minecraft).Legacy == nil {
				return string(r.AppendJSON(nil))
			}
			return ""
		}},
		{"bedrock-empty-version", func(m *minecraftServers) string {
			if r := ask(protocol.Bedrock, m.bed); r.Err != nil || r.Summary.Version != nil || *r.Summary.Name != "GayBowser" {
				return string(r.AppendJSON(nil))
			}
			return ""
		}},
	} {
		p, err := mctest.LookupProfile(tc.profile)
		if err != nil {
			t.Fatal(err)
		}
		java, bed := "127.0.0.1:0", ""
		if p.NoJava {
			java = ""
		}
		if p.Bedrock {
			bed = "127.0.0.1:0"
		}
		m, err := startMinecraft(java, bed, sim.Default(), &p, 0, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		if msg := tc.check(m); msg != "" {
			t.Errorf("%s: %s", tc.profile, msg)
		}
		m.shutdown(context.Background())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--minecraft-profile", "vanilla"}, "--minecraft-profile needs --minecraft or --bedrock"},
		{[]string{"--minecraft", "127.0.0.1:0", "--minecraft-profile", "nope"}, "unknown profile"},
		{[]string{"--minecraft", "127.0.0.1:0", "--minecraft-profile", "vanilla", "--name", "x"}, "drop --name"},
		{[]string{"--minecraft", "127.0.0.1:0", "--minecraft-profile", "bedrock"}, "plays a Bedrock server only"},
		{[]string{"--bedrock", "127.0.0.1:0", "--minecraft-profile", "vanilla"}, "plays no Bedrock server"},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, append([]string{"serve"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %s", tc.args, code, stderr)
		}
	}
}
