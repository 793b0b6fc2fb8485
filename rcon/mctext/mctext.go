// Package mctext renders and strips the § formatting codes Minecraft
// servers and plugins put in RCON output (minecraft-rcon.txt, "Note on
// ASCII text"; rcon-field-notes.md §1.2 and §8). It uses the standard
// library only.
//
// A code is § (U+00A7) followed by one character: 0-9 and a-f select a
// colour, k-o a style (obfuscated, bold, strikethrough, underline,
// italic) and r resets; upper case works too. The hex form §x§R§R§G§G§B§B
// selects a 24-bit colour. As in Minecraft, a colour also clears the
// styles. A § followed by anything else is kept as text.
package mctext

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

const section = '§'

// colours maps the 16 colour codes to ANSI SGR parameters. Minecraft's
// dark gray (8) and aqua (b) are the bright black and bright cyan of the
// 16-colour palette.
var colours = map[byte]string{
	'0': "30", '1': "34", '2': "32", '3': "36", '4': "31", '5': "35", '6': "33", '7': "37",
	'8': "90", '9': "94", 'a': "92", 'b': "96", 'c': "91", 'd': "95", 'e': "93", 'f': "97",
}

// styles maps the style codes to ANSI SGR parameters (k, obfuscated,
// has no terminal equivalent and is shown as blink).
var styles = map[byte]string{
	'k': "5", 'l': "1", 'm': "9", 'n': "4", 'o': "3", 'r': "0",
}

// ToANSI replaces the § codes in s with ANSI escape sequences (SGR),
// using 24-bit colour for the hex form, and resets the terminal at the
// end if any code was used.
func ToANSI(s string) string {
	var sb strings.Builder
	sb.Grow(len(s) + len(s)/4)
	used := scan(s, func(text string) { sb.WriteString(text) }, func(sgr string) {
		sb.WriteString("\x1b[")
		sb.WriteString(sgr)
		sb.WriteByte('m')
	})
	if used {
		sb.WriteString("\x1b[0m")
	}
	return sb.String()
}

// Strip removes the § codes from s.
func Strip(s string) string {
	if !strings.ContainsRune(s, section) {
		return s
	}
	var sb strings.Builder
	sb.Grow(len(s))
	scan(s, func(text string) { sb.WriteString(text) }, func(string) {})
	return sb.String()
}

// scan walks s, passing plain text to text and the SGR parameters of
// each code to code. It reports whether any code was found.
func scan(s string, text, code func(string)) bool {
	used := false
	for {
		i := strings.IndexRune(s, section)
		if i < 0 {
			text(s)
			return used
		}
		text(s[:i])
		rest := s[i+len("§"):]
		sgr, n := parseCode(rest)
		if n == 0 {
			text("§")
			s = rest
			continue
		}
		code(sgr)
		used = true
		s = rest[n:]
	}
}

// parseCode decodes the code after a §, returning its SGR parameters
// and the number of bytes it spans (0 if it is not a code).
func parseCode(s string) (string, int) {
	if s == "" {
		return "", 0
	}
	c := lower(s[0])
	if c == 'x' {
		if rgb, n := parseHex(s[1:]); n > 0 {
			return rgb, 1 + n
		}
		return "", 0
	}
	if v, ok := colours[c]; ok {
		return "0;" + v, 1
	}
	if v, ok := styles[c]; ok {
		return v, 1
	}
	return "", 0
}

// parseHex decodes the six §h pairs of a hex colour.
func parseHex(s string) (string, int) {
	var digits [6]byte
	n := 0
	for i := range digits {
		r, size := utf8.DecodeRuneInString(s[n:])
		if r != section || len(s) <= n+size {
			return "", 0
		}
		h := lower(s[n+size])
		if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f') {
			return "", 0
		}
		digits[i] = h
		n += size + 1
	}
	v, _ := strconv.ParseUint(string(digits[:]), 16, 32)
	return "0;38;2;" + strconv.Itoa(int(v>>16)) + ";" + strconv.Itoa(int(v>>8&0xff)) + ";" + strconv.Itoa(int(v&0xff)), n
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
