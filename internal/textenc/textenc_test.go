package textenc

import (
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want string
	}{
		{"plain", "plain"},
		{"caf\xc3\xa9", "café"},              // UTF-8 stays
		{"caf\xe9", "café"},                  // Latin-1 é
		{"\xa7cRed \xe2\x98\x85", "§cRed ★"}, // mixed: Latin-1 byte, then UTF-8
		{"\xff\xfe", "ÿþ"},
		{"", ""},
	}
	for _, tt := range tests {
		got := Decode([]byte(tt.in))
		if got != tt.want {
			t.Errorf("Decode(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Decode(%q) is not valid UTF-8", tt.in)
		}
		if n := RuneCount([]byte(tt.in)); n != utf8.RuneCountInString(got) {
			t.Errorf("RuneCount(%q) = %d, want %d", tt.in, n, utf8.RuneCountInString(got))
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte("caf\xe9"))
	f.Add([]byte("\xe2\x98"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s := Decode(b)
		if !utf8.ValidString(s) {
			t.Fatalf("Decode(%q) is not valid UTF-8", b)
		}
		if utf8.Valid(b) && s != string(b) {
			t.Fatalf("Decode changed valid UTF-8 %q", b)
		}
		if RuneCount(b) != utf8.RuneCountInString(s) {
			t.Fatalf("RuneCount(%q) = %d, Decode has %d", b, RuneCount(b), utf8.RuneCountInString(s))
		}
	})
}

func TestReplaceControls(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":                      "plain",
		"a\x00b\tc\nd\re\x1b[31mf":   "a?b?c?d?e?[31mf",
		"del\x7f c1\u0085\u009b end": "del? c1?? end",
		"ünïcödé ✓":                  "ünïcödé ✓",
		"":                           "",
	} {
		if got := ReplaceControls(in, '?'); got != want {
			t.Errorf("ReplaceControls(%q) = %q, want %q", in, got, want)
		}
	}
}
