// Package ogpcolor renders the colours and styles that Open Game Protocol
// servers attach to host, team and player names: the StringColorInfo of
// the OGP v0.91 specification, which package ogp parses into an
// [ogp.ColorInfo]. [Spans] cuts a name into runs of one [Style], for any
// kind of output; [ANSI] draws it for a terminal. It uses the standard
// library only.
//
// A StringColorInfo is a list of entries, each a DeltaPosition (characters
// from the previous entry's position, the first counting from the start)
// and a code: 0x00-0x0F set the text colour to that colour of the 16-colour
// VGA palette, 0x10 resets it, 0x20-0x2F set the background to VGA colour
// code-0x20, 0x30 resets it, 0x40, 0x41 and 0x42 toggle bold, underline
// and italic ("cursive"), and 0x90 and 0x91 set the text and background
// colour to a 16-bit RGB 5-6-5 value. Positions count the characters of
// the name as [ogp.Text.UTF8] decodes it, and a position past the end is
// taken as the end.
package ogpcolor

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/gsq-project/gsq/ogp"
)

// RGB is a colour with 8 bits per channel.
type RGB struct{ R, G, B uint8 }

// String returns the colour as "#rrggbb".
func (c RGB) String() string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// vga is the 16-colour VGA palette, indexed by the low nibble of codes
// 0x00-0x0F and 0x20-0x2F.
var vga = [16]RGB{
	{0x00, 0x00, 0x00}, {0x00, 0x00, 0xAA}, {0x00, 0xAA, 0x00}, {0x00, 0xAA, 0xAA},
	{0xAA, 0x00, 0x00}, {0xAA, 0x00, 0xAA}, {0xAA, 0x55, 0x00}, {0xAA, 0xAA, 0xAA},
	{0x55, 0x55, 0x55}, {0x55, 0x55, 0xFF}, {0x55, 0xFF, 0x55}, {0x55, 0xFF, 0xFF},
	{0xFF, 0x55, 0x55}, {0xFF, 0x55, 0xFF}, {0xFF, 0xFF, 0x55}, {0xFF, 0xFF, 0xFF},
}

// VGA returns colour i of the 16-colour VGA palette (black, blue, green,
// cyan, red, magenta, brown, light grey, then their bright forms); only
// the low 4 bits of i count.
func VGA(i uint8) RGB { return vga[i&15] }

func rgb565(v uint16) RGB {
	r, g, b := ogp.RGB565(v)
	return RGB{r, g, b}
}

// Style is how a run of characters is drawn. A colour that is not set is
// the output's default.
type Style struct {
	Color         RGB // the text colour, when HasColor
	HasColor      bool
	Background    RGB // the background colour, when HasBackground
	HasBackground bool
	Bold          bool
	Underline     bool
	Italic        bool
}

// apply changes s as colour code c says. Reserved codes change nothing.
func (s *Style) apply(c ogp.ColorEntry) {
	switch v := c.Value; {
	case v <= 0x0F:
		s.Color, s.HasColor = VGA(v), true
	case v == ogp.ColorResetText:
		s.Color, s.HasColor = RGB{}, false
	case v >= 0x20 && v <= 0x2F:
		s.Background, s.HasBackground = VGA(v), true
	case v == ogp.ColorResetBackground:
		s.Background, s.HasBackground = RGB{}, false
	case v == ogp.ColorBold:
		s.Bold = !s.Bold
	case v == ogp.ColorUnderline:
		s.Underline = !s.Underline
	case v == ogp.ColorItalic:
		s.Italic = !s.Italic
	case v == ogp.ColorText16:
		s.Color, s.HasColor = rgb565(c.RGB565), true
	case v == ogp.ColorBackground16:
		s.Background, s.HasBackground = rgb565(c.RGB565), true
	}
}

// Span is a run of a name's characters drawn in one style.
type Span struct {
	Text  string
	Style Style
}

// Spans returns t, decoded as [ogp.Text.UTF8] does, cut into runs of one
// style as ci says. Runs are never empty, and neighbouring runs differ in
// style. The text is returned as sent: escape it for the output (HTML,
// a terminal) before drawing it.
func Spans(t ogp.Text, ci ogp.ColorInfo) []Span {
	var spans []Span
	var style Style
	walk([]rune(t.UTF8()), ci, func(run []rune) {
		if n := len(spans); n > 0 && spans[n-1].Style == style {
			spans[n-1].Text += string(run)
			return
		}
		spans = append(spans, Span{Text: string(run), Style: style})
	}, style.apply)
	return spans
}

// ANSI returns t drawn with ci as ANSI (ECMA-48 SGR) escape sequences,
// colours in 24-bit form, ending with a reset when it used any. Control
// characters in the name (C0, DEL and C1) are shown as '·' first, so a
// name cannot carry escape sequences of its own.
func ANSI(t ogp.Text, ci ogp.ColorInfo) string {
	runes := []rune(t.UTF8())
	for i, r := range runes {
		if r < 0x20 || r >= 0x7F && r <= 0x9F {
			runes[i] = '·'
		}
	}
	var sb strings.Builder
	sb.Grow(len(runes) + len(ci)*20)
	var style Style
	used := false
	walk(runes, ci, func(run []rune) {
		for _, r := range run {
			sb.WriteRune(r)
		}
	}, func(c ogp.ColorEntry) {
		style.apply(c)
		if seq := sgr(style, c.Value); seq != "" {
			sb.WriteString(seq)
			used = true
		}
	})
	if used {
		sb.WriteString("\x1b[0m")
	}
	return sb.String()
}

// sgr is the escape sequence of code v, which left the style as to.
func sgr(to Style, v uint8) string {
	switch {
	case v <= 0x0F || v == ogp.ColorText16:
		return colorSGR(38, to.Color)
	case v == ogp.ColorResetText:
		return "\x1b[39m"
	case v >= 0x20 && v <= 0x2F || v == ogp.ColorBackground16:
		return colorSGR(48, to.Background)
	case v == ogp.ColorResetBackground:
		return "\x1b[49m"
	case v == ogp.ColorBold:
		return toggleSGR(to.Bold, "1", "22")
	case v == ogp.ColorUnderline:
		return toggleSGR(to.Underline, "4", "24")
	case v == ogp.ColorItalic:
		return toggleSGR(to.Italic, "3", "23")
	}
	return ""
}

func colorSGR(layer int, c RGB) string {
	return "\x1b[" + strconv.Itoa(layer) + ";2;" + strconv.Itoa(int(c.R)) + ";" + strconv.Itoa(int(c.G)) + ";" + strconv.Itoa(int(c.B)) + "m"
}

func toggleSGR(on bool, set, reset string) string {
	if on {
		return "\x1b[" + set + "m"
	}
	return "\x1b[" + reset + "m"
}

// walk calls text with each non-empty run of runes between two colour
// positions and code with each entry of ci, in order.
func walk(runes []rune, ci ogp.ColorInfo, text func([]rune), code func(ogp.ColorEntry)) {
	pos := 0
	for _, c := range ci {
		next := pos + int(min(c.Delta, uint32(len(runes)-pos)))
		if next > pos {
			text(runes[pos:next])
		}
		pos = next
		code(c)
	}
	if pos < len(runes) {
		text(runes[pos:])
	}
}
