package cli

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/ogp/ogptest"
	"github.com/gsq-project/gsq/sim"
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
		{"some failed", f.Addr(0).String() + "\n" + silent.LocalAddr().String() + "\n", nil, ExitFailure},
		{"bad line", "no:such:target\n", nil, ExitFailure},
		{"bad flag", "", []string{"--rate", "-1"}, ExitUsage},
		{"bad protocol", "", []string{"--protocol", "gopher"}, ExitUsage},
		{"stray argument", "", []string{"extra"}, ExitUsage},
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
