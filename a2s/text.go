package a2s

import (
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/textenc"
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

// UTF8 returns t as text for display: valid UTF-8 as is, and every byte
// that is not part of a valid UTF-8 sequence read as Latin-1, the
// encoding of old GoldSource servers (0xE9 is "é"). Nothing is replaced
// or lost, and ogp and rcon decode their text the same way.
func (t Text) UTF8() string { return textenc.Decode(t) }
