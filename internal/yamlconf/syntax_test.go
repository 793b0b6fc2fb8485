package yamlconf

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A syntax error names the line of the fault, also where yaml.v3 names the
// line its enclosing block starts on.
func TestSyntaxErrorLine(t *testing.T) {
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
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.doc), &n)
		if err == nil {
			t.Fatalf("%s: parsed", tc.name)
		}
		if got := SyntaxMessage([]byte(tc.doc), err); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The search for the line is bounded: a long file still gets an answer.
	long := []byte(strings.Repeat("k: v\n", 3*maxLineSearch) + "x: [\n")
	var n yaml.Node
	err := yaml.Unmarshal(long, &n)
	if err == nil {
		t.Fatal("long file parsed")
	}
	if got := SyntaxMessage(long, err); !strings.HasPrefix(got, "line ") {
		t.Errorf("long file: %q", got)
	}
}
