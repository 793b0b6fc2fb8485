package cli

import (
	"encoding/json"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/ogp/ogptest"
)

func ogpServer(t *testing.T, profile string) *ogptest.Server {
	t.Helper()
	p, err := ogptest.LookupProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	s := ogptest.NewServer(p)
	t.Cleanup(s.Close)
	return s
}

func decodeOne(t *testing.T, stdout string) map[string]any {
	t.Helper()
	var got map[string]any
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	return got
}

// jsonString is a decoded JSON value as text, for comparisons.
func jsonString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case nil:
		return "<missing>"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestQueryOGPJSON(t *testing.T) {
	t.Parallel()
	srv := ogpServer(t, "v0.91")
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", "ogp", "--json", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	got := decodeOne(t, stdout)
	if got["target"] != srv.Addr().String() || got["address"] != srv.Addr().String() || got["protocol"] != "ogp" || got["dialect"] != "v0.91" || got["error"] != nil || got["ping_ms"] == nil {
		t.Fatalf("envelope: %v", got)
	}
	info := got["info"].(map[string]any)
	for k, want := range map[string]string{
		"game_id": "7", "game_name": "Test Game", "host_name": "gsq ogptest server", "os": "linux", "dedicated": "true",
		"connect_port": "7777", "game_type": "CTF", "players": "4", "max_players": "300", "bots": "1", "reserved_slots": "2",
	} {
		if v := jsonString(info[k]); v != want {
			t.Errorf("info.%s = %s, want %s", k, v, want)
		}
	}
	if m := info["map"].(map[string]any); m["name"] != "Fortress" || m["file"] != "ctf_fort" {
		t.Errorf("map %v", m)
	}
	if _, ok := info["password"]; ok {
		t.Error("v0.91 info has password")
	}
	if c := info["host_name_colors"].([]any); len(c) != 3 || jsonString(c[2].(map[string]any)["rgb565"]) != "63488" {
		t.Errorf("host_name_colors %v", c)
	}
	players := got["players"].([]any)
	p0 := players[0].(map[string]any)
	if len(players) != 4 || p0["name"] != "Zoë" || jsonString(p0["score"]) != "-20" || p0["address"] != "127.0.0.1" {
		t.Errorf("players %v", players)
	}
	if f := p0["flags"].([]any); len(f) != 2 || f[0] != "alive" || f[1] != "bot" {
		t.Errorf("flags %v", f)
	}
	teams := got["teams"].([]any)
	if len(teams) != 2 || teams[0].(map[string]any)["color"] != "#ff0000" {
		t.Errorf("teams %v", teams)
	}
	rules := got["rules"].([]any)
	if len(rules) != 2 || rules[1].(map[string]any)["value"] != "héllo" {
		t.Errorf("rules %v", rules)
	}
	limits := got["limits"].([]any)
	if l := limits[0].(map[string]any); l["type"] != "time" || jsonString(l["left"]) != "754" {
		t.Errorf("limits %v", limits)
	}
	if _, ok := limits[1].(map[string]any)["left"]; ok {
		t.Errorf("limit without bLimitLeft has left: %v", limits[1])
	}
	if a := got["addons"].([]any)[0].(map[string]any); a["short_name"] != "adm" {
		t.Errorf("addons %v", a)
	}
}

func TestQueryOGPFieldsAndV1(t *testing.T) {
	t.Parallel()
	srv := ogpServer(t, "v1")
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", "OGP", "--dialect", "v1", "--fields", "info,players", "--json", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	got := decodeOne(t, stdout)
	for _, absent := range []string{"teams", "rules", "addons", "limits"} {
		if _, ok := got[absent]; ok {
			t.Errorf("%s sent without being asked for", absent)
		}
	}
	info := got["info"].(map[string]any)
	mod := info["mod"].(map[string]any)
	if info["password"] != true || mod["identifier"] != "capture" || jsonString(mod["size"]) != "123456" {
		t.Errorf("v1 info %v", info)
	}
	if m := info["map"].(map[string]any); m["file_md5"] != "d41d8cd98f00b204e9800998ecf8427e" || m["author"] != "mapper" {
		t.Errorf("v1 map %v", m)
	}
	if p := got["players"].([]any)[1].(map[string]any); p["address"] != "127.0.0.2" {
		t.Errorf("v1 player %v", p)
	}
}

func TestQueryOGPTable(t *testing.T) {
	t.Parallel()
	srv := ogpServer(t, "split-out-of-order")
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", "ogp", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"gsq ogptest server", "Fortress", "players (60)", "player-59-with-a-long-name", "rules (2)", "limits (2)", "teams (2)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "\x1b") {
		t.Error("escape codes in non-terminal output")
	}
}

func TestQueryOGPErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"query", "--protocol", "ogp", "127.0.0.1"},
		{"query", "--protocol", "ogp", "--fields", "info,bogus", "127.0.0.1:1"},
		{"query", "--protocol", "ogp", "--dialect", "v2", "127.0.0.1:1"},
		{"query", "--protocol", "ogp", "--fields", "info,mods", "127.0.0.1:1"},
	} {
		if code, _, _ := runGSQ(t, nil, nil, nil, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
	banned := ogpServer(t, "banned")
	code, stdout, _ := runGSQ(t, nil, nil, nil, "query", "--protocol", "ogp", "--json", banned.Addr().String())
	got := decodeOne(t, stdout)
	if code != ExitFailure || got["error"].(map[string]any)["kind"] != "refused" {
		t.Errorf("banned: exit %d, %v", code, got)
	}
	silent, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", "ogp", "--json", "--timeout", "50ms", "--retries", "0", silent.LocalAddr().String())
	got = decodeOne(t, stdout)
	if code != ExitTimeout || got["error"].(map[string]any)["kind"] != "timeout" || !strings.Contains(stderr, "hint") {
		t.Errorf("silent: exit %d, %v, stderr %q", code, got, stderr)
	}
}
