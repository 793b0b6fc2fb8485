package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/gsq-project/gsq/protocol"
)

// spelling is a place that spells a registered protocol's name or default
// port itself, instead of asking the registry.
type spelling struct {
	what string
	pos  token.Position
}

// registered are the names and the default ports of the registry's
// protocols.
func registered() (names map[string]bool, ports map[uint64]bool) {
	names, ports = map[string]bool{}, map[uint64]bool{}
	for _, p := range protocol.All() {
		names[p.Name] = true
		if p.DefaultPort != 0 {
			ports[uint64(p.DefaultPort)] = true
		}
	}
	return names, ports
}

// spellings returns the literals of file that spell a protocol's name
// (a string that is the name, in any case) or its default port (a number,
// or a run of digits in a string, such as "127.0.0.1:27015" in a help
// text). Comments are not code: they are not read.
func spellings(t *testing.T, file string, names map[string]bool, ports map[uint64]bool) []spelling {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var out []spelling
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok {
			return true
		}
		switch lit.Kind {
		case token.INT:
			if v, err := strconv.ParseUint(lit.Value, 0, 64); err == nil && ports[v] {
				out = append(out, spelling{"the default port " + lit.Value, fset.Position(lit.Pos())})
			}
		case token.STRING:
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if names[strings.ToLower(s)] {
				out = append(out, spelling{"the protocol name " + lit.Value, fset.Position(lit.Pos())})
			}
			for _, digits := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) {
				if v, err := strconv.ParseUint(digits, 10, 64); err == nil && ports[v] {
					out = append(out, spelling{"the default port " + digits + " in a string", fset.Position(lit.Pos())})
				}
			}
		}
		return true
	})
	return out
}

// TestProtocolsFromRegistry: what protocols exist, their names and their
// default ports are spelled in one place, package protocol's registry
// (and in the protocol packages themselves, which the registry quotes).
// Every other package asks the registry: no name or port of a registered
// protocol appears as a literal in its code (tests aside).
func TestProtocolsFromRegistry(t *testing.T) {
	t.Parallel()
	names, ports := registered()
	if len(names) < 2 || len(ports) < 1 {
		t.Fatalf("the registry has %d names and %d ports", len(names), len(ports))
	}
	seen := 0
	for _, p := range listModule(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		layer, _ := layerOf(rel)
		if layer == layerProtocol || rel == "protocol" || strings.HasPrefix(rel, "internal/archtest") {
			continue
		}
		for _, name := range p.GoFiles {
			seen++
			for _, s := range spellings(t, filepath.Join(p.Dir, name), names, ports) {
				t.Errorf("%s: %s: ask package protocol (Lookup, Default, a Protocol's Name and DefaultPort)", s.pos, s.what)
			}
		}
	}
	if seen == 0 {
		t.Fatal("no source files read")
	}
}

// The check can fail: a port as a number, a port in an address, a name in
// any case, are each caught; a comment and a longer word are not.
func TestRegistryCheckCatches(t *testing.T) {
	t.Parallel()
	names, ports := registered()
	var name string
	var port uint64
	for n := range names {
		name = n
	}
	for p := range ports {
		port = p
	}
	src := fmt.Sprintf(`package x
// The port %[2]d and %[1]q in a comment are fine.
const a = %[2]d
var b = "127.0.0.1:%[2]d"
var c = %[3]q
var d = "%[1]s-like, not the name"
var e = 0x%[2]x
`, name, port, strings.ToUpper(name))
	file := filepath.Join(t.TempDir(), "x.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got := spellings(t, file, names, ports)
	lines := map[int]bool{}
	for _, s := range got {
		lines[s.pos.Line] = true
	}
	if len(got) != 4 || !lines[3] || !lines[4] || !lines[5] || !lines[7] {
		t.Errorf("spellings = %v, want lines 3, 4, 5 and 7", got)
	}
}
