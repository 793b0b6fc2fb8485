package rcon

import (
	"testing"
	"unicode/utf8"
)

func TestDecodeText(t *testing.T) {
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

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"", 0}, {"abc", 3}, {"é玩", 2}, {"🎮", 2}, {"\xa7c", 2}, {"a?b", 3},
	}
	for _, tt := range tests {
		if got := UTF16Len([]byte(tt.in)); got != tt.want {
			t.Errorf("UTF16Len(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestMinecraftFragmentsTerminator(t *testing.T) {
	var m MinecraftFragments
	if m.Start() != StepContinue {
		t.Fatal("Minecraft must not probe with the command")
	}
	full := make([]byte, 4096)
	for i := range full {
		full[i] = 'a'
	}
	if m.Packet(0, full) != StepProbe || m.Packet(0, full[:4095]) != StepDone {
		t.Fatal("4096-unit fragment must probe, shorter must end")
	}
	// 4095 two-byte runes: 8190 bytes but fewer than 4096 units.
	var short []byte
	for range 4095 {
		short = append(short, "é"...)
	}
	if m.Packet(0, short) != StepDone {
		t.Fatal("byte length used instead of UTF-16 units")
	}
}

func TestStepString(t *testing.T) {
	for s, want := range map[Step]string{StepContinue: "continue", StepDone: "done", StepProbe: "probe", 7: "Step(7)"} {
		if s.String() != want {
			t.Errorf("%d: %q", int(s), s.String())
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
		if utf8.RuneCountInString(s) != UTF16Len(b)-surrogates(s) {
			t.Fatalf("rune count %d vs UTF16Len %d", utf8.RuneCountInString(s), UTF16Len(b))
		}
	})
}

func surrogates(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
