package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"
)

// reference is what encoding/json writes for v.
func reference(t testing.TB, v any, escapeHTML bool) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

var oddStrings = []string{
	"", "plain", "sv_fleet_var_00 is sixteen+", "01234567\x7f89abcdef\x80", "0123456\"", "0123456\\", `quote " and \ backslash`, "<html> & ü", "tab\tnew\nline\rret\bbs\fff",
	"\x00\x01\x1f\x7f", "bad\xff\xfe utf8", "line\u2028sep\u2029", "\xe2\x80", "é\xe9", "😀 emoji", "\xf0\x9f\x98",
}

func check(t *testing.T, s string) {
	for _, html := range []bool{false, true} {
		if got, want := string(AppendString(nil, s, html)), reference(t, s, html); got != want {
			t.Errorf("AppendString(%q, %v) = %s, want %s", s, html, got, want)
		}
		if got, want := string(AppendBytes([]byte("x"), []byte(s), html)), "x"+reference(t, s, html); got != want {
			t.Errorf("AppendBytes(%q, %v) = %s, want %s", s, html, got, want)
		}
	}
	if Plain(s) && string(AppendString(nil, s, false)) != `"`+s+`"` {
		t.Errorf("Plain(%q) although the string needs escaping", s)
	}
	if Plain(s) != plainByByte(s) {
		t.Errorf("Plain(%q) = %v, byte by byte %v", s, Plain(s), !Plain(s))
	}
}

// plainByByte is Plain one byte at a time, from the table.
func plainByByte(s string) bool {
	for i := range len(s) {
		if c := s[i]; c >= utf8.RuneSelf || !plainText[c] {
			return false
		}
	}
	return true
}

// Every byte value, in every one of the 8 places of a word, and next to
// plain bytes that a borrow from it could corrupt.
func TestPlainEveryByte(t *testing.T) {
	t.Parallel()
	for c := range 256 {
		for pos := range 9 {
			b := []byte("abcdefgh!")
			b[pos] = byte(c)
			for _, s := range []string{string(b), string(b[:8]), "\x1f" + string(b), string(b) + "~~~~~~~~"} {
				if Plain(s) != plainByByte(s) {
					t.Fatalf("Plain(%q) = %v", s, Plain(s))
				}
			}
		}
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range oddStrings {
		check(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(check)
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1, -1, 0.5, 123.456, 1e-6, 9.99e-7, 1e-9, -1e-9, 1e20, 1e21, 1.5e300, math.SmallestNonzeroFloat64, 12.345678901234} {
		if got, want := string(AppendFloat(nil, f)), reference(t, f, false); got != want {
			t.Errorf("AppendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}
