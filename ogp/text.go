package ogp

import (
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/textenc"
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

// UTF8 decodes t for display with the rule every gsq protocol package
// shares: each valid UTF-8 sequence as is, and every other byte as the
// Latin-1 (ISO 8859-1) character of that value, which is what the V1
// dialect sends without bUTF8 and what most servers of the v0.91 era
// sent. Nothing is dropped or replaced.
func (t Text) UTF8() string { return textenc.Decode(t) }

// RuneCount is the length of t in characters, as [Text.UTF8] decodes it.
// Colour positions (DeltaPosition) count these characters.
func (t Text) RuneCount() int { return textenc.RuneCount(t) }

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
