package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/udpio/udptest"
)

func TestQueryTable(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{srv.Addr().String() + "  a2s, ", "gsq test server", "de_dust2", "Counter-Strike: Source (cstrike, app 240)",
		"3/24 (1 bot)", "players (3)", "rules (100)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// TestQueryJSONContract checks the envelope of the JSON object against a
// server whose content is known; the golden files hold the rest.
func TestQueryJSONContract(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	target := " localhost:" + fmt.Sprint(srv.Addr().Port())
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", target)
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var got struct {
		Target   string           `json:"target"`
		Address  string           `json:"address"`
		Protocol string           `json:"protocol"`
		PingMS   *float64         `json:"ping_ms"`
		Summary  map[string]any   `json:"summary"`
		Info     map[string]any   `json:"info"`
		Players  []map[string]any `json:"players"`
		Rules    []map[string]any `json:"rules"`
		Errors   map[string]any   `json:"errors"`
		Error    *json.RawMessage `json:"error"`
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	if err := dec.Decode(&got); err != nil {
		t.Fatalf("output is not one JSON object: %v\n%s", err, stdout)
	}
	if got.Target != strings.TrimSpace(target) || !strings.HasPrefix(got.Address, "127.0.0.1:") && !strings.HasPrefix(got.Address, "[::1]:") ||
		got.Protocol != "a2s" || got.PingMS == nil || got.Error != nil || got.Errors == nil || len(got.Errors) != 0 {
		t.Errorf("envelope: %s", stdout)
	}
	if got.Summary["name"] != "gsq test server" || got.Summary["players"] != 3.0 || got.Summary["connect"] == nil {
		t.Errorf("summary %v", got.Summary)
	}
	if got.Info["name"] != "gsq test server" || len(got.Players) != 3 || len(got.Rules) != 100 {
		t.Errorf("sections: info %v, %d players, %d rules", got.Info, len(got.Players), len(got.Rules))
	}
}

// fakeA2S is a UDP server on loopback that answers A2S requests, without
// a challenge, with what answer returns for their type (nil: nothing),
// and counts the requests of each type. answer runs on the server's one
// goroutine.
type fakeA2S struct {
	conn   *net.UDPConn
	mu     sync.Mutex
	counts map[byte]int
	// got receives the type of each request as it arrives, when there is
	// room.
	got chan byte
}

func newFakeA2S(t *testing.T, answer func(typ byte) []byte) *fakeA2S {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeA2S{conn: conn, counts: map[byte]int{}, got: make(chan byte, 64)}
	t.Cleanup(func() { conn.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if n < 5 {
				continue
			}
			typ := buf[4]
			f.mu.Lock()
			f.counts[typ]++
			f.mu.Unlock()
			select {
			case f.got <- typ:
			default:
			}
			if reply := answer(typ); reply != nil {
				conn.WriteToUDPAddrPort(reply, from)
			}
		}
	}()
	return f
}

func (f *fakeA2S) addr() string { return f.conn.LocalAddr().String() }

func (f *fakeA2S) count(typ byte) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[typ]
}

// encoded is the reply a2stest's default content gives to typ.
func encoded(t *testing.T, typ byte) []byte {
	var b []byte
	var err error
	switch typ {
	case a2s.TypeInfoRequest:
		b, err = a2stest.DefaultInfo().AppendBinary(nil)
	case a2s.TypePlayerRequest:
		b, err = a2stest.DefaultPlayers().AppendBinary(nil)
	case a2s.TypeRulesRequest:
		b, err = a2stest.DefaultRules().AppendBinary(nil)
	}
	if err != nil {
		panic(err) // the default content encodes
	}
	return b
}

// halfSilent answers INFO only, as a server whose player and rule data
// is switched off.
func halfSilent(t *testing.T) *fakeA2S {
	info := encoded(t, a2s.TypeInfoRequest)
	return newFakeA2S(t, func(typ byte) []byte {
		if typ == a2s.TypeInfoRequest {
			return info
		}
		return nil
	})
}

// halfSilentChallenged is halfSilent with a challenge, as modern Source
// servers have: its first INFO request gets an S2C_CHALLENGE.
func halfSilentChallenged(t *testing.T) *fakeA2S {
	info := encoded(t, a2s.TypeInfoRequest)
	var infos atomic.Int32
	return newFakeA2S(t, func(typ byte) []byte {
		switch {
		case typ != a2s.TypeInfoRequest:
			return nil
		case infos.Add(1) == 1:
			return a2s.AppendChallenge(nil, 0x1234)
		}
		return info
	})
}

func TestQueryRetries(t *testing.T) {
	t.Parallel()
	// --retries N sends a silent server N+1 INFO requests, for A2S and OGP
	// alike; 0 means no resend at all.
	addr := newFakeA2S(t, func(byte) []byte { return nil }).addr()
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

// A silent server: the info times out, and the players and rules are not
// asked at all; the whole server failed with a timeout.
func TestQuerySilent(t *testing.T) {
	t.Parallel()
	srv := newFakeA2S(t, func(byte) []byte { return nil })
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "50ms", "--retries", "1", srv.addr())
	if code != ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitTimeout, stderr)
	}
	if !strings.Contains(stderr, "gsq: hint:") || !strings.Contains(stderr, "query port") {
		t.Errorf("no query-port hint on stderr:\n%s", stderr)
	}
	got := decodeOne(t, stdout)
	errs := got["errors"].(map[string]any)
	for _, s := range []string{"info", "players", "rules"} {
		if e, _ := errs[s].(map[string]any); e["kind"] != "timeout" {
			t.Errorf("errors.%s = %v, want a timeout", s, errs[s])
		}
	}
	if top, _ := got["error"].(map[string]any); top["kind"] != "timeout" {
		t.Errorf("error = %v, want a timeout", got["error"])
	}
	if n, p, r := srv.count(a2s.TypeInfoRequest), srv.count(a2s.TypePlayerRequest), srv.count(a2s.TypeRulesRequest); n != 2 || p+r != 0 {
		t.Errorf("the server got %d INFO, %d PLAYER and %d RULES requests; want 2, 0, 0", n, p, r)
	}
}

// A closed port is unreachable (exit 3), known from the ICMP error the
// first request earns: only that can end this query, whose waits are an
// hour. (Hosts rate-limit ICMP errors: a request whose error was not sent
// is resent.)
func TestQueryClosedPortIsUnreachable(t *testing.T) {
	t.Parallel()
	closed := udptest.ClosedPort(t).String()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "300ms", "--retries", "1000", "--deadline", "1h", closed)
	if code != ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitTimeout, stderr)
	}
	got := decodeOne(t, stdout)
	top, _ := got["error"].(map[string]any)
	if top["kind"] != "unreachable" || !strings.Contains(top["message"].(string), "connection refused") {
		t.Errorf("error = %v, want unreachable", got["error"])
	}
	for _, s := range []string{"info", "players", "rules"} {
		if e, _ := got["errors"].(map[string]any)[s].(map[string]any); e["kind"] != "unreachable" {
			t.Errorf("errors.%s = %v, want unreachable", s, e)
		}
	}
	if !strings.Contains(stderr, "nothing listens on "+closed+"/udp") {
		t.Errorf("no closed-port hint:\n%s", stderr)
	}
}

// A server that answers with what is not A2S is a protocol error (exit
// 1), reported when the deadline passes, not a timeout.
func TestQueryGarbageIsProtocol(t *testing.T) {
	t.Parallel()
	srv := newFakeA2S(t, func(byte) []byte { return []byte("HTTP/1.0 400 Bad Request\r\n\r\n") })
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "1h", "--deadline", "300ms", srv.addr())
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailure, stderr)
	}
	got := decodeOne(t, stdout)
	top, _ := got["error"].(map[string]any)
	if top["kind"] != "protocol" || !strings.Contains(top["message"].(string), "not with A2S") {
		t.Errorf("error = %v, want a protocol error saying the answer is not A2S", got["error"])
	}
	if strings.Contains(stderr, "hint") {
		t.Errorf("no port hint expected for a server that answered: %s", stderr)
	}
}

// --deadline bounds a server that answers INFO and never PLAYER or RULES,
// whatever --timeout and --retries say: the sections left time out. Were
// the deadline ignored, the test's own context would end the query after
// 30 s, and the kind would be "canceled". (The deadline leaves the INFO
// answer, on loopback, a hundred times the time it needs.)
func TestQueryDeadline(t *testing.T) {
	t.Parallel()
	srv := halfSilent(t)
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--timeout", "1h", "--retries", "5", "--deadline", "500ms", srv.addr())
	if code != ExitTimeout {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitTimeout, stderr)
	}
	got := decodeOne(t, stdout)
	if got["info"] == nil || got["error"] != nil {
		t.Errorf("info %v, error %v: want the info and no whole-server error", got["info"], got["error"])
	}
	errs := got["errors"].(map[string]any)
	for _, s := range []string{"players", "rules"} {
		if e, _ := errs[s].(map[string]any); e["kind"] != "timeout" {
			t.Errorf("errors.%s = %v, want a timeout", s, errs[s])
		}
	}
	if strings.Contains(stderr, "hint") {
		t.Errorf("no port hint expected when the server answered: %s", stderr)
	}
}

// Once the challenge is known, PLAYER and RULES go out together: the
// server sees both requests although it answers neither.
func TestQueryAsksTogether(t *testing.T) {
	t.Parallel()
	srv := halfSilentChallenged(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		seen := map[byte]bool{}
		for typ := range srv.got {
			if seen[typ] = true; seen[a2s.TypePlayerRequest] && seen[a2s.TypeRulesRequest] {
				cancel()
				return
			}
		}
	}()
	// One request each, waiting an hour: only asking both at once lets
	// the server see both before the deadline.
	code, stdout, _ := runGSQ(t, ctx, nil, nil, "query", "--json", "--timeout", "1h", "--retries", "0", "--deadline", "30s", srv.addr())
	got := decodeOne(t, stdout)
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d (interrupted once both requests arrived): %s", code, ExitInterrupted, stdout)
	}
	errs := got["errors"].(map[string]any)
	for _, s := range []string{"players", "rules"} {
		if e, _ := errs[s].(map[string]any); e["kind"] != "canceled" {
			t.Errorf("errors.%s = %v, want canceled", s, errs[s])
		}
	}
}

// On a terminal each section prints as soon as it arrives: the info is
// on the screen while the players are still on their way.
func TestQueryStreams(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	players, rules := encoded(t, a2s.TypePlayerRequest), encoded(t, a2s.TypeRulesRequest)
	info := encoded(t, a2s.TypeInfoRequest)
	srv := newFakeA2S(t, func(typ byte) []byte {
		switch typ {
		case a2s.TypeInfoRequest:
			return info
		case a2s.TypePlayerRequest:
			<-release
			return players
		}
		return rules
	})
	stdout := newWatchedBuffer("gsq test server")
	env := testEnv(nil, nil)
	env.Stdout = stdout
	env.IsTerminal = func(s any) bool { return s == stdout }
	done := make(chan int)
	go func() { done <- env.Run(context.Background(), []string{"query", "--timeout", "5s", srv.addr()}) }()
	<-stdout.seen // the info is printed; the players have not been answered
	if strings.Contains(stdout.String(), "players (") {
		t.Errorf("players printed before they were answered:\n%s", stdout)
	}
	close(release)
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d:\n%s", code, stdout)
	}
	if !strings.Contains(stdout.String(), "players (3)") || !strings.Contains(stdout.String(), "rules (100)") {
		t.Errorf("output lacks the players or the rules:\n%s", stdout)
	}
}

// Interrupted (Ctrl-C): the sections in flight are canceled, and gsq
// exits 130 after printing them.
func TestQueryInterrupted(t *testing.T) {
	t.Parallel()
	srv := newFakeA2S(t, func(byte) []byte { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.got
		cancel()
	}()
	code, stdout, stderr := runGSQ(t, ctx, nil, nil, "query", "--json", "--timeout", "1h", srv.addr())
	if code != ExitInterrupted || strings.Contains(stderr, "context canceled") {
		t.Fatalf("exit %d, want %d; stderr %s", code, ExitInterrupted, stderr)
	}
	if e, _ := decodeOne(t, stdout)["error"].(map[string]any); e["kind"] != "canceled" {
		t.Errorf("error = %v, want canceled", e)
	}
}

// TestQueryCtrlCSaysSoOnce: Ctrl-C while a silent server is asked prints
// one line, not "context canceled" once per section (issue 19, user row 8).
func TestQueryCtrlCSaysSoOnce(t *testing.T) {
	t.Parallel()
	srv := newFakeA2S(t, func(byte) []byte { return nil })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-srv.got
		cancel()
	}()
	code, stdout, stderr := runGSQ(t, ctx, nil, nil, "query", "--timeout", "1h", srv.addr())
	if code != ExitInterrupted || strings.Contains(stdout+stderr, "context canceled") || strings.Count(stdout, "canceled") != 1 ||
		!strings.Contains(stdout, "info, players, rules  canceled: interrupted before the server answered\n") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
}

// A server that answers info and players, and rules that do not parse:
// the rules section reports its own error while the others still print.
func TestQueryPartial(t *testing.T) {
	t.Parallel()
	info, players := encoded(t, a2s.TypeInfoRequest), encoded(t, a2s.TypePlayerRequest)
	srv := newFakeA2S(t, func(typ byte) []byte {
		switch typ {
		case a2s.TypeInfoRequest:
			return info
		case a2s.TypePlayerRequest:
			return players
		}
		return []byte{0xff, 0xff, 0xff, 0xff, a2s.TypeRulesReply, 5, 0, 'c', 'u', 't'} // five rules announced, one cut short
	})
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", srv.addr())
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailure, stderr)
	}
	got := decodeOne(t, stdout)
	if info, _ := got["info"].(map[string]any); info["name"] != "gsq test server" {
		t.Errorf("info missing: %v", got["info"])
	}
	if players, _ := got["players"].([]any); len(players) != 3 {
		t.Errorf("players missing: %v", got["players"])
	}
	if _, ok := got["rules"]; ok {
		t.Errorf("rules present although they failed: %v", got["rules"])
	}
	if e, _ := got["errors"].(map[string]any)["rules"].(map[string]any); e["kind"] != "protocol" {
		t.Errorf("errors.rules = %v, want a protocol error", e)
	}
	if got["error"] != nil {
		t.Errorf("error = %v, want null when some sections answered", got["error"])
	}
}

func TestQueryFields(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", "--fields", "info, Players", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := decodeOne(t, stdout)
	if got["info"] == nil || got["players"] == nil || got["rules"] != nil {
		t.Errorf("--fields info,players: %s", stdout)
	}
	for _, args := range [][]string{
		{"query", "--fields", "teams", srv.Addr().String()},
		{"query", "--fields", "info,nope", srv.Addr().String()},
		{"scan", "--fields", "addons", srv.Addr().String()},
	} {
		if code, _, stderr := runGSQ(t, nil, nil, nil, args...); code != ExitUsage || !strings.Contains(stderr, "a2s has no section") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}

func TestQueryDebug(t *testing.T) {
	t.Parallel()
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

// The table shows a DayZ server's mod list after its rules.
func TestQueryDayZMods(t *testing.T) {
	t.Parallel()
	p, _ := a2stest.LookupProfile("dayz")
	srv := a2stest.NewServer(p)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", srv.Addr().String())
	if code != ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"DayZ (dayz, app 221100)", "(19 binary rules: the mod list below)", "mods (100)", "gsq mod 00  workshop 1559212036", "gsq mod 99  workshop 1559311036"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
}

// A server that refuses with an 'l' reply: the info fails with kind
// "refused" and the server's text, at once, the rest is not asked, and
// gsq exits 1.
func TestQueryBanned(t *testing.T) {
	t.Parallel()
	p, _ := a2stest.LookupProfile("banned")
	srv := a2stest.NewServer(p)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "query", "--json", srv.Addr().String())
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitFailure, stderr)
	}
	var got struct {
		Error  struct{ Kind, Message string }
		Errors map[string]struct{ Kind string }
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, stdout)
	}
	if got.Error.Kind != "refused" || !strings.Contains(got.Error.Message, "You have been banned from this server.") || got.Errors["rules"].Kind != "refused" {
		t.Errorf("error = %+v, errors = %+v", got.Error, got.Errors)
	}
}

// serveInBackground runs gsq serve with args on a free loopback port
// until stop, which returns serve's exit code and stderr. It returns
// once the server listens.
func serveInBackground(t *testing.T, args ...string) (addr string, stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr := newWatchedBuffer("gsq: serving on ")
	env := testEnv(nil, nil)
	env.Stderr = stderr
	done := make(chan int, 1)
	go func() { done <- env.Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)) }()
	select {
	case <-stderr.seen:
	case code := <-done:
		cancel()
		t.Fatalf("serve exited %d: %s", code, stderr)
	}
	line, _, _ := strings.Cut(strings.SplitN(stderr.String(), "gsq: serving on ", 2)[1], "\n")
	if _, err := netip.ParseAddrPort(line); err != nil {
		t.Fatalf("serve says it serves on %q: %v", line, err)
	}
	return line, func() (int, string) {
		cancel()
		code := <-done
		return code, stderr.String()
	}
}

func TestServeAndQuery(t *testing.T) {
	t.Parallel()
	addr, stop := serveInBackground(t, "--name", "flag server", "--map", "cp_badlands",
		"--player", "Alice:10:5m", "--player", "Bob", "--rule", "mp_timelimit=30", "--no-rcon")
	_, stdout, _ := runGSQ(t, nil, nil, nil, "query", "--json", addr)
	code, serveErr := stop()
	if code != ExitOK {
		t.Fatalf("serve exit %d: %s", code, serveErr)
	}
	for _, want := range []string{`"name":"flag server"`, `"map":"cp_badlands"`, `"name":"Alice","score":10,"duration":300`, `{"name":"mp_timelimit","value":"30"}`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("query of gsq serve lacks %s:\n%s", want, stdout)
		}
	}
}

func TestServeAndQueryPaddedInfo(t *testing.T) {
	t.Parallel()
	// serve --accept-padded-info answers query --pad-info in one round
	// trip: one 1200-byte request, one reply, no challenge.
	addr, stop := serveInBackground(t, "--accept-padded-info", "--no-rcon")
	code, _, stderr := runGSQ(t, nil, nil, nil, "query", "--pad-info", "--info", "--debug", "--timeout", "10s", "--deadline", "10s", addr)
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
