package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
)

func TestQueryTable(t *testing.T) {
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"gsq test server", "de_dust2", "Counter-Strike: Source (cstrike, app 240)", "3/24 (1 bots)", "players (3)", "rules (100)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestQueryJSONContract checks the field names and values of DESIGN.md's
// JSON object against a server whose content is known.
func TestQueryJSONContract(t *testing.T) {
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var got struct {
		Address  string           `json:"address"`
		Protocol string           `json:"protocol"`
		PingMS   *float64         `json:"ping_ms"`
		Info     map[string]any   `json:"info"`
		Players  []map[string]any `json:"players"`
		Rules    []map[string]any `json:"rules"`
		Error    *json.RawMessage `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, stdout)
	}
	if got.Address != srv.Addr().String() || got.Protocol != "a2s" || got.PingMS == nil || got.Error != nil {
		t.Errorf("envelope: address %q protocol %q ping %v error %v", got.Address, got.Protocol, got.PingMS, got.Error)
	}
	want := map[string]string{
		"protocol": "17", "name": "gsq test server", "map": "de_dust2", "folder": "cstrike",
		"game": "Counter-Strike: Source", "app_id": "240", "players": "3", "max_players": "24", "bots": "1",
		"server_type": "dedicated", "environment": "linux", "visibility": "public", "vac": "true",
		"version": "1.0.0.22", "port": "27015", "steam_id": "90000000000000001", "keywords": "alltalk,increased_maxplayers,gsq",
		"game_id": "240", "spectator_port": "27020", "spectator_name": "gsq SourceTV", "format": "source",
	}
	for k, v := range want {
		if s := jsonString(got.Info[k]); s != v {
			t.Errorf("info.%s = %q, want %q", k, s, v)
		}
	}
	if len(got.Info) != len(want) {
		t.Errorf("info has %d fields, want %d: %v", len(got.Info), len(want), got.Info)
	}
	if len(got.Players) != 3 || len(got.Rules) != 100 {
		t.Fatalf("%d players and %d rules, want 3 and 100", len(got.Players), len(got.Rules))
	}
	for _, k := range []string{"index", "name", "score", "duration"} {
		if _, ok := got.Players[0][k]; !ok {
			t.Errorf("players[0] lacks %q: %v", k, got.Players[0])
		}
	}
	if _, ok := got.Rules[0]["name"]; !ok {
		t.Errorf("rules[0] lacks name: %v", got.Rules[0])
	}
}

func jsonString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case json.Number:
		return v.String()
	case bool:
		if v {
			return "true"
		}
		return "false"
	case nil:
		return "<missing>"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// silentServer is a UDP socket that reads and never answers.
func silentServer(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
		}
	}()
	return pc.LocalAddr().String()
}

func TestQueryRetries(t *testing.T) {
	// --retries N sends a silent server N+1 INFO requests, for A2S and OGP
	// alike; 0 means no resend at all.
	addr := silentServer(t)
	for _, proto := range []string{"a2s", "ogp"} {
		for retries, want := range []int{1, 2} {
			_, _, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", proto, "--info", "--debug", "--timeout", "50ms",
				"--retries", fmt.Sprint(retries), addr)
			if got := strings.Count(stderr, "send ->"); got != want {
				t.Errorf("%s --retries %d: %d requests sent, want %d:\n%s", proto, retries, got, want, stderr)
			}
		}
	}
}

func TestQueryTimeout(t *testing.T) {
	addr := silentServer(t)
	start := time.Now()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "100ms", "--retries", "1", addr)
	if code != ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitTimeout, stderr)
	}
	if !strings.Contains(stderr, "gsq: hint:") || !strings.Contains(stderr, "query port") {
		t.Errorf("no query-port hint on stderr:\n%s", stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	info, _ := got["info"].(map[string]any)
	ierr, _ := info["error"].(map[string]any)
	if ierr["kind"] != "timeout" {
		t.Errorf("info.error.kind = %v, want timeout; output %s", ierr["kind"], stdout)
	}
	top, _ := got["error"].(map[string]any)
	if top["kind"] != "timeout" {
		t.Errorf("error.kind = %v, want timeout", top["kind"])
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a silent server took %v to give up", d) // a hang guard, not a timing assertion
	}
}

// TestQueryPartial serves info and players but no rules: the rules
// section reports its own error while the others still print.
func TestQueryPartial(t *testing.T) {
	h, err := a2s.NewStaticHandler(a2stest.DefaultInfo(), a2stest.DefaultPlayers(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := &a2s.Server{Handler: h}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(pc)
	defer srv.Shutdown(context.Background())

	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "100ms", "--retries", "0", pc.LocalAddr().String())
	if code != ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitTimeout, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	if info, _ := got["info"].(map[string]any); info["name"] != "gsq test server" {
		t.Errorf("info missing: %v", got["info"])
	}
	if players, _ := got["players"].([]any); len(players) != 3 {
		t.Errorf("players missing: %v", got["players"])
	}
	rules, _ := got["rules"].(map[string]any)
	if rerr, _ := rules["error"].(map[string]any); rerr["kind"] != "timeout" {
		t.Errorf("rules = %v, want a timeout error", got["rules"])
	}
	if got["error"] != nil {
		t.Errorf("top-level error = %v, want null when some sections answered", got["error"])
	}
	if strings.Contains(stderr, "hint") {
		t.Errorf("no port hint expected when the server answered: %s", stderr)
	}
}

func TestQueryDebug(t *testing.T) {
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	code, _, stderr := runGSQ(t, nil, nil, nil, "query", "--debug", "--info", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"send ->", "recv <-", "A2S_INFO request", "S2C_CHALLENGE", "A2S_INFO reply (Source)", "00000000  ff ff ff ff 54"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("debug output lacks %q:\n%s", want, stderr)
		}
	}
}

// TestQueryProfiles queries every quirk profile through the CLI; the
// profiles with extra JSON fields must show them.
func TestQueryProfiles(t *testing.T) {
	extra := map[string][]string{
		"goldsource-dual": {`"goldsource":{"format":"goldsource"`},
		"rust":            {`"players_byte":`, `"max_players_byte":`},
		"ship":            {`"ship":{"mode":`, `"deaths":`, `"money":`},
		"bzip2-nosize":    {`"rules":[{`},
		"oversized":       {`"rules":[{`},
		"dayz": {`"dayz":{"official":false,"battleye":true,"first_person":true`, `"queue":2`, `"time":"14:05"`,
			`"mods":{"version":2,"list":[{"name":"gsq mod 00","workshop_id":1559212036,"dlc":false,"hash":16777472}`,
			`{"name":"gsq mod 99","workshop_id":1559311036`, `"signatures":[{"name":"dayz"},{"name":"gsq"}]`},
	}
	for _, p := range a2stest.Profiles() {
		if p.Loss > 0 || p.Banned != nil {
			continue // lossy profiles are covered by the client's own tests with retries; banned below
		}
		t.Run(p.Name, func(t *testing.T) {
			srv := a2stest.NewServer(p)
			defer srv.Close()
			code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "500ms", srv.Addr().String())
			if code != ExitOK {
				t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			var got map[string]any
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("bad JSON: %v", err)
			}
			if got["error"] != nil {
				t.Fatalf("error: %v", got["error"])
			}
			for _, want := range extra[p.Name] {
				if !strings.Contains(stdout, want) {
					t.Errorf("output lacks %s:\n%s", want, stdout)
				}
			}
		})
	}
}

// The table shows a DayZ server's mod list after its rules.
func TestQueryDayZMods(t *testing.T) {
	p, _ := a2stest.LookupProfile("dayz")
	srv := a2stest.NewServer(p)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--timeout", "5s", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"DayZ (dayz, app 221100)", "(19 binary rules: the mod list below)", "mods (100)", "gsq mod 00  workshop 1559212036", "gsq mod 99  workshop 1559311036"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// A server that refuses with an 'l' reply: every section fails with kind
// "refused" and the server's text, at once, and gsq exits 1.
func TestQueryBanned(t *testing.T) {
	p, _ := a2stest.LookupProfile("banned")
	srv := a2stest.NewServer(p)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "5s", srv.Addr().String())
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailure, stderr)
	}
	var got struct {
		Error struct{ Kind, Message string }
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	if got.Error.Kind != "refused" || !strings.Contains(got.Error.Message, "You have been banned from this server.") {
		t.Errorf("error = %+v", got.Error)
	}
}

// serveInBackground runs gsq serve with args on a free loopback port
// until stop, which returns serve's exit code and stderr.
func serveInBackground(t *testing.T, args ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = pc.LocalAddr().String()
	pc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	var serveErr strings.Builder
	go func() {
		code, _, stderr := runGSQ(t, ctx, nil, nil, append([]string{"serve", "--addr", addr}, args...)...)
		serveErr.WriteString(stderr)
		done <- code
	}()
	return addr, func() (int, string) {
		cancel()
		code := <-done
		return code, serveErr.String()
	}
}

// queryUntilUp queries addr with args until it answers (the server needs
// a moment to listen), and returns the last try's output.
func queryUntilUp(t *testing.T, addr string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	for range 50 {
		code, stdout, stderr = runGSQ(t, nil, nil, nil, append(append([]string{"query", "--timeout", "100ms", "--retries", "0"}, args...), addr)...)
		if code == ExitOK {
			break
		}
	}
	return code, stdout, stderr
}

func TestServeAndQuery(t *testing.T) {
	addr, stop := serveInBackground(t, "--name", "flag server", "--map", "cp_badlands",
		"--player", "Alice:10:5m", "--player", "Bob", "--rule", "mp_timelimit=30", "--no-rcon")
	_, stdout, _ := queryUntilUp(t, addr, "--json")
	code, serveErr := stop()
	if code != ExitOK {
		t.Fatalf("serve exit %d: %s", code, serveErr)
	}
	for _, want := range []string{`"name":"flag server"`, `"map":"cp_badlands"`, `"name":"Alice","score":10,"duration":300`, `{"name":"mp_timelimit","value":"30"}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("query of gsq serve lacks %s:\n%s", want, stdout)
		}
	}
	if !strings.Contains(serveErr, "serving on "+addr) {
		t.Errorf("serve did not say what it serves:\n%s", serveErr)
	}
}

func TestServeAndQueryPaddedInfo(t *testing.T) {
	// serve --accept-padded-info answers query --pad-info in one round
	// trip: one 1200-byte request, one reply, no challenge.
	addr, stop := serveInBackground(t, "--accept-padded-info", "--no-rcon")
	code, _, stderr := queryUntilUp(t, addr, "--pad-info", "--info", "--debug")
	serveCode, serveErr := stop()
	if code != ExitOK || serveCode != ExitOK {
		t.Fatalf("query exit %d, serve exit %d: %s\n%s", code, serveCode, stderr, serveErr)
	}
	var sends []string
	for _, line := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(line, "send ->") {
			sends = append(sends, line)
		}
	}
	if len(sends) != 1 || !strings.Contains(sends[0], "1200 bytes: A2S_INFO request") || strings.Contains(stderr, "S2C_CHALLENGE") {
		t.Errorf("want one 1200-byte INFO request and no challenge; debug output:\n%s", stderr)
	}
	if !strings.Contains(serveErr, "padded INFO answered without a challenge") {
		t.Errorf("serve did not say it takes padded INFO:\n%s", serveErr)
	}
}

func TestQueryOGPDebug(t *testing.T) {
	srv := ogpServer(t, "v0.91")
	code, _, stderr := runGSQ(t, nil, nil, nil, "query", "--protocol", "ogp", "--debug", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"send -> " + srv.Addr().String(), "recv <- " + srv.Addr().String(), "OGP ", "request id", "00000000  ff ff ff ff 4f 47 50 00"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("debug output lacks %q:\n%s", want, stderr)
		}
	}
}
