// Package mctext renders and strips the § formatting codes Minecraft
// servers and plugins put in RCON output (wiki.vg's "RCON" page notes
// them; Bukkit, Spigot and Paper plugins still emit them). It uses the
// standard library only.
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

// colours maps the 16 colour codes to ANSI SGR parameters, each
// resetting the styles first as Minecraft does. Minecraft's dark gray (8)
// and aqua (b) are the bright black and bright cyan of the 16-colour
// palette.
var colours = map[byte]string{
	'0': "0;30", '1': "0;34", '2': "0;32", '3': "0;36", '4': "0;31", '5': "0;35", '6': "0;33", '7': "0;37",
	'8': "0;90", '9': "0;94", 'a': "0;92", 'b': "0;96", 'c': "0;91", 'd': "0;95", 'e': "0;93", 'f': "0;97",
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
		return v, 1
	}
	if v, ok := styles[c]; ok {
		return v, 1
	}
	return "", 0
}

// parseHex decodes the six §h pairs of a hex colour.
func parseHex(s string) (string, int) {
	var rgb uint32
	n := 0
	for range 6 {
		r, size := utf8.DecodeRuneInString(s[n:])
		if r != section || len(s) <= n+size {
			return "", 0
		}
		h := lower(s[n+size])
		switch {
		case '0' <= h && h <= '9':
			rgb = rgb<<4 | uint32(h-'0')
		case 'a' <= h && h <= 'f':
			rgb = rgb<<4 | uint32(h-'a'+10)
		default:
			return "", 0
		}
		n += size + 1
	}
	b := make([]byte, 0, len("0;38;2;255;255;255"))
	b = append(b, "0;38;2;"...)
	b = strconv.AppendUint(b, uint64(rgb>>16), 10)
	b = append(b, ';')
	b = strconv.AppendUint(b, uint64(rgb>>8&0xff), 10)
	b = append(b, ';')
	b = strconv.AppendUint(b, uint64(rgb&0xff), 10)
	return string(b), n
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
