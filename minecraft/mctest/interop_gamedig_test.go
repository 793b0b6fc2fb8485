//go:build interop

package mctest_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

// gamedigMC is the part of gamedig's minecraft state we check.
type gamedigMC struct {
	Name       string `json:"name"`
	Map        string `json:"map"`
	Version    string `json:"version"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers int    `json:"maxplayers"`
	Players    []struct {
		Name string `json:"name"`
	} `json:"players"`
	Raw struct {
		Vanilla *struct {
			Raw struct {
				BCC map[string]any `json:"bcc"`
			} `json:"raw"`
		} `json:"vanilla"`
		Gamespy *struct {
			NumPlayers int `json:"numplayers"`
		} `json:"gamespy"`
		Bedrock *struct {
			Name string `json:"name"`
		} `json:"bedrock"`
	} `json:"raw"`
}

func names(list []struct {
	Name string `json:"name"`
}) []string {
	var out []string
	for _, p := range list {
		out = append(out, p.Name)
	}
	slices.Sort(out)
	return out
}

// TestInteropGamedigJava has gamedig 5.3.3's minecraft type read a Java
// fake (Server List Ping and Query on one port; its Bedrock ping finds
// nothing there), and our clients read the same fake.
//
// Known gamedig behaviour: its minecraft type sends Query's handshake and
// its stat request from two different UDP ports, because its Query and
// Bedrock probes start at once and GlobalUdpSocket._getSocket opens a
// socket for each (lib/GlobalUdpSocket.js: the check for an open socket
// and the bind are apart by an await). The vanilla server keeps tokens
// per source address and port (QueryThreadGs4; field notes §2.3), and so
// does ours: the stat gets no answer, and gamedig reports the server from
// Server List Ping alone. When the race goes the other way, Query's answer
// must agree with ours. gamedig's gamespy3 protocol, on one socket, is
// checked against our Query server in TestInteropGamedigQuery.
func TestInteropGamedigJava(t *testing.T) {
	for _, name := range []string{"vanilla", "bcc", "geyser"} {
		t.Run(name, func(t *testing.T) {
			srv := mctest.Start(t, name)
			var g gamedigMC
			out := peertest.Gamedig(t, "minecraft", srv.Addr().String())
			if err := json.Unmarshal(out, &g); err != nil {
				t.Fatalf("%v\n%.300s", err, out)
			}
			st, err := (&slp.Client{}).Status(testutil.Context(t), srv.Addr())
			if err != nil {
				t.Fatal(err)
			}
			if g.Raw.Vanilla == nil || g.Raw.Bedrock != nil {
				t.Fatalf("answered: vanilla %v, bedrock %v", g.Raw.Vanilla != nil, g.Raw.Bedrock != nil)
			}
			s := st.Status
			wantNum, wantMax := int(*s.Players.Online), int(*s.Players.Max)
			var want []string
			for _, p := range s.Players.Sample {
				want = append(want, p.Name)
			}
			if g.Raw.Gamespy != nil {
				full, _, err := (&mcquery.Client{}).FullStat(testutil.Context(t), srv.Addr())
				if err != nil {
					t.Fatalf("gamedig read Query, we did not: %v", err)
				}
				wantNum, wantMax, want = int(full.NumPlayers()), int(full.MaxPlayers()), nil
				for _, p := range full.Players {
					want = append(want, p.UTF8())
				}
			} else {
				t.Log("gamedig sent Query's stat from another port than its handshake: no answer, as from a vanilla server")
			}
			slices.Sort(want)
			if g.Version != s.Version.Name || g.NumPlayers != wantNum || g.MaxPlayers != wantMax {
				t.Errorf("gamedig %+v; we read version %q, %d of %d", g, s.Version.Name, wantNum, wantMax)
			}
			if got := names(g.Players); !slices.Equal(got, want) {
				t.Errorf("players: gamedig %q, we %q", got, want)
			}
			if g.Raw.Gamespy == nil && g.Name != s.Description.Text() {
				t.Errorf("name: gamedig %q, we %q", g.Name, s.Description.Text())
			}
			if name == "bcc" {
				// gamedig skips the trailer's one-byte length and parses
				// the rest as JSON (raw.bcc); we keep it raw.
				var bcc map[string]any
				if err := json.Unmarshal(st.Trailer[1:], &bcc); err != nil || g.Raw.Vanilla.Raw.BCC["projectId"] != bcc["projectId"] || bcc["projectId"] != "gsq-pack" {
					t.Errorf("bcc: gamedig %v, ours %q", g.Raw.Vanilla.Raw.BCC, st.Trailer)
				}
			}
		})
	}
}

// gamedigQuery is the part of gamedig's gamespy3 state we check.
type gamedigQuery struct {
	Name       string `json:"name"`
	NumPlayers int    `json:"numplayers"`
	MaxPlayers int    `json:"maxplayers"`
	Players    []struct {
		Name string `json:"name"`
	} `json:"players"`
	Raw map[string]any `json:"raw"`
}

// TestInteropGamedigQuery has gamedig's gamespy3 protocol read our Query
// servers: vanilla, Geyser's key order and NULs, PocketMine's negative
// tokens (on its Bedrock port).
func TestInteropGamedigQuery(t *testing.T) {
	for _, name := range []string{"vanilla", "geyser", "pocketmine"} {
		t.Run(name, func(t *testing.T) {
			srv := mctest.Start(t, name)
			addr := srv.Addr()
			if name == "pocketmine" {
				addr = srv.BedrockAddr()
			}
			var g gamedigQuery
			out := peertest.Gamedig(t, "protocol-gamespy3", addr.String())
			if err := json.Unmarshal(out, &g); err != nil {
				t.Fatalf("%v\n%.300s", err, out)
			}
			full, _, err := (&mcquery.Client{}).FullStat(testutil.Context(t), addr)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, p := range full.Players {
				want = append(want, p.String())
			}
			slices.Sort(want)
			// gamespy3 reads text as Latin-1 (the minecraft type asks for
			// UTF-8): compare bytes, not characters.
			version := mustValue(full, "version")
			if name == "geyser" {
				// Known gamedig behaviour: a NUL in the MOTD ends it there,
				// and every key after it shifts by one (the NUL's rest
				// reads as a key, "version" as its value). Servers do send
				// NULs (field notes §2.4; mcstatus'
				// test_query_handles_unicode_motd_with_nulls), and mcstatus,
				// like us, ends the MOTD at the next known key.
				if latin1(g.Raw["hostname"]) != "Geyser " || latin1(g.Raw["version"]) == version {
					t.Errorf("gamedig read the NUL in the MOTD right: hostname %q, version %q", g.Raw["hostname"], g.Raw["version"])
				}
				if full.MOTD().String() != "Geyser \x00 \xa7bserver \xe9" {
					t.Errorf("our MOTD %q", full.MOTD())
				}
				version = ""
			}
			if latin1(g.Raw["version"]) != version && version != "" || g.NumPlayers != int(full.NumPlayers()) || g.MaxPlayers != int(full.MaxPlayers()) {
				t.Errorf("gamedig %+v; we %+v", g, full)
			}
			if got := latin1Names(g.Players); !slices.Equal(got, want) {
				t.Errorf("players: gamedig %q, we %q", got, want)
			}
		})
	}
}

func mustValue(s *mcquery.FullStat, key string) string {
	v, _ := s.Value(key)
	return v.String()
}

// latin1 is the bytes of a string gamedig decoded as Latin-1.
func latin1(v any) string {
	s, _ := v.(string)
	b := make([]byte, 0, len(s))
	for _, r := range s {
		b = append(b, byte(r))
	}
	return string(b)
}

func latin1Names(list []struct {
	Name string `json:"name"`
}) []string {
	var out []string
	for _, p := range list {
		out = append(out, latin1(p.Name))
	}
	slices.Sort(out)
	return out
}

// TestInteropGamedigBedrock has gamedig's mbe type read the Bedrock fakes,
// and our client read the same. (On PocketMine's port Query answers too,
// but gamedig's port race, see TestInteropGamedigJava, may lose it.)
func TestInteropGamedigBedrock(t *testing.T) {
	for _, name := range []string{"bedrock", "bedrock-empty-version", "pocketmine"} {
		t.Run(name, func(t *testing.T) {
			srv := mctest.Start(t, name)
			var g gamedigMC
			out := peertest.Gamedig(t, "mbe", srv.BedrockAddr().String())
			if err := json.Unmarshal(out, &g); err != nil {
				t.Fatalf("%v\n%.300s", err, out)
			}
			r, err := (&bedrock.Client{}).Status(testutil.Context(t), srv.BedrockAddr())
			if err != nil {
				t.Fatal(err)
			}
			if g.Raw.Bedrock == nil || g.Raw.Vanilla != nil || g.Raw.Gamespy != nil && name != "pocketmine" {
				t.Fatalf("answered: vanilla %v, gamespy %v, bedrock %v", g.Raw.Vanilla != nil, g.Raw.Gamespy != nil, g.Raw.Bedrock != nil)
			}
			s := r.Status
			if g.Raw.Bedrock.Name != s.MOTD.String() || g.Version != s.Version.String() || g.MaxPlayers != int(*s.Max) || g.Map != s.LevelName.String() {
				t.Errorf("gamedig %+v; we read %+v", g, s)
			}
		})
	}
}
