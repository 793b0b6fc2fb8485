package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/udpio/udptest"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func startScanFleet(t *testing.T, n int) *sim.Fleet {
	t.Helper()
	f, err := sim.StartFleetAnywhere(sim.FleetConfig{N: n, Challenge: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

func TestScanCommand(t *testing.T) {
	t.Parallel()
	f := startScanFleet(t, 20)
	var list strings.Builder
	list.WriteString("# a comment\n\n")
	for i := range f.Len() {
		fmt.Fprintln(&list, f.Addr(i))
	}
	path := filepath.Join(t.TempDir(), "targets.txt")
	if err := os.WriteFile(path, []byte(list.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "scan", "-f", path)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != 20 {
		t.Fatalf("%d lines", len(lines))
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var o struct {
			Address  string
			Protocol string
			Info     struct{ Name string }
			Players  []struct{ Name string }
			Rules    []struct{ Name, Value string }
			Error    any
		}
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		seen[o.Address] = true
		if o.Protocol != "a2s" || !strings.HasPrefix(o.Info.Name, "gsq fleet server #") || len(o.Rules) != len(sim.FleetContent(0).Rules) || o.Error != nil {
			t.Errorf("unexpected line %s", l)
		}
	}
	if len(seen) != 20 {
		t.Errorf("%d distinct addresses", len(seen))
	}
	if !strings.Contains(stderr, "20 answered") {
		t.Errorf("summary missing: %s", stderr)
	}

	// From stdin, info only.
	code, stdout, _ = runGSQ(t, nil, strings.NewReader(f.Addr(3).String()+"\n"), nil, "scan", "--info")
	if code != ExitOK || !strings.Contains(stdout, `"info":`) || strings.Contains(stdout, `"rules":`) {
		t.Errorf("--info from stdin: exit %d, %s", code, stdout)
	}
}

func TestScanCommandExitCodes(t *testing.T) {
	t.Parallel()
	f := startScanFleet(t, 1)
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	fast := []string{"scan", "--timeout", "50ms", "--retries", "1"}
	tests := []struct {
		name  string
		input string
		args  []string
		code  int
	}{
		{"none answered", silent.LocalAddr().String() + "\n", nil, ExitTimeout},
		{"some failed", f.Addr(0).String() + "\n" + silent.LocalAddr().String() + "\n", []string{"--timeout", "2s"}, ExitFailure},
		{"bad line", "no:such:target\n", nil, ExitUsage},
		{"bad flag", "", []string{"--rate", "-1"}, ExitUsage},
		{"bad protocol", "", []string{"--protocol", "gopher"}, ExitUsage},
		{"bad argument", "", []string{"[::1"}, ExitUsage},
		{"missing file", "", []string{"-f", "/nonexistent/list"}, ExitUsage},
	}
	for _, tt := range tests {
		code, _, stderr := runGSQ(t, nil, strings.NewReader(tt.input), nil, append(fast, tt.args...)...)
		if code != tt.code {
			t.Errorf("%s: exit %d, want %d (stderr %s)", tt.name, code, tt.code, stderr)
		}
	}
}

func TestScanCommandOGP(t *testing.T) {
	t.Parallel()
	p, _ := ogptest.LookupProfile("v0.91")
	srv := ogptest.NewServer(p)
	defer srv.Close()
	code, stdout, stderr := runGSQ(t, nil, strings.NewReader(srv.Addr().String()+"\n"), nil, "scan", "--protocol", "ogp")
	if code != ExitOK || !strings.Contains(stdout, `"protocol":"ogp"`) || !strings.Contains(stdout, `"players":[`) {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, _ := runGSQ(t, nil, strings.NewReader(""), nil, "scan", "--protocol", "ogp", "--dialect", "v9"); code != ExitUsage {
		t.Errorf("bad dialect: exit %d", code)
	}
}

// writeList writes a target list to a temporary file.
func writeList(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "servers.txt")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// scanLines decodes the JSON lines of a scan, by target.
func scanLines(t *testing.T, stdout string) map[string]map[string]any {
	t.Helper()
	lines := map[string]map[string]any{}
	for _, l := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if l == "" {
			continue
		}
		var o map[string]any
		if err := json.Unmarshal([]byte(l), &o); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		target, _ := o["target"].(string)
		if _, dup := lines[target]; dup {
			t.Errorf("two lines for %q", target)
		}
		lines[target] = o
	}
	return lines
}

func errorKindOf(o map[string]any) any {
	e, _ := o["error"].(map[string]any)
	return e["kind"]
}

// What a first-time user tries: hosts and files as arguments, a list with
// a byte-order mark, a server listed twice, and lines that are not an
// address.
func TestScanFirstTime(t *testing.T) {
	t.Parallel()
	f := startScanFleet(t, 3)
	a0, a1, a2 := f.Addr(0).String(), f.Addr(1).String(), f.Addr(2).String()
	list := writeList(t, "\uFEFF"+a1+"\n  "+a1+"  # again\n[::1\n\n")
	other := writeList(t, "# the same server again\n"+a0+"\n")
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "scan", "--info", a0, list, "@"+other, a2, ":27015")
	if code != ExitUsage {
		t.Errorf("exit %d, want %d for the lines that are not addresses", code, ExitUsage)
	}
	lines := scanLines(t, stdout)
	for _, a := range []string{a0, a1, a2} {
		if o := lines[a]; o == nil || o["info"] == nil || o["error"] != nil {
			t.Errorf("%s: %v", a, o)
		}
	}
	for _, bad := range []string{"[::1", ":27015"} {
		if o := lines[bad]; errorKindOf(o) != "invalid" {
			t.Errorf("%s: %v, want kind invalid", bad, o)
		}
	}
	if len(lines) != 5 {
		t.Errorf("%d lines, want 5 (a duplicate is asked once):\n%s", len(lines), stdout)
	}
	if msg := lines["[::1"]["error"].(map[string]any)["message"]; !strings.Contains(msg.(string), "servers.txt:3: ") {
		t.Errorf("message %q does not say where the line is", msg)
	}
	for _, want := range []string{"scanned 3 servers", "3 answered", "2 invalid lines", "2 duplicates"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("summary lacks %q: %s", want, stderr)
		}
	}
}

// Plain `gsq scan` on a terminal says that it reads stdin.
func TestScanStdinHint(t *testing.T) {
	t.Parallel()
	var stderr strings.Builder
	env := testEnv(strings.NewReader(""), nil)
	env.Stderr = &stderr
	env.IsTerminal = func(s any) bool { return s == env.Stdin }
	if code := env.Run(context.Background(), []string{"scan"}); code != ExitOK {
		t.Errorf("exit %d", code)
	}
	if !strings.Contains(stderr.String(), "gsq: hint: reading the server list from stdin") || !strings.Contains(stderr.String(), "scanned 0 servers") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// Ctrl-C: every server in flight gets a canceled line, with what it had
// answered, so the output accounts for every server read, the summary
// counts the lines, and gsq exits 130.
func TestScanInterrupted(t *testing.T) {
	t.Parallel()
	const silent = 5
	var list strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	asked := make(chan struct{}, silent+1)
	for range silent {
		srv := newFakeA2S(t, func(byte) []byte { return nil })
		fmt.Fprintf(&list, "localhost:%d\n", srv.conn.LocalAddr().(*net.UDPAddr).Port)
		go func() {
			<-srv.got
			asked <- struct{}{}
		}()
	}
	// With --host-interval a server gets one request at a time: PLAYER
	// goes out once the INFO answer is in.
	half := halfSilentChallenged(t)
	fmt.Fprintln(&list, half.addr())
	go func() {
		for typ := range half.got {
			if typ == a2s.TypePlayerRequest {
				asked <- struct{}{}
				return
			}
		}
	}()
	f := startScanFleet(t, 2)
	fmt.Fprintf(&list, "%s\n%s\n", f.Addr(0), f.Addr(1))
	go func() {
		for range silent + 1 {
			<-asked
		}
		cancel() // every silent server is in flight, and the half-silent one
	}()
	code, stdout, stderr := runGSQ(t, ctx, strings.NewReader(list.String()), nil,
		"scan", "--timeout", "1h", "--deadline", "10h", "--host-interval", "1ms")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, ExitInterrupted, stderr)
	}
	lines := scanLines(t, stdout)
	for _, target := range strings.Fields(list.String())[:silent] {
		if errorKindOf(lines[target]) != "canceled" {
			t.Errorf("%s: %v, want canceled", target, lines[target])
		}
	}
	h := lines[half.addr()]
	if h["info"] == nil || h["error"] != nil || sectionKind(h, "players") != "canceled" || sectionKind(h, "rules") != "canceled" {
		t.Errorf("half-silent server: %v, want its info and the rest canceled", h)
	}
	if len(lines) != silent+3 {
		t.Errorf("%d lines, want %d", len(lines), silent+3)
	}
	checkSummaryCounts(t, lines, stderr)
}

// sectionKind is the error kind of section s of a result line.
func sectionKind(o map[string]any, s string) any {
	e, _ := o["errors"].(map[string]any)[s].(map[string]any)
	return e["kind"]
}

// checkSummaryCounts checks that the summary line on stderr counts the
// result lines.
func checkSummaryCounts(t *testing.T, lines map[string]map[string]any, stderr string) {
	t.Helper()
	var want struct{ answered, partial, timedOut, unreachable, failed, canceled int }
	for _, o := range lines {
		kinds := map[any]bool{}
		for s := range o["errors"].(map[string]any) {
			kinds[sectionKind(o, s)] = true
		}
		top := errorKindOf(o)
		switch {
		case top == "canceled" || kinds["canceled"]:
			want.canceled++
		case top == nil && len(kinds) == 0:
			want.answered++
		case top == nil:
			want.partial++
		case top == "timeout":
			want.timedOut++
		case top == "unreachable":
			want.unreachable++
		default:
			want.failed++
		}
	}
	summary := fmt.Sprintf("%d answered, %d partial, %d timed out, %d unreachable, %d failed;",
		want.answered, want.partial, want.timedOut, want.unreachable, want.failed)
	if !strings.Contains(stderr, summary) || !strings.Contains(stderr, "scanned "+plural(len(lines), "server")) {
		t.Errorf("summary does not count the lines (%s):\n%s", summary, stderr)
	}
	if want.canceled > 0 && !strings.Contains(stderr, fmt.Sprintf("; %d canceled server", want.canceled)) {
		t.Errorf("summary does not count %d canceled lines:\n%s", want.canceled, stderr)
	}
}

// --deadline bounds every server from its first request, whatever
// --timeout and --retries say: a server that answers INFO and never the
// rest is partial, one that answers garbage fails with a protocol error,
// once the deadline passes.
func TestScanDeadline(t *testing.T) {
	t.Parallel()
	half := halfSilentChallenged(t)
	garbage := newFakeA2S(t, func(byte) []byte { return []byte("HTTP/1.0 400 Bad Request\r\n\r\n") })
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "scan", "--timeout", "1h", "--retries", "5", "--deadline", "300ms",
		half.addr(), garbage.addr())
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d: %s", code, ExitFailure, stderr)
	}
	lines := scanLines(t, stdout)
	h := lines[half.addr()]
	if h["info"] == nil || h["error"] != nil || sectionKind(h, "players") != "timeout" || sectionKind(h, "rules") != "timeout" {
		t.Errorf("half-silent server: %v, want its info and the rest timed out", h)
	}
	g := lines[garbage.addr()]
	if errorKindOf(g) != "protocol" || !strings.Contains(g["error"].(map[string]any)["message"].(string), "not with A2S") {
		t.Errorf("garbage: %v, want a protocol error", g)
	}
	checkSummaryCounts(t, lines, stderr)
}

// A closed port is unreachable (exit 3), from the ICMP error its request
// earns: nothing else ends this scan, whose waits are an hour. (Hosts
// rate-limit ICMP errors: a request whose error was not sent is resent.)
func TestScanClosedPortIsUnreachable(t *testing.T) {
	t.Parallel()
	closed := udptest.ClosedPort(t).String()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "scan", "--timeout", "300ms", "--retries", "1000", "--deadline", "1h", closed)
	if code != ExitTimeout {
		t.Fatalf("exit %d, want %d: %s", code, ExitTimeout, stderr)
	}
	lines := scanLines(t, stdout)
	if o := lines[closed]; errorKindOf(o) != "unreachable" {
		t.Errorf("%v, want unreachable", o)
	}
	checkSummaryCounts(t, lines, stderr)
}

// A line too long to be an address is reported, and counted for the
// progress line, which a terminal shows.
func TestScanLongLineAndProgress(t *testing.T) {
	t.Parallel()
	f := startScanFleet(t, 2)
	list := writeList(t, f.Addr(0).String()+"\n"+strings.Repeat("x", 2000)+"\n"+f.Addr(1).String()+"\n")
	var stdout, stderr strings.Builder
	env := testEnv(nil, nil)
	env.Stdout, env.Stderr = &stdout, &stderr
	env.IsTerminal = func(s any) bool { return s == env.Stderr }
	if code := env.Run(context.Background(), []string{"scan", "--info", list}); code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	lines := scanLines(t, stdout.String())
	if len(lines) != 3 || errorKindOf(lines[strings.Repeat("x", 64)+"..."]) != "invalid" {
		t.Errorf("lines: %v", lines)
	}
	if !strings.Contains(stderr.String(), "scanning [") || !strings.Contains(stderr.String(), "/3, ") {
		t.Errorf("no progress line for 3 lines: %q", stderr.String())
	}
}

// TestScanMissingListFile: `gsq scan nofile.txt` with no such file (issue
// 19, user row 7) says so, instead of looking nofile.txt up in DNS.
func TestScanMissingListFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, arg := range []string{"nofile.txt", "servers.LIST", filepath.Join(dir, "gone"), "lists/eu"} {
		code, stdout, stderr := runGSQ(t, nil, nil, nil, "scan", arg)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "cannot read the list "+arg+": no such file or directory") {
			t.Errorf("gsq scan %s: exit %d, stdout %q, stderr %q", arg, code, stdout, stderr)
		}
	}
	for arg, want := range map[string]bool{
		"example.com": false, "nofile.txt:27015": false, "[::1]:27015": false, "::1": false, "192.0.2.1": false,
		"nofile.txt": true, "a.json": true, `lists\eu`: true, "./x": true,
	} {
		if got := looksLikeFile(arg); got != want {
			t.Errorf("looksLikeFile(%q) = %v, want %v", arg, got, want)
		}
	}
}
