package serverlist

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// Filters read, and write back as the lists take them.
func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, out string
		terms   int
	}{
		{"", "", 0},
		{`\`, "", 0},
		{"\\appid\\730\\empty\\1\x00", `\appid\730\empty\1`, 2}, // the field notes' UDP vector, NUL trimmed
		{`\appid\730\empty\1\`, `\appid\730\empty\1`, 2},        // a trailing backslash
		{`\AppID\252490\Dedicated\1`, `\appid\252490\dedicated\1`, 2},
		{`\map\\appid\10`, `\map\\appid\10`, 2}, // an empty value
		{`\nor\2\map\de_dust2\map\de_nuke\secure\1`, `\nor\2\map\de_dust2\map\de_nuke\secure\1`, 2},
		{`\nand\2\nor\1\secure\1\empty\1`, `\nand\2\nor\1\secure\1\empty\1`, 1},
		{`\nor\0\appid\1`, `\nor\0\appid\1`, 2},
		{`\name_match\*[EU]*\gametype\cp,mp`, `\name_match\*[EU]*\gametype\cp,mp`, 2},
	} {
		f, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := f.String(); got != tc.out || len(f.Terms) != tc.terms {
			t.Errorf("Parse(%q) = %q with %d terms, want %q with %d", tc.in, got, len(f.Terms), tc.out, tc.terms)
		}
	}
}

// Bad filters fail with a *ParseError that says where and why.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		offset int
		err    error
	}{
		{"appid\\730", 0, ErrSyntax},
		{`\appid`, 1, ErrSyntax},
		{`\appid\730\map`, 11, ErrSyntax},
		{`\nor\2\map\x`, 1, ErrShortGroup},
		{`\nor\x\map\x`, 5, ErrShortGroup},
		{`\nor\-1\map\x`, 5, ErrShortGroup},
		{"\\map\\a\x00b", 6, ErrNUL},
		{`\` + strings.Repeat("a", MaxFilterLen), MaxFilterLen, ErrTooLarge},
		{strings.Repeat(`\nor\1`, MaxDepth+2) + `\map\x`, 6*(MaxDepth+1) + 1, ErrTooLarge},
		{strings.Repeat(`\map\x`, MaxTerms+1), 6*MaxTerms + 1, ErrTooLarge},
	} {
		_, err := Parse(tc.in)
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, tc.err) {
			t.Errorf("Parse(%.40q) = %v, want a *ParseError matching %v", tc.in, err, tc.err)
			continue
		}
		if pe.Offset != tc.offset {
			t.Errorf("Parse(%.40q): offset %d, want %d (%v)", tc.in, pe.Offset, tc.offset, err)
		}
		if !strings.HasPrefix(err.Error(), "serverlist: parse filter at offset ") || strings.Count(err.Error(), "serverlist: ") != 1 {
			t.Errorf("message %q", err)
		}
	}
}

// Check rejects unknown keys and values their key cannot take, naming
// the offset; Parse alone lets them through.
func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in     string
		offset int
		err    error
	}{
		{`\appid\730\dedicated\1\gameaddr\1.2.3.4:27015\type\d\collapse_addr_hash\1`, 0, nil},
		{`\appid\730\mapp\x`, 11, ErrUnknownKey},
		{`\appid\x`, 1, ErrBadValue},
		{`\dedicated\yes`, 1, ErrBadValue},
		{`\nor\1\secure\2`, 7, ErrBadValue},
		{`\gameaddr\example.com`, 1, ErrBadValue},
		{`\type\x`, 1, ErrBadValue},
	} {
		f, err := Parse(tc.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tc.in, err)
		}
		err = f.Check()
		var pe *ParseError
		switch {
		case tc.err == nil && err != nil:
			t.Errorf("Check(%q) = %v", tc.in, err)
		case tc.err != nil && (!errors.Is(err, tc.err) || !errors.As(err, &pe) || pe.Offset != tc.offset):
			t.Errorf("Check(%q) = %v, want %v at offset %d", tc.in, err, tc.err, tc.offset)
		}
	}
	if err := (Filter{Terms: []Term{Cond("Bogus", "1")}}).Check(); !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "appid") {
		t.Errorf("a built term with an unknown key: %v, want ErrUnknownKey listing the known keys", err)
	}
}

// Filters built in code write what Parse reads back.
func TestBuild(t *testing.T) {
	t.Parallel()
	base, _ := Parse(`\appid\252490`)
	f := base.And(Cond("Secure", "1"), Nor(Cond("map", "a"), Nand(Cond("empty", "1"), Cond("full", "1"))))
	const want = `\appid\252490\secure\1\nor\2\map\a\nand\2\empty\1\full\1`
	if got := f.String(); got != want {
		t.Fatalf("built %q, want %q", got, want)
	}
	if len(base.Terms) != 1 {
		t.Error("And changed its receiver")
	}
	back, err := Parse(want)
	if err != nil || back.String() != want {
		t.Fatalf("Parse(%q) = %q, %v", want, back.String(), err)
	}
	if k := Keys(); !slices.IsSorted(k) || !slices.Contains(k, "name_match") || !slices.Contains(k, KeyNor) {
		t.Errorf("Keys() = %v", k)
	}
}

func TestForApp(t *testing.T) {
	t.Parallel()
	f, _ := Parse(`\dedicated\1\nor\1\appid\730`)
	got, ok := f.ForApp(892970)
	if !ok || got.String() != `\appid\892970\dedicated\1\nor\1\appid\730` {
		t.Errorf("ForApp = %q, %v", got.String(), ok)
	}
	if f.String() != `\dedicated\1\nor\1\appid\730` {
		t.Error("ForApp changed its receiver")
	}
	own, _ := Parse(`\map\x\appid\10`)
	if got, ok := own.ForApp(20); ok || got.String() != own.String() {
		t.Errorf("a filter with an app id of its own: %q, %v", got.String(), ok)
	}
	if got, ok := (Filter{}).ForApp(1); !ok || got.String() != `\appid\1` {
		t.Errorf("the empty filter: %q, %v", got.String(), ok)
	}
}
