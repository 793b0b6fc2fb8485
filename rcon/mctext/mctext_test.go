package mctext

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToANSI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"§aGreen", "\x1b[0;92mGreen\x1b[0m"},
		{"§AGreen", "\x1b[0;92mGreen\x1b[0m"},
		{"§8dark gray §baqua", "\x1b[0;90mdark gray \x1b[0;96maqua\x1b[0m"},
		{"§0§1§2§3§4§5§6§7§9§c§d§e§f", "\x1b[0;30m\x1b[0;34m\x1b[0;32m\x1b[0;36m\x1b[0;31m\x1b[0;35m\x1b[0;33m\x1b[0;37m\x1b[0;94m\x1b[0;91m\x1b[0;95m\x1b[0;93m\x1b[0;97m\x1b[0m"},
		{"§lbold§r §nu§mst§oit§kob", "\x1b[1mbold\x1b[0m \x1b[4mu\x1b[9mst\x1b[3mit\x1b[5mob\x1b[0m"},
		{"§x§F§F§8§0§0§0orange", "\x1b[0;38;2;255;128;0morange\x1b[0m"},
		{"§x§f§f§8§0§0short hex", "§x\x1b[0;97m\x1b[0;97m\x1b[0;90m\x1b[0;30m\x1b[0;30mshort hex\x1b[0m"},
		{"§x§g§0bad digit", "§x§g\x1b[0;30mbad digit\x1b[0m"},
		{"§zunknown", "§zunknown"},
		{"trailing §", "trailing §"},
		{"§§a", "§\x1b[0;92m\x1b[0m"},
		{"Жёлтый §c玩家", "Жёлтый \x1b[0;91m玩家\x1b[0m"},
	}
	for _, tt := range tests {
		if got := ToANSI(tt.in); got != tt.want {
			t.Errorf("ToANSI(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestStrip(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"§aGreen §lbold§r", "Green bold"},
		{"§x§F§F§8§0§0§0orange", "orange"},
		{"§zunknown §", "§zunknown §"},
		{"§6Gold §AGREEN 玩家", "Gold GREEN 玩家"},
	}
	for _, tt := range tests {
		if got := Strip(tt.in); got != tt.want {
			t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

func fuzzSeeds(f *testing.F) {
	for _, s := range []string{"", "plain", "§aGreen", "§x§F§F§8§0§0§0x", "§x§f§", "§§a", "§", "\xa7c", "玩§k家", "§r§R§l"} {
		f.Add(s)
	}
}

// FuzzToANSI: removing the escape sequences from ToANSI's output gives
// Strip's output, and valid UTF-8 stays valid.
func FuzzToANSI(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		out := ToANSI(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("ToANSI(%q) = %q is not valid UTF-8", s, out)
		}
		if strings.Contains(s, "\x1b") {
			return
		}
		if got, want := sgr.ReplaceAllString(out, ""), Strip(s); got != want {
			t.Fatalf("ToANSI(%q) without escapes = %q, Strip = %q", s, got, want)
		}
	})
}

// FuzzStrip: Strip never grows the text, never invents a code, and is the
// identity on text without §.
func FuzzStrip(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, s string) {
		out := Strip(s)
		if len(out) > len(s) {
			t.Fatalf("Strip(%q) = %q grew", s, out)
		}
		if !strings.ContainsRune(s, '§') && out != s {
			t.Fatalf("Strip(%q) = %q changed text without §", s, out)
		}
		if strings.Count(out, "§") > strings.Count(s, "§") {
			t.Fatalf("Strip(%q) = %q added §", s, out)
		}
	})
}

func BenchmarkToANSI(b *testing.B) {
	b.ReportAllocs()
	s := strings.Repeat("§6[Server] §aPlayer§r joined the game §x§F§F§8§0§0§0!\n", 50)
	for b.Loop() {
		ToANSI(s)
	}
}
