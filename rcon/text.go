package rcon

import "github.com/gsq-project/gsq/internal/textenc"

// DecodeText turns a response body into text with the rule every gsq
// protocol package shares: valid UTF-8 is kept as is, and every byte that
// is not part of a valid UTF-8 sequence is read as Latin-1 (ISO 8859-1),
// so the raw 0xA7 (§) old CraftBukkit servers send becomes U+00A7, as
// wiki.vg's Minecraft RCON page advises. Nothing else is changed: colour
// codes, NULs and trailing newlines stay.
func DecodeText(b []byte) string { return textenc.Decode(b) }
