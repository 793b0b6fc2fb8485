package result

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"unicode/utf8"
)

// reference encodes v as encoding/json does with HTML escaping off, the
// oracle of the encoder.
func reference(t testing.TB, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

var oddStrings = []string{
	"", "plain", `quote " and \ backslash`, "<html> & ü", "tab\tnew\nline\rret\bbs\fff",
	"\x00\x01\x1f\x7f", "bad\xff\xfe utf8", "line\u2028sep\u2029", "\xe2\x80", "é\xe9", "😀 emoji", "\xf0\x9f\x98",
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range oddStrings {
		if got, want := string(appendString(nil, s)), reference(t, s); got != want {
			t.Errorf("appendString(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), reference(t, s); got != want {
			t.Fatalf("appendString(%q) = %s, want %s", s, got, want)
		}
	})
}

func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0, 1, -1, 0.5, 123.456, 1e-6, 9.99e-7, 1e-9, -1e-9, 1e20, 1e21, 1.5e300, math.SmallestNonzeroFloat64, 12.345678901234} {
		if got, want := string(appendFloat(nil, f)), reference(t, f); got != want {
			t.Errorf("appendFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

// TestTextTwin checks the base64 twin of a string that is not UTF-8, and
// its absence otherwise.
func TestTextTwin(t *testing.T) {
	t.Parallel()
	o := beginObject(nil)
	o.text("ok", []byte("plain"))
	o.text("utf8", []byte("Zoë"))
	o.text("name", []byte{'d', 0xe9, 'j', 0xe0})
	got := string(o.end())
	want := `{"ok":"plain","utf8":"Zoë","name":"déjà","name_b64":"ZOlq4A=="}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if !utf8.ValidString(got) {
		t.Fatal("output is not UTF-8")
	}
}

func TestSummaryJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	name, players, password := "n\xff\"", 0, false
	for _, s := range []Summary{{}, {Name: &name}, {Players: &players, Password: &password}, fullSummary()} {
		if got, want := string(s.appendJSON(nil)), reference(t, s); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

func fullSummary() Summary {
	s, n, b := "x", 3, true
	return Summary{Name: &s, Map: &s, Game: &s, Players: &n, MaxPlayers: &n, Bots: &n, Password: &b, Version: &s, Connect: &s}
}

func TestErrorJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	e := &Error{Kind: KindTimeout, Message: `a2s: info "x": no answer`}
	if got, want := string(e.appendJSON(nil)), reference(t, e); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
