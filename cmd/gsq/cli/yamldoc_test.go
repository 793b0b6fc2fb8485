package cli

import (
	"strings"
	"testing"
)

// A config file's errors name the line of the fault, also where yaml.v3
// names the line its enclosing block starts on, and a repeated key is an
// error.
func TestParseYAMLDocLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"key indented wrongly", "servers:\n  cs:\n    address: 127.0.0.1\n   password: abc\n", "line 4: did not find expected key"},
		{"flow sequence left open", "servers:\n  cs:\n    address: 127.0.0.1\n    password: [a\n", "line 4: did not find expected ',' or ']'"},
		{"quote left open", "servers:\n  cs:\n    address: 127.0.0.1\n    password: \"abc\n", "line 4: found unexpected end of stream"},
		{"tab for indentation", "servers:\n  cs:\n\taddress: 127.0.0.1\n", "line 3: found character that cannot start any token"},
		{"tab, lines after", "servers:\n  cs:\n\taddress: 127.0.0.1\n  b:\n    address: x\n", "line 3: found character that cannot start any token"},
		// A flow sequence over two lines is valid: the fault after it is
		// still placed on its own line, not where the sequence was cut.
		{"fault after a multi-line flow", "a: [1,\n  2]\nb:\n  c: 1\n d: 2\n", "line 5: did not find expected key"},
		{"repeated server", "servers:\n  cs:\n    address: a\n  cs:\n    address: b\n", `line 4: key "cs" given twice (first on line 2)`},
		{"repeated setting", "servers:\n  cs:\n    address: a\n    address: b\n", `line 4: key "address" given twice (first on line 3)`},
	} {
		_, err := parseYAMLDoc([]byte(tc.doc))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	for _, ok := range []string{"", "servers:\n  a:\n    address: x\n  b:\n    address: x\n", "a: [1,\n  2]\n"} {
		if _, err := parseYAMLDoc([]byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	// The search for the line is bounded: a long file still gets an answer.
	long := strings.Repeat("k: v\n", 3*maxYAMLLineSearch) + "x: [\n"
	if _, err := parseYAMLDoc([]byte(long)); err == nil || !strings.HasPrefix(err.Error(), "line ") {
		t.Errorf("long file: %v", err)
	}
}
