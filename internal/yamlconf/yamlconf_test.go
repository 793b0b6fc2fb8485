package yamlconf

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// read parses src and reads it with f, returning the problems' lines.
func read(t *testing.T, src string, f func(m *Mapping)) []string {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	p := &Problems{Source: "c.yaml"}
	if m := NewMapping(p, "", doc.Content[0]); m != nil {
		f(m)
		m.Done()
	}
	var out []string
	for _, pr := range p.List {
		out = append(out, pr.String())
	}
	return out
}

func TestProblemsAtTheirPlace(t *testing.T) {
	t.Parallel()
	src := "name: x\nport: 70000\nwait: 5q\non: maybe\nsub:\n  - {a: 1, bb: 2}\nnmae: y\n"
	var name string
	var port int64
	var wait time.Duration
	var on bool
	got := read(t, src, func(m *Mapping) {
		m.Str("name", &name)
		m.Int64("port", &port, 1, 65535)
		m.Duration("wait", &wait, 0, time.Hour)
		m.Bool("on", &on)
		m.List("sub", func(path string, item *yaml.Node) {
			s := NewMapping(m.p, path, item)
			var a int
			s.Int("a", &a, 0, 9)
			s.Get("b")
			s.Done()
		})
	})
	want := []string{
		`c.yaml:2:7: port: must be from 1 to 65535, not 70000`,
		`c.yaml:3:7: wait: "5q" is not a duration: use a number and a unit, as in 30s, 5m, 2h, 1h30m or 14d`,
		`c.yaml:4:5: on: must be true or false, not "maybe"`,
		`c.yaml:6:12: sub[0]: unknown key "bb" (did you mean "b"?)`,
		`c.yaml:7:1: unknown key "nmae" (did you mean "name"?)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if name != "x" || port != 0 || wait != 0 {
		t.Errorf("values: %q %d %v; a wrong value must leave its destination alone", name, port, wait)
	}
}

// Merges of merges grow exponentially; the reader stops at a bound and
// says so, rather than doing the work.
func TestMergeBombBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 {k: v}\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "a%d: &a%d {<<: [*a%d, *a%d, *a%d, *a%d]}\n", i, i, i-1, i-1, i-1, i-1)
	}
	b.WriteString("top:\n  <<: *a30\n")
	got := read(t, b.String(), func(m *Mapping) {
		for i := 0; i <= 30; i++ {
			m.Get(fmt.Sprintf("a%d", i))
		}
		NewMapping(m.p, "top", m.Get("top"))
	})
	if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "nested deeper than") && !strings.Contains(strings.Join(got, "\n"), "too many keys") {
		t.Errorf("a merge bomb read without complaint: %q", got)
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	p := &Problems{Source: "f"}
	if p.Err("x") != nil {
		t.Fatal("no problems, yet an error")
	}
	p.At(nil, "k", "bad")
	if err := p.Err("x"); err == nil || err.Error() != "x: f: k: bad" {
		t.Errorf("one problem: %v", err)
	}
	for i := range 30 {
		p.AtLine("g", i+1, "n%d", i)
	}
	err := p.Err("x")
	var e *Error
	if !errors.As(err, &e) || len(e.Problems) != 31 || !strings.HasPrefix(err.Error(), "x: 31 problems:") || !strings.HasSuffix(err.Error(), "... and 11 more") {
		t.Errorf("31 problems: %v", err)
	}
}

// TestLongTextIsQuotedCut: a 64 KB value, key or regular expression is
// named in a problem by its first 64 bytes and its length, not echoed
// whole.
func TestLongTextIsQuotedCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 32<<10)
	src := "port: " + long + "\n? " + long + "\n: 1\nre: '(" + long + "'\n"
	got := read(t, src, func(m *Mapping) {
		var port int64
		m.Int64("port", &port, 1, 65535)
		m.Regexp("re", new(*regexp.Regexp))
	})
	if len(got) != 3 {
		t.Fatalf("problems: %d, want 3", len(got))
	}
	for _, line := range got {
		if len(line) > 200 || !strings.Contains(line, "... (65536 bytes)") && !strings.Contains(line, "... (65537 bytes)") {
			t.Errorf("%d bytes: %.300s", len(line), line)
		}
	}
	if q := Quote(long); q != `"`+strings.Repeat("é", 32)+`"... (65536 bytes)` {
		t.Errorf("Quote: %s", q)
	}
}
