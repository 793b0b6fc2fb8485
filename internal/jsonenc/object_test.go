package jsonenc

import (
	"math"
	"testing"
)

// TestObjectMatchesEncodingJSON builds one object of every member kind,
// with the odd strings as values and keys, in both escapings, and holds
// it to what encoding/json writes for the same struct.
func TestObjectMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	type item struct {
		S string `json:"s"`
	}
	type whole struct {
		Str   string   `json:"str"`
		Int   int64    `json:"int"`
		Uint  uint64   `json:"uint"`
		Bool  bool     `json:"bool"`
		Null  *int     `json:"null"`
		Float float64  `json:"float"`
		Text  string   `json:"text"`
		List  []item   `json:"list"`
		Strs  []string `json:"strs"`
	}
	for _, s := range oddStrings {
		for _, html := range []bool{false, true} {
			o := Begin([]byte("x"), html)
			o.Str("str", s)
			o.Int("int", -42)
			o.Uint("uint", math.MaxUint64)
			o.Bool("bool", true)
			o.Null("null")
			o.Float("float", 1.5e-7)
			o.Float("nan", math.NaN()) // left out
			o.Text("text", []byte("<ok> & fine"))
			o.List("list", 2, func(e *Object, i int) { e.Str("s", s) })
			o.Strings("strs", []string{s, "b"})
			got := string(o.End())
			want := "x" + reference(t, whole{Str: s, Int: -42, Uint: math.MaxUint64, Bool: true, Float: 1.5e-7,
				Text: "<ok> & fine", List: []item{{s}, {s}}, Strs: []string{s, "b"}}, html)
			if got != want {
				t.Errorf("html %v, %q:\ngot  %s\nwant %s", html, s, got, want)
			}
			k := Begin(nil, html)
			k.AnyKey(s)
			k.B = append(k.B, '1')
			if got, want := string(k.End()), reference(t, map[string]int{s: 1}, html); got != want {
				t.Errorf("AnyKey(%q), html %v: got %s, want %s", s, html, got, want)
			}
		}
	}
}

// TestTextTwinAndEscaping: text that is not UTF-8 gets its base64 twin,
// and HTML characters in plain ASCII text are escaped only when asked.
func TestTextTwinAndEscaping(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw  string
		html bool
		want string
	}{
		{"plain", false, `{"k":"plain"}`},
		{"a<b", false, `{"k":"a<b"}`},
		{"a<b", true, `{"k":"a\u003cb"}`},
		{"Zoë", true, `{"k":"Zoë"}`},
		{"d\xe9j\xe0 <", false, `{"k":"déjà <","k_b64":"ZOlq4CA8"}`},
		{"d\xe9j\xe0 <", true, `{"k":"déjà \u003c","k_b64":"ZOlq4CA8"}`},
	} {
		o := Begin(nil, tc.html)
		o.Text("k", []byte(tc.raw))
		if got := string(o.End()); got != tc.want {
			t.Errorf("Text(%q), html %v = %s, want %s", tc.raw, tc.html, got, tc.want)
		}
	}
}
