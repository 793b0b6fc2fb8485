package ogp

import (
	"unicode/utf8"
)

// Text is a SzString exactly as it was sent, without the NUL. v0.91 does
// not name an encoding; the V1 dialect uses UTF-8 when the header's bUTF8
// flag is set and Latin-1 otherwise. Use [Text.UTF8] for display and
// [Text.String] to keep every byte.
type Text []byte

// String returns the raw bytes as a Go string, losslessly.
func (t Text) String() string { return string(t) }

// IsUTF8 reports whether t is valid UTF-8.
func (t Text) IsUTF8() bool { return utf8.Valid(t) }

// UTF8 decodes t for display: as UTF-8 when it is valid UTF-8, otherwise
// as Latin-1 (ISO-8859-1, one byte per rune), which is what the V1 dialect
// sends without bUTF8 and what most pre-UTF-8 servers sent (notes 1.6.12).
func (t Text) UTF8() string {
	if utf8.Valid(t) {
		return string(t)
	}
	out := make([]byte, 0, len(t)*2)
	for _, c := range t {
		out = utf8.AppendRune(out, rune(c))
	}
	return string(out)
}

// RuneCount is the length of t in characters, as [Text.UTF8] decodes it.
// Colour positions (DeltaPosition) count these characters.
func (t Text) RuneCount() int {
	if utf8.Valid(t) {
		return utf8.RuneCount(t)
	}
	return len(t)
}

// latin1 transcodes UTF-8 text to Latin-1, writing '?' for code points
// above U+00FF, as the SDK does for a client that did not ask for UTF-8.
// Text that is not valid UTF-8 is returned unchanged.
func latin1(t []byte) []byte {
	if !utf8.Valid(t) {
		return t
	}
	ascii := true
	for _, c := range t {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return t
	}
	out := make([]byte, 0, len(t))
	for _, r := range string(t) {
		if r > 0xFF {
			r = '?'
		}
		out = append(out, byte(r))
	}
	return out
}
