package rcon

import (
	"strings"
	"unicode/utf8"
)

// DecodeText turns a response body into text. Valid UTF-8 is returned
// as is; every byte that is not part of a valid UTF-8 sequence is read as
// Latin-1 (ISO 8859-1), so the raw 0xA7 (§) old CraftBukkit sends
// becomes U+00A7 (minecraft-rcon.txt, "Note on ASCII text"). Nothing else
// is changed: colour codes, NULs and trailing newlines stay.
func DecodeText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			r = rune(b[0])
		}
		sb.WriteRune(r)
		b = b[size:]
	}
	return sb.String()
}
