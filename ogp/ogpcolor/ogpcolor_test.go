package ogpcolor

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gsq-project/gsq/ogp"
)

func TestANSI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		text string
		ci   ogp.ColorInfo
		want string
	}{
		{"no colours", "plain", nil, "plain"},
		{"escape in the name is defused", "Red\x1b[2JX",
			ogp.ColorInfo{{Value: 0x04}, {Delta: 3, Value: ogp.ColorResetText}, {Delta: 1, Value: ogp.ColorBold}},
			"\x1b[38;2;170;0;0mRed\x1b[39m·\x1b[1m[2JX\x1b[0m"},
		{"C1 control from a Latin-1 byte", "a\x9bb", nil, "a·b"},
		{"background and 16-bit colours", "ab",
			ogp.ColorInfo{{Value: 0x2C}, {Delta: 1, Value: ogp.ColorText16, RGB565: 0x07E0}, {Value: ogp.ColorBackground16, RGB565: 0x001F}, {Delta: 1, Value: ogp.ColorResetBackground}},
			"\x1b[48;2;255;85;85ma\x1b[38;2;0;255;0m\x1b[48;2;0;0;255mb\x1b[49m\x1b[0m"},
		{"toggles switch off again", "abc",
			ogp.ColorInfo{{Value: ogp.ColorItalic}, {Value: ogp.ColorUnderline}, {Delta: 1, Value: ogp.ColorItalic}, {Delta: 1, Value: ogp.ColorUnderline}, {Value: ogp.ColorBold}, {Value: ogp.ColorBold}},
			"\x1b[3m\x1b[4ma\x1b[23mb\x1b[24m\x1b[1m\x1b[22mc\x1b[0m"},
		{"positions count decoded characters", "Zoë\xe9!",
			ogp.ColorInfo{{Delta: 4, Value: 0x01}},
			"Zoëé\x1b[38;2;0;0;170m!\x1b[0m"},
		{"a position past the end is the end", "ab", ogp.ColorInfo{{Delta: 1 << 31, Value: 0x0F}, {Delta: 1 << 31, Value: 0x07}},
			"ab\x1b[38;2;255;255;255m\x1b[38;2;170;170;170m\x1b[0m"},
		{"reserved codes draw nothing", "ab", ogp.ColorInfo{{Delta: 1, Value: 0x9A, RGB565: 1}}, "ab"},
	}
	for _, tt := range tests {
		if got := ANSI(ogp.Text(tt.text), tt.ci); got != tt.want {
			t.Errorf("%s: ANSI = %q\nwant         %q", tt.name, got, tt.want)
		}
	}
}

func TestSpans(t *testing.T) {
	t.Parallel()
	red := Style{Color: RGB{0xAA, 0, 0}, HasColor: true}
	got := Spans(ogp.Text("Red team"), ogp.ColorInfo{{Value: 0x04}, {Delta: 3, Value: ogp.ColorBold}, {Value: ogp.ColorBold}, {Delta: 1, Value: ogp.ColorResetText}})
	want := []Span{{"Red ", red}, {"team", Style{}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Spans = %+v\nwant %+v", got, want)
	}
	if got := Spans(ogp.Text(""), ogp.ColorInfo{{Value: 0x04}}); got != nil {
		t.Fatalf("empty name: %+v", got)
	}
	bg := Spans(ogp.Text("x"), ogp.ColorInfo{{Value: ogp.ColorBackground16, RGB565: 0xF800}, {Value: ogp.ColorUnderline}})
	if len(bg) != 1 || bg[0].Style != (Style{Background: RGB{0xFF, 0, 0}, HasBackground: true, Underline: true}) {
		t.Fatalf("background: %+v", bg)
	}
}

func TestVGA(t *testing.T) {
	t.Parallel()
	if VGA(0x0C) != (RGB{0xFF, 0x55, 0x55}) || VGA(0x2C) != VGA(0x0C) || VGA(6).String() != "#aa5500" {
		t.Fatalf("VGA(12) = %v, VGA(0x2C) = %v, VGA(6) = %v", VGA(0x0C), VGA(0x2C), VGA(6))
	}
}

var sgrSeq = regexp.MustCompile("\x1b\\[[0-9;]*m")

func FuzzANSI(f *testing.F) {
	f.Add([]byte("Red\x1b[2JX"), []byte{0x00, 0x04, 0x03, 0x10, 0x01, 0x40})
	f.Add([]byte("Zo\xc3\xab\xe9"), []byte{0x02, 0x90, 0x00, 0xF8, 0x01, 0x91, 0x1F, 0x00})
	f.Add([]byte("\x9b31m"), []byte{0x00, 0x2C, 0x00, 0x30})
	f.Fuzz(func(t *testing.T, name, codes []byte) {
		var ci ogp.ColorInfo
		for len(codes) >= 2 {
			c := ogp.ColorEntry{Delta: uint32(codes[0]), Value: codes[1]}
			codes = codes[2:]
			if c.Value >= 0x90 && c.Value <= 0x9F && len(codes) >= 2 {
				c.RGB565 = uint16(codes[0]) | uint16(codes[1])<<8
				codes = codes[2:]
			}
			ci = append(ci, c)
		}
		out := ANSI(ogp.Text(name), ci)
		if !utf8.ValidString(out) {
			t.Fatalf("ANSI output is not UTF-8: %q", out)
		}
		plain := sgrSeq.ReplaceAllString(out, "")
		for _, r := range plain {
			if r < 0x20 || r >= 0x7F && r <= 0x9F {
				t.Fatalf("control %U left in %q", r, out)
			}
		}
		if utf8.RuneCountInString(plain) != ogp.Text(name).RuneCount() {
			t.Fatalf("ANSI changed the length of %q: %q", name, plain)
		}
		var sb strings.Builder
		for _, s := range Spans(ogp.Text(name), ci) {
			if s.Text == "" {
				t.Fatalf("empty span in %+v", Spans(ogp.Text(name), ci))
			}
			sb.WriteString(s.Text)
		}
		if sb.String() != ogp.Text(name).UTF8() {
			t.Fatalf("spans of %q join to %q", name, sb.String())
		}
	})
}

func BenchmarkANSI(b *testing.B) {
	name := ogp.Text("[Clan] Player name")
	ci := ogp.ColorInfo{{Value: 0x0C}, {Delta: 6, Value: ogp.ColorResetText}, {Delta: 1, Value: ogp.ColorBold}}
	b.ReportAllocs()
	for b.Loop() {
		ANSI(name, ci)
	}
}
