// Package textenc turns the raw bytes of a game server's strings into text
// for display, one rule for every protocol package, so that a server name
// prints the same whether it came over A2S, OGP or RCON.
//
// Game servers send UTF-8, except old ones (GoldSource, OGP's V1 dialect
// without its UTF-8 flag, CraftBukkit's colour sign in Minecraft RCON),
// which send Latin-1. Decode keeps every valid UTF-8 sequence and reads every
// other byte as Latin-1 (ISO 8859-1, the byte is the code point), so
// nothing is lost or replaced. It uses the standard library only.
package textenc

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Decode returns b as text: valid UTF-8 as is, and each byte that is not
// part of a valid UTF-8 sequence as the Latin-1 character of that value.
func Decode(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+len(b)/4)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			r = rune(b[0])
		}
		out = utf8.AppendRune(out, r)
		b = b[size:]
	}
	return string(out)
}

// RuneCount is the number of characters Decode(b) has.
func RuneCount(b []byte) int {
	n := 0
	for len(b) > 0 {
		_, size := utf8.DecodeRune(b)
		b = b[size:]
		n++
	}
	return n
}

// ReplaceControls returns s with every control character (C0, DEL and
// C1: escape sequences, line breaks, tabs) replaced by with: the one rule
// by which a game server's text is made safe where a control character
// would act rather than show (a terminal, a CSV cell, a metrics label).
func ReplaceControls(s string, with rune) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return with
		}
		return r
	}, s)
}
