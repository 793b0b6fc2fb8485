package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/golden/*.json from gsq's output")

// TestGolden queries a fake server of every a2stest and ogptest profile
// through `gsq query --json` and compares the object with
// testdata/golden/PROTOCOL-PROFILE.json, the JSON contract as
// docs/json.md documents it. The server's address and the round-trip
// time, which change from run to run, are replaced by fixed values.
// go test -run Golden -update rewrites the files.
func TestGolden(t *testing.T) {
	t.Parallel()
	for _, p := range a2stest.Profiles() {
		t.Run("a2s-"+p.Name, func(t *testing.T) {
			t.Parallel()
			srv := a2stest.NewServer(p)
			defer srv.Close()
			args := []string{"query", "--json"}
			if p.Loss > 0 {
				// Enough tries that 20% loss cannot fail a section.
				args = append(args, "--timeout", "100ms", "--retries", "40", "--deadline", "1m")
			}
			checkGolden(t, "a2s-"+p.Name, srv.Addr().String(), append(args, srv.Addr().String()))
		})
	}
	for _, p := range ogptest.Profiles() {
		t.Run("ogp-"+p.Name, func(t *testing.T) {
			t.Parallel()
			srv := ogptest.NewServer(p)
			defer srv.Close()
			args := []string{"query", "--json", "--protocol", "ogp", "--dialect", p.Dialect.String()}
			if p.DropEvery > 0 {
				args = append(args, "--timeout", "100ms", "--retries", "40", "--deadline", "1m")
			}
			checkGolden(t, "ogp-"+p.Name, srv.Addr().String(), append(args, srv.Addr().String()))
		})
	}
}

// TestGoldenMinecraft does the same for every minecraft/mctest profile:
// minecraft (Server List Ping) and, where the profile answers them,
// mcquery and bedrock, each in a file of its own.
func TestGoldenMinecraft(t *testing.T) {
	t.Parallel()
	for _, p := range mctest.Profiles() {
		srv := mctest.NewServer(p)
		t.Cleanup(srv.Close)
		run := func(proto string, addr netip.AddrPort) {
			t.Run(proto+"-"+p.Name, func(t *testing.T) {
				t.Parallel()
				checkGolden(t, proto+"-"+p.Name, addr.String(), []string{"query", "--json", "--protocol", proto, addr.String()})
			})
		}
		if !p.NoJava {
			run("minecraft", srv.Addr())
		}
		switch {
		case p.Query && !p.NoJava:
			run("mcquery", srv.Addr())
		case p.Query:
			run("mcquery", srv.BedrockAddr())
		}
		if p.Bedrock {
			run("bedrock", srv.BedrockAddr())
		}
	}
}

var pingField = regexp.MustCompile(`"ping_ms":[0-9.e+-]+`)

func checkGolden(t *testing.T, name, addr string, args []string) {
	_, stdout, stderr := runGSQ(t, nil, nil, nil, args...)
	out := strings.ReplaceAll(strings.TrimSpace(stdout), addr, "127.0.0.1:PORT")
	out = pingField.ReplaceAllString(out, `"ping_ms":0.5`)
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(out), "", "  "); err != nil {
		t.Fatalf("not JSON (%v): %s\nstderr: %s", err, stdout, stderr)
	}
	indented.WriteByte('\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *updateGolden {
		if err := os.WriteFile(path, indented.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run Golden -update to write it)", err)
	}
	if got := indented.String(); got != string(want) {
		t.Errorf("%s differs from %s:\n%s", name, path, lineDiff(string(want), got))
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(w), len(g)) && shown < 10; i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, wl, gl)
			shown++
		}
	}
	return b.String()
}
