package monitor

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The config is read from a YAML node tree rather than decoded into
// structs, so that every problem is reported at its line, in the words of
// the config file (key names, "a duration", "true or false"), and never in
// those of Go's types.

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

// ConfigError lists what is wrong with a config: every problem found, not
// only the first, each at its place.
type ConfigError struct {
	Problems []Problem
}

// maxProblemsShown bounds the lines of a ConfigError's message.
const maxProblemsShown = 20

func (e *ConfigError) Error() string {
	var b strings.Builder
	if len(e.Problems) == 1 {
		b.WriteString("monitor: config: ")
		b.WriteString(e.Problems[0].String())
		return b.String()
	}
	fmt.Fprintf(&b, "monitor: config: %d problems:", len(e.Problems))
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

// problems collects the problems of one config as it is read.
type problems struct {
	source string // set on each Problem added
	list   []Problem
	// work bounds what merge keys can make the reader do: a chain of
	// merges of merges grows exponentially, as YAML's "billion laughs".
	work int
}

// maxYAMLWork bounds the key-value pairs read, merges included.
const maxYAMLWork = 1 << 20

func (p *problems) at(n *yaml.Node, path, format string, args ...any) {
	pr := Problem{Source: p.source, Path: path, Message: fmt.Sprintf(format, args...)}
	if n != nil {
		pr.Line, pr.Column = n.Line, n.Column
	}
	p.list = append(p.list, pr)
}

// atLine adds a problem at a line of a file other than the config's (a
// target list).
func (p *problems) atLine(source string, line int, format string, args ...any) {
	p.list = append(p.list, Problem{Source: source, Line: line, Message: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &ConfigError{Problems: p.list}
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is absent or YAML's null ("key:" with nothing
// after it, "~", "null").
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// kindName says what a node is, for messages.
func kindName(n *yaml.Node) string {
	switch n = resolve(n); {
	case n == nil || isNull(n):
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	default:
		return strconv.Quote(n.Value)
	}
}

// mapping reads a YAML mapping, key by key, and reports the keys nobody
// asked for as unknown.
type mapping struct {
	p     *problems
	path  string
	node  *yaml.Node
	keys  []*yaml.Node // in file order
	vals  map[string]*yaml.Node
	line  map[string]int // where each explicit key is
	asked []string
}

// maxMergeDepth bounds merges of merges ("<<: *a" where a merges b ...).
const maxMergeDepth = 8

// newMapping starts reading n as a mapping. It reports a node that is not
// one, and returns nil.
func newMapping(p *problems, path string, n *yaml.Node) *mapping {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.at(n, path, "must be a mapping of keys to values, not %s", kindName(n))
		return nil
	}
	m := &mapping{p: p, path: path, node: n, vals: make(map[string]*yaml.Node), line: make(map[string]int)}
	m.add(n, 0, true)
	return m
}

// add takes the pairs of n. Explicit keys are reported when given twice;
// merged keys ("<<") fill in only the keys not given explicitly.
func (m *mapping) add(n *yaml.Node, depth int, explicit bool) {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		m.p.work++
		if m.p.work > maxYAMLWork {
			if m.p.work == maxYAMLWork+1 {
				m.p.at(n, m.path, "too many keys, or merges nested too deep")
			}
			return
		}
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			m.p.at(k, m.path, "a key must be a plain word, not %s", kindName(k))
			continue
		}
		if k.Tag == "!!merge" {
			merges = append(merges, v)
			continue
		}
		if _, ok := m.vals[k.Value]; ok {
			if explicit {
				m.p.at(k, m.path, "key %q given twice (first at line %d)", k.Value, m.line[k.Value])
			}
			continue
		}
		if explicit {
			m.line[k.Value] = k.Line
		}
		m.keys = append(m.keys, k)
		m.vals[k.Value] = v
	}
	for _, v := range merges {
		if depth >= maxMergeDepth {
			m.p.at(v, m.path, "merges (<<) nested deeper than %d", maxMergeDepth)
			return
		}
		v = resolve(v)
		var sources []*yaml.Node
		switch v.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{v}
		case yaml.SequenceNode:
			sources = v.Content
		}
		for _, s := range sources {
			if s = resolve(s); s.Kind != yaml.MappingNode {
				m.p.at(s, m.path, "a merge (<<) takes a mapping or a list of mappings, not %s", kindName(s))
				continue
			}
			m.add(s, depth+1, false)
		}
		if sources == nil {
			m.p.at(v, m.path, "a merge (<<) takes a mapping or a list of mappings, not %s", kindName(v))
		}
	}
}

// get returns the value of key, or nil when it is absent.
func (m *mapping) get(key string) *yaml.Node {
	m.asked = append(m.asked, key)
	return m.vals[key]
}

// has reports whether key is present, with a value or null.
func (m *mapping) has(key string) bool {
	_, ok := m.vals[key]
	return ok
}

// sub is the path of a key under m's path.
func (m *mapping) sub(key string) string { return joinPath(m.path, key) }

// done reports every key that was not asked for, with the known key it
// is closest to.
func (m *mapping) done() {
	for _, k := range m.keys {
		if contains(m.asked, k.Value) {
			continue
		}
		msg := fmt.Sprintf("unknown key %q", k.Value)
		if s := closest(k.Value, m.asked); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		m.p.at(k, m.path, "%s", msg)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// closest returns the word of known within two edits of s, if any.
func closest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, on bytes; keys are
// short ASCII words.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// The value readers below report a wrong value at its line and return
// ok false; an absent key (nil node) is ok with the zero value untouched,
// so that callers set defaults first.

func (m *mapping) str(key string, dst *string) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	s, ok := scalarString(m.p, m.sub(key), n)
	if ok {
		*dst = s
	}
	return ok
}

func scalarString(p *problems, path string, n *yaml.Node) (string, bool) {
	r := resolve(n)
	if isNull(r) {
		p.at(n, path, "needs a value")
		return "", false
	}
	if r.Kind != yaml.ScalarNode {
		p.at(n, path, "must be a single value, not %s", kindName(r))
		return "", false
	}
	return r.Value, true
}

func (m *mapping) boolean(key string, dst *bool) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	r := resolve(n)
	if r.Kind != yaml.ScalarNode || r.Tag != "!!bool" {
		m.p.at(n, m.sub(key), "must be true or false, not %s", kindName(r))
		return false
	}
	*dst = r.Value == "true" || r.Value == "True" || r.Value == "TRUE"
	return true
}

func (m *mapping) integer(key string, dst *int, lo, hi int) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	r := resolve(n)
	v, err := strconv.Atoi(r.Value)
	if r.Kind != yaml.ScalarNode || r.Tag != "!!int" || err != nil {
		m.p.at(n, m.sub(key), "must be a whole number, not %s", kindName(r))
		return false
	}
	if v < lo || v > hi {
		m.p.at(n, m.sub(key), "must be from %d to %d, not %d", lo, hi, v)
		return false
	}
	*dst = v
	return true
}

// duration reads a duration within [lo, hi].
func (m *mapping) duration(key string, dst *time.Duration, lo, hi time.Duration) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	d, ok := durationValue(m.p, m.sub(key), n)
	if !ok {
		return false
	}
	if d < lo || d > hi {
		if lo == hi {
			m.p.at(n, m.sub(key), "must be %s", FormatDuration(lo))
		} else if lo == 0 {
			m.p.at(n, m.sub(key), "must be at most %s, not %s", FormatDuration(hi), FormatDuration(d))
		} else {
			m.p.at(n, m.sub(key), "must be from %s to %s, not %s", FormatDuration(lo), FormatDuration(hi), FormatDuration(d))
		}
		return false
	}
	*dst = d
	return true
}

func durationValue(p *problems, path string, n *yaml.Node) (time.Duration, bool) {
	s, ok := scalarString(p, path, n)
	if !ok {
		return 0, false
	}
	d, err := ParseDuration(s)
	if err != nil {
		p.at(n, path, "%v", err)
		return 0, false
	}
	return d, true
}

// list calls f for each item of the list under key.
func (m *mapping) list(key string, f func(path string, item *yaml.Node)) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	return eachItem(m.p, m.sub(key), n, f)
}

func eachItem(p *problems, path string, n *yaml.Node, f func(path string, item *yaml.Node)) bool {
	r := resolve(n)
	if isNull(r) {
		return true // "key:" with nothing: an empty list
	}
	if r.Kind != yaml.SequenceNode {
		p.at(n, path, "must be a list, not %s", kindName(r))
		return false
	}
	for i, item := range r.Content {
		f(fmt.Sprintf("%s[%d]", path, i), item)
	}
	return true
}

// stringList reads a list of single values; a single value alone is a list
// of one.
func (m *mapping) stringList(key string, dst *[]string) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	if r := resolve(n); r.Kind == yaml.ScalarNode && !isNull(r) {
		*dst = []string{r.Value}
		return true
	}
	ok := true
	out := []string{}
	eachItem(m.p, m.sub(key), n, func(path string, item *yaml.Node) {
		s, good := scalarString(m.p, path, item)
		ok = ok && good
		out = append(out, s)
	})
	*dst = out
	return ok
}

// stringMap reads a mapping of words to single values.
func (m *mapping) stringMap(key string, dst *map[string]string) bool {
	n := m.get(key)
	if n == nil || isNull(n) {
		return true
	}
	sub := newMapping(m.p, m.sub(key), n)
	if sub == nil {
		return false
	}
	ok := true
	out := make(map[string]string, len(sub.keys))
	for _, k := range sub.keys {
		s, good := scalarString(m.p, sub.sub(k.Value), sub.get(k.Value))
		ok = ok && good
		out[k.Value] = s
	}
	*dst = out
	return ok
}

// regex reads a regular expression (RE2 syntax).
func (m *mapping) regex(key string, dst **regexp.Regexp) bool {
	n := m.get(key)
	if n == nil {
		return true
	}
	s, ok := scalarString(m.p, m.sub(key), n)
	if !ok {
		return false
	}
	re, err := regexp.Compile(s)
	if err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "error parsing regexp: ")
		m.p.at(n, m.sub(key), "bad regular expression: %s", msg)
		return false
	}
	*dst = re
	return true
}

// joinPath is the path of key under path.
func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
