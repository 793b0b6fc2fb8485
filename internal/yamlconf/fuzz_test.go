package yamlconf

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/textdist"
)

// walkBudget bounds the nodes FuzzRead's walker visits: aliases can make
// a small document a large tree, and the walker, unlike a config reader,
// goes everywhere.
const walkBudget = 20_000

// maxMessage bounds a problem's message: texts of the config are quoted
// cut (Quote), never whole.
const maxMessage = 512

// walk reads n at path with every reader the package has, each key by
// the reader its name picks, down to depth 4, and counts the nodes.
func walk(p *Problems, path string, n *yaml.Node, depth int, budget *int) {
	*budget--
	if *budget < 0 || depth > 4 {
		return
	}
	switch r := Resolve(n); {
	case r == nil:
	case r.Kind == yaml.SequenceNode:
		EachItem(p, path, n, func(path string, item *yaml.Node) { walk(p, path, item, depth+1, budget) })
	case r.Kind == yaml.MappingNode:
		m := NewMapping(p, path, n)
		if m == nil {
			return
		}
		keys := m.Keys
		if len(keys) > 50 {
			keys = keys[:50] // the rest are reported unknown
		}
		for i, k := range keys {
			readKey(m, k.Value, i, depth, budget)
		}
		m.Done()
	default:
		ScalarString(p, path, n)
		DurationValue(p, path, n)
	}
}

// readKey reads one key of m with the reader i picks.
func readKey(m *Mapping, key string, i, depth int, budget *int) {
	switch i % 10 {
	case 0:
		var s string
		m.Str(key, &s)
	case 1:
		var b bool
		m.Bool(key, &b)
	case 2:
		var n int64
		m.Int64(key, &n, -1000, 1000)
	case 3:
		var d time.Duration
		m.Duration(key, &d, 0, time.Hour)
	case 4:
		var list []string
		m.StringList(key, &list)
	case 5:
		var sm map[string]string
		if m.StringMap(key, &sm) && sm != nil {
			roundTripStringMap(m.p, sm)
		}
	case 6:
		var re *regexp.Regexp
		m.Regexp(key, &re)
	case 7:
		m.List(key, func(path string, item *yaml.Node) { walk(m.p, path, item, depth+1, budget) })
	default:
		walk(m.p, m.Sub(key), m.Get(key), depth+1, budget)
	}
	m.Has(key)
}

// roundTripStringMap checks that a mapping read with StringMap, written
// by yaml.v3 and read again, is the same mapping.
func roundTripStringMap(p *Problems, sm map[string]string) {
	out, err := yaml.Marshal(map[string]map[string]string{"k": sm})
	if err != nil {
		p.At(nil, "", "round trip: marshal: %v", err)
		return
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(out, &doc); err != nil {
		p.At(nil, "", "round trip: %v", err)
		return
	}
	q := &Problems{}
	var again map[string]string
	if m := NewMapping(q, "", doc.Content[0]); m == nil || !m.StringMap("k", &again) || len(again) != len(sm) {
		p.At(nil, "", "round trip: %d values read back as %d", len(sm), len(again))
		return
	}
	for k, v := range sm {
		if again[k] != v {
			p.At(nil, "", "round trip: %s is %s, read back as %s", Quote(k), Quote(v), Quote(again[k]))
		}
	}
}

// yamlLines counts the lines of data as YAML does: a line ends at \n,
// \r\n, \r, NEL, LS or PS.
func yamlLines(data []byte) int {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	n := 1
	for _, br := range []string{"\n", "\r", "\u0085", "\u2028", "\u2029"} {
		n += strings.Count(s, br)
	}
	return n
}

// FuzzRead reads any YAML document with every reader of the package.
// Properties: nothing panics; the work merges cause stays within its
// bound; every problem is placed inside the document (or nowhere) and
// its message is bounded; a syntax error is placed on a line of the
// document; a mapping of texts survives being written and read again;
// the error lists at most 20 problems.
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		"name: x\nport: 70000\nwait: 5q\non: maybe\nsub:\n  - {a: 1, bb: 2}\nnmae: y\n",
		"base: &b {interval: 10s, labels: {a: x}}\nservers:\n  - <<: *b\n    name: one\n  - <<: [*b, {name: two}]\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
		"m0: &m0 {k: v}\nm1: &m1 {<<: [*m0, *m0]}\nm2: &m2 {<<: [*m1, *m1]}\nm3: {<<: [*m2, *m2]}\n",
		"k: '" + strings.Repeat("x", 300) + "'\nre: '(('\n? [a]\n: b\n",
		"servers:\n  cs:\n    address: 127.0.0.1\n   password: abc\n",
		"a: [1,\n  2]\nb:\n  c: 1\n d: 2\n",
		"x: !!binary aGVsbG8=\ny: 0x10\nz: ~\nt: 2026-01-01\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		// yaml.v3 places the end of the stream, an empty value or a
		// fault there, on the line after the last ("?" alone is a
		// value on line 2).
		lines := yamlLines(data) + 1
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			line, problem := SyntaxError(data, err)
			if line < 0 || line > lines || problem == "" {
				t.Fatalf("syntax error placed at line %d of %d: %q", line, lines, problem)
			}
			return
		}
		p := &Problems{Source: "f.yaml"}
		budget := walkBudget
		for _, n := range doc.Content {
			walk(p, "", n, 0, &budget)
		}
		if p.work > maxYAMLWork+1 {
			t.Fatalf("merges did %d work, more than the bound %d", p.work, maxYAMLWork)
		}
		for _, pr := range p.List {
			if strings.HasPrefix(pr.Message, "round trip") {
				t.Fatal(pr.Message)
			}
			if pr.Line < 0 || pr.Line > lines || pr.Column < 0 {
				t.Fatalf("problem placed at %d:%d in %d lines: %s", pr.Line, pr.Column, lines, pr)
			}
			if len(pr.Message) > maxMessage {
				t.Fatalf("a message of %d bytes: %.200s...", len(pr.Message), pr.Message)
			}
		}
		if err := p.Err("f"); err != nil && len(p.List) > 1 {
			if n := strings.Count(err.Error(), "\n"); n > maxProblemsShown+1 {
				t.Fatalf("the error has %d lines", n+1)
			}
		}
	})
}

// FuzzClosest checks the "did you mean" distance: symmetric, zero only
// for equal words, never more than the longer word (and 64 for words
// longer than that, which are never keys), and Closest names a known
// word within two edits or none.
func FuzzClosest(f *testing.F) {
	f.Add("intervall", "interval")
	f.Add("treshold", "threshold")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := textdist.Distance(a, b)
		if d != textdist.Distance(b, a) {
			t.Fatalf("distance(%q, %q) = %d, the other way %d", a, b, d, textdist.Distance(b, a))
		}
		long := len(a) > 64 || len(b) > 64
		if long && d != 64 || !long && ((d == 0) != (a == b) || d < 0 || d > max(len(a), len(b))) {
			t.Fatalf("distance(%q, %q) = %d", a, b, d)
		}
		if c := Closest(a, []string{b}); c != "" && (c != b || textdist.Distance(strings.ToLower(a), b) > 2) {
			t.Fatalf("Closest(%q, [%q]) = %q", a, b, c)
		}
	})
}
