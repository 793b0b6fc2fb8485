package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/master/mastertest"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// testSteamKey is the fake's key: long and distinctive, so that any
// message holding it is caught.
const testSteamKey = "0123SECRETKEY4567890ABCDEF012345"

// discoverFleet is n servers of app 892970 (Valheim) whose flags, maps and
// regions vary with their index, so that partitions split them.
func discoverFleet(n int) *serverlist.Fleet {
	maps := []string{"Meadows", "Black Forest", "Swamp", "Mountain"}
	servers := make([]serverlist.Server, n)
	for i := range servers {
		servers[i] = serverlist.Server{
			Addr:     netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 9, byte(i >> 8), byte(i)}), 2457),
			GamePort: 2456, SteamID: 90000000000000000 + uint64(i), Name: fmt.Sprintf("viking %d", i), AppID: 892970,
			GameDir: "valheim", Region: []serverlist.Region{serverlist.RegionEurope, serverlist.RegionUSEast}[i%2],
			Players: i % 4, MaxPlayers: 10, Map: maps[i/3%len(maps)], Secure: i%2 == 0, Dedicated: i%5 != 0,
			OS: []string{"l", "w"}[i/3%2], GameType: "pvp,hardcore",
		}
	}
	return serverlist.NewFleet(servers)
}

// webAPIArgs are the arguments of gsq discover against the fake srv.
func webAPIArgs(srv *steamapitest.Server, more ...string) []string {
	return append([]string{"discover", "--api-url", srv.URL(), "--interval", "0"}, more...)
}

// targetLines are the targets of a target list (comments skipped).
func targetLines(out string) []string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	return lines
}

func TestDiscoverWebAPI(t *testing.T) {
	fleet := discoverFleet(40)
	srv := steamapitest.NewServer(steamapitest.Profile{}, fleet, testSteamKey)
	defer srv.Close()

	code, stdout, stderr := runGSQ(t, nil, nil, nil, webAPIArgs(srv, "--key", testSteamKey, "--game", "valheim")...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want []string
	for _, s := range fleet.Servers() {
		want = append(want, s.Addr.String())
	}
	if got := targetLines(stdout); !slices.Equal(got, want) {
		t.Errorf("targets:\n%q\nwant\n%q", got, want)
	}
	if q := srv.Queries(); len(q) != 1 || !strings.Contains(q[0], `filter=%5Cappid%5C892970`) {
		t.Errorf("--game valheim asked %q, want the filter \\appid\\892970", q)
	}
	if !strings.Contains(stderr, "listed 40 servers from the Steam Web API in 1 request") {
		t.Errorf("summary: %s", stderr)
	}

	// --json: what the list said; --region drops the others; --limit.
	code, stdout, stderr = runGSQ(t, nil, nil, map[string]string{"STEAM_API_KEY": testSteamKey},
		webAPIArgs(srv, "--appid", "892970", "--json", "--region", "us-east", "--limit", "5", "--filter", `\dedicated\1`)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 {
		t.Fatalf("--limit 5 wrote %d lines:\n%s", len(lines), stdout)
	}
	for _, l := range lines {
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		addr := netip.MustParseAddrPort(o["addr"].(string))
		s, ok := fleet.Lookup(addr)
		if !ok {
			t.Fatalf("%s is not in the fleet", addr)
		}
		if o["region"] != "us-east" || o["name"] != s.Name || o["map"] != s.Map || o["steamid"] != fmt.Sprint(s.SteamID) ||
			o["game_port"] != 2456.0 || o["query_port"] != 2457.0 || o["players"] != float64(s.Players) || o["dedicated"] != true ||
			fmt.Sprint(o["tags"]) != "[pvp hardcore]" || o["source"] != "steamapi" || o["relay"] != nil {
			t.Errorf("%s: %v, want %+v", addr, o, s)
		}
	}
	if !strings.Contains(stderr, "stopped at --limit 5") || !strings.Contains(stderr, "of another region, dropped") {
		t.Errorf("summary: %s", stderr)
	}
}

func TestDiscoverPartitionsAndCutShort(t *testing.T) {
	// 12,000 servers, 10,000 an answer, the real API's cap: the first
	// answer comes back full, and gsq lists the rest in two halves, each
	// server once.
	fleet := discoverFleet(12_000)
	srv := steamapitest.NewServer(steamapitest.Profile{}, fleet, testSteamKey)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, webAPIArgs(srv, "--key", testSteamKey)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := targetLines(stdout)
	slices.Sort(got)
	if len(got) != 12_000 || len(slices.Compact(got)) != 12_000 {
		t.Errorf("listed %d servers (%d distinct), want 12000", len(got), len(slices.Compact(got)))
	}
	if q := srv.Queries(); len(q) != 3 || !strings.Contains(q[1], "secure") {
		t.Errorf("asked %d requests, want the whole and two halves: %q", len(q), q)
	}

	// 10,001 servers alike in every way a partition splits by: the list
	// cannot be completed, and gsq says so.
	same := make([]serverlist.Server, 10_001)
	for i := range same {
		same[i] = serverlist.Server{Addr: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 8, byte(i >> 8), byte(i)}), 27015), AppID: 240, Map: "de_dust2", Players: 1, MaxPlayers: 2}
	}
	fleet.Set(same)
	code, stdout, stderr = runGSQ(t, nil, nil, nil, webAPIArgs(srv, "--key", testSteamKey)...)
	if code != ExitFailure || !strings.Contains(stderr, "the list is incomplete") || !strings.Contains(stderr, "cap of 10000 servers") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
	if n := len(targetLines(stdout)); n != 10_000 {
		t.Errorf("a list cut short wrote %d targets, want the 10000 that came", n)
	}
}

func TestDiscoverRelays(t *testing.T) {
	fleet := discoverFleet(20)
	p, _ := steamapitest.LookupProfile("relays")
	srv := steamapitest.NewServer(p, fleet, testSteamKey)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, webAPIArgs(srv, "--key", testSteamKey)...)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	relays := 0
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if strings.HasPrefix(l, "169.254.") {
			t.Errorf("relay address written as a target: %s", l)
		}
		if strings.HasPrefix(l, "# relay 169.254.") {
			relays++
		}
	}
	if relays == 0 || len(targetLines(stdout))+relays != 20 || !strings.Contains(stderr, fmt.Sprintf("%d relay address", relays)) {
		t.Errorf("%d relays, %d targets; stderr %s", relays, len(targetLines(stdout)), stderr)
	}
	_, stdout, _ = runGSQ(t, nil, nil, nil, webAPIArgs(srv, "--key", testSteamKey, "--json")...)
	if n := strings.Count(stdout, `"relay":true`); n != relays {
		t.Errorf("--json flags %d relays, want %d", n, relays)
	}
}

// TestDiscoverKeyNeverShown runs every path a key takes (the flag, the
// environment, the config file; accepted, refused, throttled; --debug)
// and checks that no output holds it.
func TestDiscoverKeyNeverShown(t *testing.T) {
	fleet := discoverFleet(5)
	ok := steamapitest.NewServer(steamapitest.Profile{}, fleet, testSteamKey)
	defer ok.Close()
	// One request answered, then 429s asking for an hour: longer than gsq
	// waits, so the request fails at once.
	throttled := steamapitest.NewServer(steamapitest.Profile{LimitAfter: 1, LimitFor: 100, RetryAfter: time.Hour}, fleet, testSteamKey)
	defer throttled.Close()
	if code, _, stderr := runGSQ(t, nil, nil, nil, webAPIArgs(throttled, "--key", testSteamKey)...); code != ExitOK {
		t.Fatalf("first request: exit %d, %s", code, stderr)
	}
	html, _ := steamapitest.LookupProfile("html")
	notAPI := steamapitest.NewServer(html, fleet, testSteamKey)
	defer notAPI.Close()

	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "gsq"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gsq", "config.yaml"), []byte("steam:\n  api_key: "+testSteamKey+"\nservers: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := "WRONG" + testSteamKey[5:]
	for _, c := range []struct {
		name    string
		srv     *steamapitest.Server
		environ map[string]string
		args    []string
		code    int
		want    string
	}{
		{"flag", ok, nil, []string{"--key", testSteamKey}, ExitOK, "listed 5 servers"},
		{"env", ok, map[string]string{"STEAM_API_KEY": testSteamKey}, nil, ExitOK, "listed 5 servers"},
		{"config", ok, map[string]string{"XDG_CONFIG_HOME": dir}, nil, ExitOK, "listed 5 servers"},
		{"refused", ok, nil, []string{"--key", wrong}, ExitAuth, "check the key"},
		{"throttled", throttled, nil, []string{"--key", testSteamKey}, ExitFailure, "rate limited"},
		{"not the API", notAPI, nil, []string{"--key", testSteamKey}, ExitFailure, "check --api-url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, stdout, stderr := runGSQ(t, nil, nil, c.environ, webAPIArgs(c.srv, append(c.args, "--debug")...)...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, want %d and %q in:\n%s", code, c.code, c.want, stderr)
			}
			if !strings.Contains(stderr, "send -> GET ") {
				t.Errorf("--debug printed no request:\n%s", stderr)
			}
			for _, k := range []string{testSteamKey, wrong} {
				if strings.Contains(stdout+stderr, k) {
					t.Errorf("the key is shown:\n%s\n%s", stdout, stderr)
				}
			}
		})
	}
	// A key in a config file others may read: a hint, and it still works.
	shared := t.TempDir()
	if err := os.MkdirAll(filepath.Join(shared, "gsq"), 0o700); err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(shared, "gsq", "config.yaml"), "steam: {api_key: "+testSteamKey+"}\n")
	if err := os.Chmod(filepath.Join(shared, "gsq", "config.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runGSQ(t, nil, nil, map[string]string{"XDG_CONFIG_HOME": shared}, webAPIArgs(ok)...)
	if code != ExitOK || !strings.Contains(stderr, "others can read it; run: chmod 600") || strings.Contains(stderr, testSteamKey) {
		t.Errorf("readable config: exit %d, %s", code, stderr)
	}
	// No key anywhere: a usage error that says where to put one.
	code, _, stderr = runGSQ(t, nil, nil, nil, webAPIArgs(ok)...)
	if code != ExitUsage || !strings.Contains(stderr, "STEAM_API_KEY") {
		t.Errorf("no key: exit %d, %s", code, stderr)
	}
	// Valve's API is never asked faster than once a second.
	code, _, stderr = runGSQ(t, nil, nil, nil, "discover", "--key", testSteamKey, "--interval", "100ms")
	if code != ExitUsage || !strings.Contains(stderr, "once a second") {
		t.Errorf("--interval 100ms against Valve: exit %d, %s", code, stderr)
	}
}

func TestDiscoverMaster(t *testing.T) {
	fleet := discoverFleet(600) // three pages
	p, _ := mastertest.LookupProfile("open")
	srv := mastertest.NewServer(p, fleet)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "discover", "--master", srv.Addr().String(), "--region", "eu", "--game", "valheim")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var want []string
	fleet.Select(serverlist.Filter{}, serverlist.RegionEurope, 0, func(s *serverlist.Server) bool {
		want = append(want, s.Addr.String())
		return true
	})
	if got := targetLines(stdout); !slices.Equal(got, want) {
		t.Errorf("listed %d servers, want the %d of Europe", len(got), len(want))
	}
	code, stdout, _ = runGSQ(t, nil, nil, nil, "discover", "--master", srv.Addr().String(), "--json", "--limit", "3", "--filter", `\map\Swamp`)
	if code != ExitOK || strings.Count(stdout, `"source":"master"`) != 3 || !strings.Contains(stdout, `"query_port":2457`) {
		t.Errorf("exit %d, --json --limit 3:\n%s", code, stdout)
	}

	// A master that never answers: a timeout, exit 3, said in words.
	silent, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	code, _, stderr = runGSQ(t, nil, nil, nil, "discover", "--master", silent.LocalAddr().String(), "--timeout", "300ms")
	if code != ExitTimeout || !strings.Contains(stderr, "the master did not answer") {
		t.Errorf("silent master: exit %d, %s", code, stderr)
	}
	// A closed port: unreachable, exit 3 too.
	code, _, stderr = runGSQ(t, nil, nil, nil, "discover", "--master", "127.0.0.1:9", "--timeout", "300ms")
	if code != ExitTimeout || !strings.Contains(stderr, "unreachable") {
		t.Errorf("closed port: exit %d, %s", code, stderr)
	}
}

func TestDiscoverUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--game", "valhem"}, "did you mean valheim?"},
		{[]string{"--game", "asa"}, "Epic Online Services"},
		{[]string{"--game", "rust", "--appid", "1"}, "not both"},
		{[]string{"--filter", `\appid\x`}, "--filter"},
		{[]string{"--region", "mars"}, "--region"},
		{[]string{"--master", "127.0.0.1:1", "--key", "x"}, "applies to the Web API"},
		{[]string{"--api-url", "ftp://x"}, "--api-url"},
		{[]string{"--listed", "127.0.0.1:1", "--json"}, "does not apply to --listed"},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, append([]string{"discover"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, want 2 and %q in %s", c.args, code, c.want, stderr)
		}
	}
}

func TestDiscoverListed(t *testing.T) {
	fleet := discoverFleet(3)
	srv := steamapitest.NewServer(steamapitest.Profile{}, fleet, testSteamKey)
	defer srv.Close()
	s := fleet.Servers()[0]
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "discover", "--api-url", srv.URL(), "--listed", s.Addr.String())
	if code != ExitOK || !strings.HasPrefix(stdout, s.Addr.String()+": ") {
		t.Errorf("listed server: exit %d, %q %s", code, stdout, stderr)
	}
	srv.SetReject(s.Addr, "bad heartbeat")
	code, stdout, _ = runGSQ(t, nil, nil, nil, "discover", "--api-url", srv.URL(), "--listed", netip.AddrPortFrom(s.Addr.Addr(), 9999).String())
	if code != ExitFailure || stdout == "" {
		t.Errorf("unlisted port: exit %d, %q", code, stdout)
	}
}

// TestDiscoverStreams lists from a Web API whose answer never ends: the
// servers read so far are written while the answer is still coming, and
// Ctrl-C stops the listing.
func TestDiscoverStreams(t *testing.T) {
	p, _ := steamapitest.LookupProfile("endless")
	srv := steamapitest.NewServer(p, discoverFleet(3), testSteamKey)
	defer srv.Close()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	out := newWatchedBuffer("\n")
	env := testEnv(nil, nil)
	env.Stdout = out
	done := make(chan int, 1)
	go func() { done <- env.Run(ctx, webAPIArgs(srv, "--key", testSteamKey)) }()
	select {
	case <-out.seen:
	case code := <-done:
		t.Fatalf("discover ended (exit %d) before writing a server", code)
	case <-time.After(10 * time.Second):
		t.Fatal("no server written while the answer was coming")
	}
	cancel()
	if code := <-done; code != ExitInterrupted {
		t.Errorf("exit %d after Ctrl-C, want %d", code, ExitInterrupted)
	}
	if lines := targetLines(out.String()); len(lines) == 0 || netip.MustParseAddrPort(lines[0]).Port() == 0 {
		t.Errorf("output %q", out.String())
	}
}

// BenchmarkDiscoverOutput measures what writing one listed server costs,
// as a target line and as a JSON line.
func BenchmarkDiscoverOutput(b *testing.B) {
	s := discoverFleet(1).Servers()[0]
	for _, asJSON := range []bool{false, true} {
		b.Run(map[bool]string{false: "target", true: "json"}[asJSON], func(b *testing.B) {
			out := &discoverOutput{w: io.Discard, json: asJSON}
			b.ReportAllocs()
			for b.Loop() {
				out.server(&s, "steamapi")
			}
		})
	}
}
