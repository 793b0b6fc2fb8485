// Package yamlconf reads YAML configuration files from their node tree
// rather than by decoding into structs, so that every problem is reported
// at its line and column, in the words of the file (key names, "a
// duration", "true or false"), never in those of Go's types; every problem
// is collected, not only the first; unknown keys are reported with the known
// key they are closest to; and aliases and merge keys ("<<") are bounded, so
// a "billion laughs" document costs no more than a megabyte of keys. It
// serves the configs of gsq monitor, gsq rcon and gsq serve.
//
// YAML 1.2 is specified at https://yaml.org/spec/1.2.2/; the node tree is
// that of go.yaml.in/yaml/v3.
package yamlconf

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/internal/textdist"
	"go.yaml.in/yaml/v3"
)

// Problem is one thing wrong with a config, at a place in its file.
type Problem struct {
	Source       string // the file, or the flag ("--target")
	Line, Column int    // 1-based; 0 when the place is unknown
	Path         string // where in the config: "servers[2] (eu-1).interval"
	Message      string
}

// String is "source:line:column: path: message", leaving out what is
// unknown.
func (p Problem) String() string {
	var b strings.Builder
	if p.Source != "" {
		b.WriteString(p.Source)
		if p.Line > 0 {
			b.WriteByte(':')
		} else {
			b.WriteString(": ")
		}
	}
	if p.Line > 0 {
		fmt.Fprintf(&b, "%d:", p.Line)
		if p.Column > 0 {
			fmt.Fprintf(&b, "%d:", p.Column)
		}
		b.WriteByte(' ')
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Error lists what is wrong with a config: every problem found, not only
// the first, each at its place. Its message starts with Prefix
// ("monitor: config").
type Error struct {
	Prefix   string
	Problems []Problem
}

// maxProblemsShown bounds the lines of a ConfigError's message.
const maxProblemsShown = 20

// Error is the prefix and the problem, or the number of problems and one
// line for each of the first 20.
func (e *Error) Error() string {
	var b strings.Builder
	if len(e.Problems) == 1 {
		b.WriteString(e.Prefix)
		b.WriteString(": ")
		b.WriteString(e.Problems[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, "%s: %d problems:", e.Prefix, len(e.Problems))
	for i, p := range e.Problems {
		if i == maxProblemsShown {
			fmt.Fprintf(&b, "\n  ... and %d more", len(e.Problems)-i)
			break
		}
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// Problems collects the problems of one config as it is read.
type Problems struct {
	Source string // set on each Problem added
	List   []Problem
	// work bounds what merge keys can make the reader do: a chain of
	// merges of merges grows exponentially, as YAML's "billion laughs".
	work int
}

// maxYAMLWork bounds the key-value pairs read, merges included.
const maxYAMLWork = 1 << 20

// At adds a problem at node n (its place unknown when n is nil).
func (p *Problems) At(n *yaml.Node, path, format string, args ...any) {
	pr := Problem{Source: p.Source, Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		pr.Line, pr.Column = n.Line, n.Column
	}
	p.List = append(p.List, pr)
}

// AtLine adds a problem at a line of a file other than the config's (a
// target list).
func (p *Problems) AtLine(source string, line int, format string, args ...any) {
	p.List = append(p.List, Problem{Source: source, Line: line, Message: fmt.Sprintf(format, args...)})
}

// Err returns the problems as an *Error with the prefix, or nil when
// there are none.
func (p *Problems) Err(prefix string) error {
	if len(p.List) == 0 {
		return nil
	}
	return &Error{Prefix: prefix, Problems: p.List}
}

// Resolve follows aliases to the node they name.
func Resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or YAML's null ("key:" with nothing
// after it, "~", "null").
func IsNull(n *yaml.Node) bool {
	n = Resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// KindName says what a node is, for messages.
func KindName(n *yaml.Node) string {
	switch n = Resolve(n); {
	case n == nil || IsNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	default:
		return Quote(n.Value)
	}
}

// maxQuoted bounds the bytes of a config's text that a message quotes.
const maxQuoted = 64

// Quote quotes a text of the config for a message, as strconv.Quote
// does, cut after 64 bytes: a long value or key is named by its start
// and its length, "\"aaaa...\"... (65536 bytes)", never echoed whole.
func Quote(s string) string {
	head, rest := cutQuoted(s)
	return strconv.Quote(head) + rest
}

// cutQuoted is the part of s a message quotes, and what to write after
// the quotes: "" for all of s, or "... (N bytes)".
func cutQuoted(s string) (head, rest string) {
	if len(s) <= maxQuoted {
		return s, ""
	}
	cut := maxQuoted
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut], fmt.Sprintf("... (%d bytes)", len(s))
}

// Mapping reads a YAML mapping, key by key, and reports the keys nobody
// asked for as unknown.
type Mapping struct {
	Path  string       // where the mapping is in the config, for messages
	Node  *yaml.Node   // the mapping itself
	Keys  []*yaml.Node // its keys, merged ones included, in file order
	Asked []string     // the keys asked for with Get, in order
	// checked are the keys looked for with Has: known keys, which an
	// unknown key may be a typo of even when they are absent.
	checked []string
	p       *Problems
	vals    map[string]*yaml.Node
	line    map[string]int // where each explicit key is
}

// maxMergeDepth bounds merges of merges ("<<: *a" where a merges b ...).
const maxMergeDepth = 8

// NewMapping starts reading n as a mapping. It reports a node that is not
// one, and returns nil.
func NewMapping(p *Problems, path string, n *yaml.Node) *Mapping {
	n = Resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.At(n, path, "must be a mapping of keys to values, not %s", KindName(n))
		return nil
	}
	m := &Mapping{p: p, Path: path, Node: n, vals: make(map[string]*yaml.Node), line: make(map[string]int)}
	m.add(n, 0, true)
	return m
}

// add takes the pairs of n. Explicit keys are reported when given twice;
// merged keys ("<<") fill in only the keys not given explicitly.
func (m *Mapping) add(n *yaml.Node, depth int, explicit bool) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		m.p.work++
		if m.p.work > maxYAMLWork {
			if m.p.work == maxYAMLWork+1 {
				m.p.At(n, m.Path, "too many keys, or merges nested too deep")
			}
			return
		}
		k, v := Resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			m.p.At(k, m.Path, "a key must be a plain word, not %s", KindName(k))
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if _, ok := m.vals[k.Value]; ok {
			if explicit {
				m.p.At(k, m.Path, "key %s given twice (first at line %d)", Quote(k.Value), m.line[k.Value])
			}
			continue
		}
		if explicit {
			m.line[k.Value] = k.Line
		}
		m.Keys = append(m.Keys, k)
		m.vals[k.Value] = v
	}
	for _, v := range merges {
		if depth >= maxMergeDepth {
			m.p.At(v, m.Path, "merges (<<) nested deeper than %d", maxMergeDepth)
			return
		}
		v = Resolve(v)
		var sources []*yaml.Node
		switch v.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{v}
		case yaml.SequenceNode:
			sources = v.Content
		}
		for _, s := range sources {
			if s = Resolve(s); s.Kind != yaml.MappingNode {
				m.p.At(s, m.Path, "a merge (<<) takes a mapping or a list of mappings, not %s", KindName(s))
				continue
			}
			m.add(s, depth+1, false)
		}
		if sources == nil {
			m.p.At(v, m.Path, "a merge (<<) takes a mapping or a list of mappings, not %s", KindName(v))
		}
	}
}

// Get returns the value of key, or nil when it is absent.
func (m *Mapping) Get(key string) *yaml.Node {
	m.Asked = append(m.Asked, key)
	return m.vals[key]
}

// Has reports whether key is present, with a value or null.
func (m *Mapping) Has(key string) bool {
	m.checked = append(m.checked, key)
	_, ok := m.vals[key]
	return ok
}

// Sub is the path of a key under m's path.
func (m *Mapping) Sub(key string) string { return JoinPath(m.Path, key) }

// Done reports every key that was not asked for, with the known key
// (asked for, or looked for with Has) it is closest to.
func (m *Mapping) Done() {
	for _, k := range m.Keys {
		if slices.Contains(m.Asked, k.Value) {
			continue
		}
		msg := "unknown key " + Quote(k.Value)
		if s := Closest(k.Value, slices.Concat(m.Asked, m.checked)); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		m.p.At(k, m.Path, "%s", msg)
	}
}

// Closest returns the word of known within two edits of s, if any.
func Closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := textdist.Distance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// The value readers below report a wrong value at its line and return
// ok false; an absent key (nil node) is ok with the value untouched, so
// that callers set defaults first.

// Str reads a single value as text.
func (m *Mapping) Str(key string, dst *string) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	s, ok := ScalarString(m.p, m.Sub(key), n)
	if ok {
		*dst = s
	}
	return ok
}

// ScalarString reads n, at path, as a single value.
func ScalarString(p *Problems, path string, n *yaml.Node) (string, bool) {
	r := Resolve(n)
	if IsNull(r) {
		p.At(n, path, "needs a value")
		return "", false
	}
	if r.Kind != yaml.ScalarNode {
		p.At(n, path, "must be a single value, not %s", KindName(r))
		return "", false
	}
	return r.Value, true
}

// Bool reads true or false.
func (m *Mapping) Bool(key string, dst *bool) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	r := Resolve(n)
	if r.Kind != yaml.ScalarNode || r.Tag != "!!bool" {
		m.p.At(n, m.Sub(key), "must be true or false, not %s", KindName(r))
		return false
	}
	*dst = r.Value == "true" || r.Value == "True" || r.Value == "TRUE"
	return true
}

// Int reads a whole number within [lo, hi].
func (m *Mapping) Int(key string, dst *int, lo, hi int) bool {
	v := int64(*dst)
	if !m.Int64(key, &v, int64(lo), int64(hi)) {
		return false
	}
	*dst = int(v)
	return true
}

// Int64 reads a whole number within [lo, hi].
func (m *Mapping) Int64(key string, dst *int64, lo, hi int64) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	r := Resolve(n)
	v, err := strconv.ParseInt(r.Value, 10, 64)
	if r.Kind != yaml.ScalarNode || r.Tag != "!!int" || err != nil {
		m.p.At(n, m.Sub(key), "must be a whole number, not %s", KindName(r))
		return false
	}
	if v < lo || v > hi {
		m.p.At(n, m.Sub(key), "must be from %d to %d, not %d", lo, hi, v)
		return false
	}
	*dst = v
	return true
}

// Duration reads a duration within [lo, hi].
func (m *Mapping) Duration(key string, dst *time.Duration, lo, hi time.Duration) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	d, ok := DurationValue(m.p, m.Sub(key), n)
	if !ok {
		return false
	}
	if d < lo || d > hi {
		switch {
		case lo == hi:
			m.p.At(n, m.Sub(key), "must be %s", duration.Format(lo))
		case d < 0 && lo == 0:
			m.p.At(n, m.Sub(key), "must not be negative, not %s", duration.Format(d))
		case lo == 0:
			m.p.At(n, m.Sub(key), "must be at most %s, not %s", duration.Format(hi), duration.Format(d))
		default:
			m.p.At(n, m.Sub(key), "must be from %s to %s, not %s", duration.Format(lo), duration.Format(hi), duration.Format(d))
		}
		return false
	}
	*dst = d
	return true
}

// DurationValue reads n, at path, as a duration.
func DurationValue(p *Problems, path string, n *yaml.Node) (time.Duration, bool) {
	s, ok := ScalarString(p, path, n)
	if !ok {
		return 0, false
	}
	d, err := duration.Parse(s)
	if err != nil {
		p.At(n, path, "%v", err)
		return 0, false
	}
	return d, true
}

// List calls f for each item of the list under key.
func (m *Mapping) List(key string, f func(path string, item *yaml.Node)) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	return EachItem(m.p, m.Sub(key), n, f)
}

// EachItem calls f for each item of the list n, at path; nothing (null)
// is an empty list.
func EachItem(p *Problems, path string, n *yaml.Node, f func(path string, item *yaml.Node)) bool {
	r := Resolve(n)
	if IsNull(r) {
		return true // "key:" with nothing: an empty list
	}
	if r.Kind != yaml.SequenceNode {
		p.At(n, path, "must be a list, not %s", KindName(r))
		return false
	}
	for i, item := range r.Content {
		f(fmt.Sprintf("%s[%d]", path, i), item)
	}
	return true
}

// StringList reads a list of single values; a single value alone is a list
// of one.
func (m *Mapping) StringList(key string, dst *[]string) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	if r := Resolve(n); r.Kind == yaml.ScalarNode && !IsNull(r) {
		*dst = []string{r.Value}
		return true
	}
	ok := true
	out := []string{}
	EachItem(m.p, m.Sub(key), n, func(path string, item *yaml.Node) {
		s, good := ScalarString(m.p, path, item)
		ok = ok && good
		out = append(out, s)
	})
	*dst = out
	return ok
}

// StringMap reads a mapping of words to single values.
func (m *Mapping) StringMap(key string, dst *map[string]string) bool {
	n := m.Get(key)
	if n == nil || IsNull(n) {
		return true
	}
	sub := NewMapping(m.p, m.Sub(key), n)
	if sub == nil {
		return false
	}
	ok := true
	out := make(map[string]string, len(sub.Keys))
	for _, k := range sub.Keys {
		s, good := ScalarString(m.p, sub.Sub(k.Value), sub.Get(k.Value))
		ok = ok && good
		out[k.Value] = s
	}
	*dst = out
	return ok
}

// Regexp reads a regular expression (RE2 syntax).
func (m *Mapping) Regexp(key string, dst **regexp.Regexp) bool {
	n := m.Get(key)
	if n == nil {
		return true
	}
	s, ok := ScalarString(m.p, m.Sub(key), n)
	if !ok {
		return false
	}
	re, err := regexp.Compile(s)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		if se := (*syntax.Error)(nil); errors.As(err, &se) {
			head, rest := cutQuoted(se.Expr)
			msg = se.Code.String() + ": `" + head + "`" + rest
		}
		m.p.At(n, m.Sub(key), "bad regular expression: %s", msg)
		return false
	}
	*dst = re
	return true
}

// JoinPath is the path of key under path.
func JoinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
