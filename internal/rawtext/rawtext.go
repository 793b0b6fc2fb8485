// Package rawtext holds the Text type that mcquery, bedrock and satisfactory share
// (each aliases it): a string kept exactly as the server sent it, decoded
// for display with the rule of internal/textenc. It uses the standard
// library only.
package rawtext

import (
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/textenc"
)

// Text is a string exactly as the server sent it: usually UTF-8, but
// plugins and other servers put Latin-1 and raw bytes in MOTDs, so the
// codecs keep the bytes. Use [Text.UTF8] for display and [Text.String] to
// keep every byte.
type Text []byte

// String returns the raw bytes as a Go string, losslessly.
func (t Text) String() string { return string(t) }

// IsUTF8 reports whether t is valid UTF-8.
func (t Text) IsUTF8() bool { return utf8.Valid(t) }

// UTF8 decodes t for display with the rule every gsq protocol package
// shares: valid UTF-8 as is, every other byte as Latin-1.
func (t Text) UTF8() string { return textenc.Decode(t) }
