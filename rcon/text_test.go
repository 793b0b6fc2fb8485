package rcon

import (
	"testing"
	"unicode/utf8"
)

func TestDecodeText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"Жёлтый 玩家 🎮", "Жёлтый 玩家 🎮"},
		{"§aUTF-8 section", "§aUTF-8 section"},
		{"\xa7cLatin-1 section", "§cLatin-1 section"},
		{"mixed \xa7c and Ж", "mixed §c and Ж"},
		{"caf\xe9", "café"},
		{"keeps \x00 NUL and newline\n", "keeps \x00 NUL and newline\n"},
		{"real U+FFFD \uFFFD stays", "real U+FFFD \uFFFD stays"},
		{"cut rune \xe7\x8e", "cut rune \u00e7\u008e"},
	}
	for _, tt := range tests {
		if got := DecodeText([]byte(tt.in)); got != tt.want {
			t.Errorf("DecodeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if !utf8.ValidString(DecodeText([]byte(tt.in))) {
			t.Errorf("DecodeText(%q) is not valid UTF-8", tt.in)
		}
	}
}

func FuzzDecodeText(f *testing.F) {
	for _, s := range []string{"", "plain", "\xa7c", "Ж\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := DecodeText(b)
		if !utf8.ValidString(s) {
			t.Fatalf("DecodeText(%q) = %q invalid", b, s)
		}
		if utf8.Valid(b) && s != string(b) {
			t.Fatalf("valid UTF-8 changed: %q -> %q", b, s)
		}
	})
}
