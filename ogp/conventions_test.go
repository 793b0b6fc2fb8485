package ogp_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gsq-project/gsq/ogp"
)

// TestParseErrorMessage: a ParseError says "ogp: " once, then what, where
// and why.
func TestParseErrorMessage(t *testing.T) {
	t.Parallel()
	_, _, err := ogp.ParseHeader([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0, 1, 0})
	if err == nil || err.Error() != "ogp: parse header at offset 8: bad HeadSize" || !errors.Is(err, ogp.ErrBadHeadSize) {
		t.Errorf("err = %v", err)
	}
	for _, b := range [][]byte{
		{0, 0, 0x04, 0xFF, 0x05, 0x00}, // a player count beyond the bytes left
		{0, 0, 0x01, 0x81},             // a truncated ServerInfoFields
		{0, 0, 0x40},                   // an unknown section
	} {
		_, err := ogp.ParseAnswer(b, ogp.V091)
		var pe *ogp.ParseError
		if !errors.As(err, &pe) || strings.Count(err.Error(), "ogp: ") != 1 || !strings.HasPrefix(err.Error(), "ogp: parse ") {
			t.Errorf("ParseAnswer(% X): %v", b, err)
		}
	}
}

// TestTextDecode: Text.UTF8 keeps valid UTF-8 and reads every other byte
// as Latin-1, as a2s and rcon do; RuneCount counts what it decodes.
func TestTextDecode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"café":                   "café",
		"caf\xe9":                "café",
		"\xe9t\xe9 \xe2\x98\x85": "été ★",
		"\xe2\x98":               "â\u0098",
	} {
		txt := ogp.Text(in)
		if got := txt.UTF8(); got != want {
			t.Errorf("Text(%q).UTF8() = %q, want %q", in, got, want)
		}
		if txt.RuneCount() != utf8.RuneCountInString(want) {
			t.Errorf("Text(%q).RuneCount() = %d, want %d", in, txt.RuneCount(), utf8.RuneCountInString(want))
		}
		if txt.String() != in {
			t.Errorf("String() lost bytes")
		}
	}
}
