// Package archtest holds the tests of the module's shape: which package may
// import which (the layers CONTRIBUTING.md describes), and the conventions
// of docs/conventions.md that hold across packages. It has no code of its
// own; its tests read the module with `go list` and go/parser.
package archtest

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/gsq-project/gsq"

// pkg is what `go list -json` says of a package.
type pkg struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// listModule lists the module's packages, test-only ones included.
func listModule(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-json=ImportPath,Dir,GoFiles,Imports", module+"/...").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list: %v\n%s", err, stderr)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages; the module has more", len(pkgs))
	}
	return pkgs
}

// Layers, from the bottom up. A package may import the module's packages
// of its own layer or below.
const (
	layerHelper   = iota + 1 // internal helpers: the standard library only
	layerProtocol            // a2s, ogp, rcon, minecraft, the consoles, the discovery protocols, the catalogue, and their subpackages: std + helpers
	layerResult              // result: the protocol-neutral result model
	layerRegistry            // protocol: the registry of query protocols
	layerEngine              // scan, internal/sim
	layerStore               // store: databases
	layerMonitor             // monitor
	layerWeb                 // web
	layerCLI                 // cmd/gsq and its cli
)

// layerOf places a package of the module (path relative to the module)
// in its layer; ok is false for a package no rule covers.
func layerOf(rel string) (layer int, ok bool) {
	under := func(prefix string) bool { return rel == prefix || strings.HasPrefix(rel, prefix+"/") }
	switch {
	case under("a2s"), under("ogp"), under("rcon"), under("console"), under("minecraft"),
		under("battleye"), under("webrcon"), under("sdtd"), under("palworld"),
		under("serverlist"), under("master"), under("steamapi"), under("satisfactory"), under("fivem"), under("catalog"):
		return layerProtocol, true
	case under("result"):
		return layerResult, true
	case under("protocol"):
		return layerRegistry, true
	case under("scan"), under("internal/sim"):
		return layerEngine, true
	case under("internal/archtest"):
		return layerCLI, true // tests only: it looks at everything
	case under("internal/yamlconf"):
		return layerStore, true // a YAML reader for the configs of monitor and cli
	case under("internal"):
		return layerHelper, true
	case under("store"):
		return layerStore, true
	case under("monitor"):
		return layerMonitor, true
	case under("web"):
		return layerWeb, true
	case under("cmd"):
		return layerCLI, true
	}
	return 0, false
}

// thirdPartyAllowed reports whether packages of the layer may import
// modules outside the standard library and this one.
func thirdPartyAllowed(layer int) bool { return layer >= layerStore }

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func TestLayers(t *testing.T) {
	t.Parallel()
	pkgs := listModule(t)
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		layer, ok := layerOf(rel)
		if !ok {
			t.Errorf("%s is in no layer: place it in layerOf", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			switch {
			case imp == module || strings.HasPrefix(imp, module+"/"):
				irel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				il, ok := layerOf(irel)
				if ok && il > layer {
					t.Errorf("%s (layer %d) imports %s (layer %d), above it", rel, layer, irel, il)
				}
			case isStd(imp):
			case !thirdPartyAllowed(layer):
				t.Errorf("%s (layer %d) imports %s: only the standard library and the module's lower layers are allowed there", rel, layer, imp)
			}
		}
	}
}

// The A2S replies a client receives are parsed in package a2s only: every
// other package drives an a2s.Client or an a2s.Conversation. The parsers
// of replies and the reassembler of split ones may be named outside a2s
// only in tests and in a2s's own subpackages (the fake server a2stest turns
// its own replies into quirky ones).
var a2sReplyParsers = map[string]bool{
	"ParseInfo": true, "ParsePlayers": true, "ParseRules": true, "ParseRulesOwned": true,
	"ParseChallenge": true, "ParseBanned": true, "ParsePing": true, "ParseFragment": true,
	"Reassembler": true,
}

func TestOnlyA2SParsesA2SReplies(t *testing.T) {
	t.Parallel()
	pkgs := listModule(t)
	seen := 0
	for _, p := range pkgs {
		if p.ImportPath == module+"/a2s" || strings.HasPrefix(p.ImportPath, module+"/a2s/") {
			continue
		}
		for _, name := range p.GoFiles {
			seen++
			for _, use := range a2sNames(t, filepath.Join(p.Dir, name)) {
				if a2sReplyParsers[use.name] {
					t.Errorf("%s: a2s.%s: only package a2s parses A2S replies (use a2s.Client or a2s.Conversation)", use.pos, use.name)
				}
			}
		}
	}
	if seen == 0 {
		t.Fatal("no source files read")
	}
}

type use struct {
	name string
	pos  token.Position
}

// a2sNames returns the names the file takes from package a2s.
func a2sNames(t *testing.T, file string) []use {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := ""
	for _, imp := range f.Imports {
		if path, _ := strconv.Unquote(imp.Path.Value); path == module+"/a2s" {
			local = "a2s"
			if imp.Name != nil {
				local = imp.Name.Name
			}
		}
	}
	if local == "" {
		return nil
	}
	var uses []use
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == local {
				uses = append(uses, use{sel.Sel.Name, fset.Position(sel.Pos())})
			}
		}
		return true
	})
	return uses
}

// The checks above can fail: a package of the protocol layer importing a
// third-party module, or one above it, is caught, and so is a call of an
// A2S reply parser.
func TestLayerRulesCatch(t *testing.T) {
	t.Parallel()
	if l, _ := layerOf("a2s/bohemia"); thirdPartyAllowed(l) {
		t.Error("a protocol package may import third-party modules")
	}
	pl, _ := layerOf("ogp")
	for _, above := range []string{"result", "protocol", "scan", "store", "monitor", "web", "cmd/gsq/cli", "internal/sim"} {
		if l, _ := layerOf(above); l <= pl {
			t.Errorf("%s is not above ogp", above)
		}
	}
	rl, _ := layerOf("result")
	gl, _ := layerOf("protocol")
	sl, _ := layerOf("scan")
	if !(rl < gl && gl < sl) {
		t.Errorf("the registry (layer %d) is not above result (%d) and below scan (%d)", gl, rl, sl)
	}
	dir := t.TempDir()
	src := "package x\nimport p \"" + module + "/a2s\"\nvar _, _ = p.ParseInfo(nil)\n"
	file := filepath.Join(dir, "x.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if uses := a2sNames(t, file); len(uses) != 1 || !a2sReplyParsers[uses[0].name] {
		t.Errorf("a2sNames = %v, want the one ParseInfo", uses)
	}
}
