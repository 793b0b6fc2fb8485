package serverlist

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzParse checks that any text parses or fails with a *ParseError, and
// that a filter that parses writes a text that parses to the same filter
// (a round trip), which matches the same servers.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"\\appid\\730\\empty\\1\x00",
		`\appid\252490\dedicated\1\map\Procedural Map`,
		`\nor\2\map\de_dust2\map\de_nuke\secure\1`,
		`\nand\2\nor\1\secure\1\empty\1`,
		`\name_match\*EU*\version_match\1.*\gametype\cp,mp`,
		`\gameaddr\1.2.3.4:27015\collapse_addr_hash\1`,
		`\nor\3\map\a`,
		`\`,
		"",
	} {
		f.Add(s)
	}
	servers := []Server{rustServer(), {}, {Players: 1, MaxPlayers: 1, Secure: true, Map: "a"}}
	f.Fuzz(func(t *testing.T, s string) {
		flt, err := Parse(s)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("Parse(%q): %T %v, not a *ParseError", s, err, err)
			}
			return
		}
		_ = flt.Check()
		out := flt.String()
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(%q) read, but its String %q does not: %v", s, out, err)
		}
		if back.String() != out {
			t.Fatalf("round trip %q -> %q -> %q", s, out, back.String())
		}
		for i := range servers {
			if flt.Match(&servers[i]) != back.Match(&servers[i]) {
				t.Fatalf("%q and its round trip %q disagree on server %d", s, out, i)
			}
		}
	})
}

// FuzzWildcard checks Wildcard against a regular expression built from
// the pattern, on ASCII text (Wildcard folds ASCII case only).
func FuzzWildcard(f *testing.F) {
	f.Add("a*c", "abbbc")
	f.Add("*EU*", "[eu] server")
	f.Add("a*a*a", "aa")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if len(pattern) > 64 || len(s) > 256 || !ascii(pattern) || !ascii(s) {
			return
		}
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re := regexp.MustCompile(`(?is)^` + strings.Join(parts, ".*") + `$`)
		if got, want := Wildcard(pattern, s), re.MatchString(s); got != want {
			t.Fatalf("Wildcard(%q, %q) = %v, the regexp says %v", pattern, s, got, want)
		}
	})
}

func ascii(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
