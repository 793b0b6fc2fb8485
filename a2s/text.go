package a2s

import (
	"unicode/utf8"
)

// Text is a string exactly as the server sent it: raw bytes that are usually,
// but not always, UTF-8. Arma 3 and DayZ send binary rule values, some
// servers prefix names with 0x01 bytes, and legacy servers use other
// encodings, so the codec never decodes or validates text. Use [Text.UTF8]
// for display and [Text.String] to keep every byte.
type Text []byte

// String returns the raw bytes as a Go string, losslessly.
func (t Text) String() string { return string(t) }

// IsUTF8 reports whether t is valid UTF-8.
func (t Text) IsUTF8() bool { return utf8.Valid(t) }

// UTF8 returns a valid UTF-8 view of t: every byte that is not part of a
// valid UTF-8 sequence becomes U+FFFD, one replacement per byte, as Go's
// range loop over a string would decode it.
func (t Text) UTF8() string {
	if utf8.Valid(t) {
		return string(t)
	}
	out := make([]byte, 0, len(t)+8)
	for i := 0; i < len(t); {
		r, n := utf8.DecodeRune(t[i:])
		out = utf8.AppendRune(out, r)
		i += n
	}
	return string(out)
}
