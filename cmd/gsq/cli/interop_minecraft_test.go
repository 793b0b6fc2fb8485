//go:build interop

package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/sim"
)

// mcpScript is a script of minecraft/slp's interop tests, run with node.
func mcpScript(name string) string { return "../../../minecraft/slp/testdata/" + name }

func nodeBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	return bin
}

// gsq query --protocol minecraft reads the status of minecraft-protocol's
// server (npm, installed by .ci/install-peers). The peers disagree on the
// legacy ping: minecraft-protocol answers it with its own protocol (767),
// where the vanilla server answers 127, the marker of a 1.7+ server
// (LegacyQueryHandler; field notes §1.3). The vanilla server is right, so
// gsq, which reads 127 as "modern", reports minecraft-protocol's reply
// as an old server's version and protocol: this test writes that down.
func TestInteropQueryMinecraftProtocolServer(t *testing.T) {
	mod := peertest.Module(t, "minecraft-protocol")
	port := peertest.Start(t, nodeBin(t), mcpScript("mcp-server.js"), mod)
	addr := "127.0.0.1:" + port
	code, out, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--protocol", "minecraft", addr)
	if code != ExitOK || !strings.Contains(out, `"summary":{"name":"minecraft-protocol server","players":0,"max_players":42,"version":"1.21.1"}`) ||
		!strings.Contains(out, `"pong":true`) {
		t.Errorf("exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runGSQ(t, nil, nil, nil, "query", "--protocol", "minecraft", "--option", "legacy=only", addr)
	flat := strings.Join(strings.Fields(out), " ")
	if code != ExitOK || !strings.Contains(flat, "version 1.21.1 (protocol 767)") || strings.Contains(flat, "a 1.7+ server") {
		t.Errorf("legacy: exit %d\n%s", code, out)
	}
}

// mcpPingResult is the part of minecraft-protocol's ping we check.
type mcpPingResult struct {
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
	Latency     *int            `json:"latency"`
}

// startServeMinecraft runs gsq serve's Minecraft modes with players
// Steve and Alex, for the peers.
func startServeMinecraft(t *testing.T) *minecraftServers {
	t.Helper()
	c := sim.Content{Name: "gsq §bserve", MaxPlayers: 10, Players: []sim.Player{{Name: "Steve"}, {Name: "Alex"}}}
	m, err := startMinecraft("127.0.0.1:0", "127.0.0.1:0", c, nil, 0, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.shutdown(context.Background()) })
	return m
}

// minecraft-protocol's ping reads gsq serve --minecraft: the status, the
// sample with its UUIDs, and the pong (its latency).
func TestInteropServeMinecraftProtocolPing(t *testing.T) {
	mod := peertest.Module(t, "minecraft-protocol")
	m := startServeMinecraft(t)
	out := peertest.Run(t, nodeBin(t), mcpScript("mcp-ping.js"), mod, m.java.String())
	var got mcpPingResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v\n%.300s", err, out)
	}
	if got.Version.Name != "1.21.1" || got.Version.Protocol != 767 || got.Players.Online != 2 || got.Players.Max != 10 ||
		len(got.Players.Sample) != 2 || got.Players.Sample[0].Name != "Steve" || got.Players.Sample[0].ID != offlineUUID("Steve") ||
		got.Latency == nil || string(got.Description) != `"gsq §bserve"` {
		t.Errorf("%s", out)
	}
}

// gamedig's minecraft type reads gsq serve --minecraft, and its mbe type
// --bedrock; gsq reads the same, and both agree on the name, the counts,
// the version and the players.
func TestInteropServeGamedig(t *testing.T) {
	m := startServeMinecraft(t)
	var g struct {
		Name       string `json:"name"`
		Version    string `json:"version"`
		NumPlayers int    `json:"numplayers"`
		MaxPlayers int    `json:"maxplayers"`
		Players    []struct {
			Name string `json:"name"`
		} `json:"players"`
	}
	for _, tc := range []struct{ gamedig, proto, addr string }{
		{"minecraft", "minecraft", m.java.String()},
		{"mbe", "bedrock", m.bed.String()},
	} {
		out := peertest.Gamedig(t, tc.gamedig, tc.addr)
		if err := json.Unmarshal(out, &g); err != nil {
			t.Fatalf("%s: %v\n%.300s", tc.gamedig, err, out)
		}
		_, js, _ := runGSQ(t, nil, nil, nil, "query", "--json", "--protocol", tc.proto, tc.addr)
		var ours struct {
			Summary struct {
				Name       string `json:"name"`
				Players    int    `json:"players"`
				MaxPlayers int    `json:"max_players"`
				Version    string `json:"version"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(js), &ours); err != nil {
			t.Fatalf("%s: %v\n%s", tc.proto, err, js)
		}
		s := ours.Summary
		// Both strip the § codes from the name (gsq keeps them in
		// info.motd_legacy, gamedig in raw).
		if g.Name != s.Name || s.Name != "gsq serve" || g.NumPlayers != s.Players || g.MaxPlayers != s.MaxPlayers || g.Version != s.Version {
			t.Errorf("%s: gamedig %+v, gsq %+v", tc.gamedig, g, s)
		}
		var names []string
		for _, p := range g.Players {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		if want := map[string][]string{"minecraft": {"Alex", "Steve"}, "bedrock": nil}[tc.proto]; !slices.Equal(names, want) {
			t.Errorf("%s: gamedig's players %q, want %q", tc.gamedig, names, want)
		}
	}
}

// qstat's -gs4 reads gsq serve --minecraft's Query: the name (qstat
// drops the § of a colour code and keeps its letter, where the code is
// both characters: qstat is wrong, and gsq's summary strips both), the
// counts and every player.
func TestInteropServeQstat(t *testing.T) {
	bin, err := exec.LookPath("quakestat")
	if err != nil {
		t.Fatalf("qstat is not installed (apt-get install qstat, or run .ci/install-peers): %v", err)
	}
	m := startServeMinecraft(t)
	out := peertest.Run(t, bin, "-gs4", m.java.String(), "-P", "-R", "-json", "-timeout", "10")
	var got []struct {
		Status     string `json:"status"`
		Name       string `json:"name"`
		NumPlayers int    `json:"numplayers"`
		MaxPlayers int    `json:"maxplayers"`
		Players    []struct {
			Name string `json:"name"`
		} `json:"players"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got) != 1 {
		t.Fatalf("quakestat output (%v):\n%s", err, out)
	}
	q := got[0]
	var names []string
	for _, p := range q.Players {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	if q.Status != "online" || q.Name != "gsq bserve" || q.NumPlayers != 2 || q.MaxPlayers != 10 || !slices.Equal(names, []string{"Alex", "Steve"}) {
		t.Errorf("qstat: %s", out)
	}
	_, js, _ := runGSQ(t, nil, nil, nil, "query", "--json", "--protocol", "mcquery", m.java.String())
	if !strings.Contains(js, `"name":"gsq serve"`) {
		t.Errorf("gsq: %s", js)
	}
}
