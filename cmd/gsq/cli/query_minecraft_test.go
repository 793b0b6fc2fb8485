package cli

import (
	"strings"
	"testing"

	"github.com/gsq-project/gsq/minecraft/mctest"
)

// gsq query --protocol minecraft prints the status as a table: the MOTD,
// the version and counts, the favicon's size and hash, the sample with
// hover-text lines marked; a server that closes after the handshake is
// "up, not answering status", exit 1; a 1.6 server answers the legacy
// ping. mcquery and bedrock print the summary and Query's player list.
func TestQueryMinecraftTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		profile, proto string
		code           int
		want           []string
	}{
		{"vanilla", "minecraft", ExitOK, []string{"motd  A gsq Minecraft server", "version  1.21.1 (protocol 767)", "players  3/20",
			"favicon  image/png, 600 bytes, sha256 cf54a257", "players (sample of 3)", "thinkofdeath  4566e69f-c907-48ee-8d71-d7ba5aa00d20"}},
		{"velocity", "minecraft", ExitOK, []string{"not a player (a line of text)", "ping     of the status: the server closed before the ping"}},
		{"status-off", "minecraft", ExitFailure, []string{"up, not answering status"}},
		{"legacy-1.6", "minecraft", ExitOK, []string{"version   1.6.4 (protocol 78)", "answered  the legacy ping"}},
		{"forge", "minecraft", ExitOK, []string{"mods", "(forgeData, compressed)"}},
		{"vanilla", "mcquery", ExitOK, []string{"name     A gsq Minecraft server", "map      world", "players (3)", "Dinnerbone"}},
	}
	for _, tc := range cases {
		t.Run(tc.proto+"-"+tc.profile, func(t *testing.T) {
			t.Parallel()
			srv := mctest.Start(t, tc.profile)
			code, out, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", tc.proto, srv.Addr().String())
			if code != tc.code {
				t.Errorf("exit %d, want %d\n%s%s", code, tc.code, out, stderr)
			}
			flat := strings.Join(strings.Fields(out), " ") // tabwriter's padding aside
			for _, w := range tc.want {
				if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("no %q in\n%s", w, out)
				}
			}
		})
	}
	srv := mctest.Start(t, "bedrock")
	code, out, _ := runGSQ(t, nil, nil, nil, "query", "--protocol", "bedrock", srv.BedrockAddr().String())
	if code != ExitOK || !strings.Contains(strings.Join(strings.Fields(out), " "), "players 2/10") {
		t.Errorf("bedrock: exit %d\n%s", code, out)
	}
}

// gsq scan drives the three protocols: Server List Ping's connections
// (one up, one up but not answering status), Query's and Bedrock's
// conversations, one JSON line per server; the exit code is 1 while one
// server failed.
func TestScanMinecraft(t *testing.T) {
	t.Parallel()
	van, off, be := mctest.Start(t, "vanilla"), mctest.Start(t, "status-off"), mctest.Start(t, "bedrock")
	for _, tc := range []struct {
		proto string
		list  string
		code  int
		want  []string
	}{
		{"minecraft", van.Addr().String() + "\n" + off.Addr().String() + "\n", ExitFailure,
			[]string{`"protocol":"minecraft","ping_ms":`, `"protocol":"minecraft","no_status":true`}},
		{"mcquery", van.Addr().String() + "\n", ExitOK, []string{`"players":[{"name":"thinkofdeath"}`}},
		{"bedrock", be.BedrockAddr().String() + "\n", ExitOK, []string{`"edition":"MCPE"`}},
	} {
		code, stdout, stderr := runGSQ(t, nil, strings.NewReader(tc.list), nil, "scan", "--protocol", tc.proto)
		if code != tc.code || strings.Count(stdout, "\n") != strings.Count(tc.list, "\n") {
			t.Errorf("%s: exit %d\n%s%s", tc.proto, code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: no %s in\n%s", tc.proto, w, stdout)
			}
		}
	}
}

// --debug shows every packet of the three protocols, named: Server List
// Ping's over TCP too.
func TestQueryMinecraftDebug(t *testing.T) {
	t.Parallel()
	srv := mctest.Start(t, "geyser") // Server List Ping and Query on one port, a Bedrock pong on another
	for _, tc := range []struct {
		proto, addr string
		want        []string
	}{
		{"minecraft", srv.Addr().String(), []string{"handshake (protocol 47, 127.0.0.1:", "; status request", "status response, ", "ping or pong, payload"}},
		{"mcquery", srv.Addr().String(), []string{"handshake, session 0x1020304", "handshake reply, token", "full stat request, token", "full stat, "}},
		{"bedrock", srv.BedrockAddr().String(), []string{"unconnected ping, time", "unconnected pong, time"}},
	} {
		code, _, stderr := runGSQ(t, nil, nil, nil, "query", "--debug", "--protocol", tc.proto, tc.addr)
		for _, w := range tc.want {
			if code != ExitOK || !strings.Contains(stderr, w) {
				t.Errorf("%s: exit %d, no %q in\n%s", tc.proto, code, w, stderr)
			}
		}
	}
}

// A host name without a port is the Minecraft query's to resolve (it
// follows the SRV record, which may name another host): one that
// resolves to nothing fails in the query, unreachable, exit 3, without
// a hint about ports; with --no-srv gsq resolves it first, as for any
// protocol.
func TestQueryMinecraftNameWithoutAddress(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{}, {"--no-srv"}, {"--option", "srv=off"}} {
		code, out, stderr := runGSQ(t, nil, nil, nil, append(append([]string{"query", "--json", "--protocol", "minecraft"}, args...), "nowhere.invalid")...)
		inQuery := strings.Contains(out, `"errors":{"info":{"kind":"unreachable","message":"slp: resolve nowhere.invalid`)
		if code != ExitTimeout || inQuery != (len(args) == 0) || strings.Contains(stderr, "hint") || !strings.Contains(out, `"kind":"unreachable"`) {
			t.Errorf("%v: exit %d\n%s%s", args, code, out, stderr)
		}
	}
}
