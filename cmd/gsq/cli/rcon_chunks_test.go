package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/rcon/mctext"
)

// An output without line feeds (a hostile server's endless stream, or a
// long JSON blob) is still decoded and written in bounded pieces, so the
// CLI holds no second copy of a 64 MB answer; and no piece boundary
// changes the text: UTF-8 sequences, CR LF and § codes stay whole.
func TestChunksBoundedWithoutLineFeeds(t *testing.T) {
	t.Parallel()
	unit := []string{
		"é",             // a 2-byte sequence
		"😀",             // a 4-byte sequence
		"\r\n",          // CR LF, made one line feed on a terminal
		"§a",            // a Minecraft colour code
		"\xa7b",         // § as a Latin-1 byte, and its code
		"ç",             // C3 A7: its second byte is not a §
		"\xff\xfe",      // bytes outside UTF-8, read as Latin-1
		"😀\x80\x80\x80", // stray continuation bytes after a sequence
		"\x80",
		"x",
	}
	for _, u := range unit {
		for shift := range 4 {
			// The unit repeated so that one lands across every cut point.
			b := []byte(strings.Repeat("y", shift) + strings.Repeat(u, 3*outputChunk/len(u)+7))
			var pieces [][]byte
			chunks(b, func(p []byte) { pieces = append(pieces, p) })
			if len(pieces) < 3 {
				t.Fatalf("%q: %d pieces for %d bytes without a line feed, want at least 3", u, len(pieces), len(b))
			}
			var joined []byte
			var decoded, stripped, visible strings.Builder
			for _, p := range pieces {
				if len(p) > 2*outputChunk || len(p) == 0 {
					t.Fatalf("%q: a piece of %d bytes (limit %d)", u, len(p), 2*outputChunk)
				}
				joined = append(joined, p...)
				s := rcon.DecodeText(p)
				decoded.WriteString(s)
				stripped.WriteString(mctext.Strip(s))
				visible.WriteString(visibleControls(s))
			}
			if !bytes.Equal(joined, b) {
				t.Fatalf("%q: the pieces do not make up the output", u)
			}
			whole := rcon.DecodeText(b)
			if decoded.String() != whole {
				t.Errorf("%q shift %d: decoding the pieces differs from decoding the whole", u, shift)
			}
			if stripped.String() != mctext.Strip(whole) {
				t.Errorf("%q shift %d: stripping the pieces differs from stripping the whole", u, shift)
			}
			if visible.String() != visibleControls(whole) {
				t.Errorf("%q shift %d: the terminal text of the pieces differs from the whole's", u, shift)
			}
		}
	}
}
