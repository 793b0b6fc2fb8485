package ogp

// ColorEntry is one StringColorInfoEntry (spec 3.4). Delta is the
// DeltaPosition: characters from the previous entry's position (the first
// counts from 0). Value is the ColorValue code; RGB565 is the ColorValue16
// that follows codes 0x90..0x9F.
type ColorEntry struct {
	Delta  uint32
	Value  uint8
	RGB565 uint16
}

// ColorInfo is a StringColorInfo: the colour changes along a name.
// Package ogpcolor renders a name with its ColorInfo.
type ColorInfo []ColorEntry

// Colour codes (spec 3.4 "StringColorInfoEntry").
const (
	ColorResetText       = 0x10 // reset the text colour; 0x00..0x0F set a VGA text colour
	ColorResetBackground = 0x30 // reset the background; 0x20..0x2F set VGA colour ColorValue&0x0F
	ColorBold            = 0x40 // toggle bold
	ColorUnderline       = 0x41 // toggle underline
	ColorItalic          = 0x42 // toggle cursive
	ColorText16          = 0x90 // 16-bit (RGB565) text colour
	ColorBackground16    = 0x91 // 16-bit (RGB565) background colour
)

// has16 reports whether a ColorValue16 follows the code: for 0x90..0x9F
// (the spec's "OR" is read as "AND", see the package doc).
func has16(v uint8) bool { return v >= 0x90 && v <= 0x9F }

// knownColor reports whether v is a code the spec defines (0x92..0x9F
// are reserved but still carry the 16-bit value, so they parse).
func knownColor(v uint8) bool {
	return v <= 0x10 || v >= 0x20 && v <= 0x30 || v >= 0x40 && v <= 0x42 || has16(v)
}

// RGB565 expands a 5-6-5 colour (ColorValue16, TeamColor) to 8 bits per
// channel.
func RGB565(v uint16) (r, g, b uint8) {
	r5, g6, b5 := uint8(v>>11&31), uint8(v>>5&63), uint8(v&31)
	return r5<<3 | r5>>2, g6<<2 | g6>>4, b5<<3 | b5>>2
}

// colorInfo reads a StringColorInfo. ColorSize is a byte length; the
// entries are parsed inside exactly that many bytes. Malformed entries
// (an unknown code or an overrun) drop the colour info of that one string
// only: parsing resumes after the ColorSize bytes.
func (d *decoder) colorInfo() ColorInfo {
	size := d.varUint()
	if !d.ok() {
		return nil
	}
	if uint64(size) > uint64(d.r.Len()) {
		d.fail(ErrTruncated)
		return nil
	}
	sub := newDecoder(d.bytes(int(size)), d.d, d.section)
	var ci ColorInfo
	for sub.ok() && sub.r.Len() > 0 {
		var c ColorEntry
		c.Delta = sub.varUint()
		c.Value = sub.u8()
		if has16(c.Value) {
			c.RGB565 = sub.u16()
		}
		if !knownColor(c.Value) {
			return nil
		}
		ci = append(ci, c)
	}
	if !sub.ok() {
		return nil
	}
	return ci
}

// colorInfo writes a StringColorInfo, measuring the entries first.
func (e *encoder) colorInfo(ci ColorInfo) {
	size := 0
	for _, c := range ci {
		size += varUintLen(c.Delta, e.d) + 1
		if has16(c.Value) {
			size += 2
		}
	}
	e.varUint(uint32(size))
	for _, c := range ci {
		e.varUint(c.Delta)
		e.u8(c.Value)
		if has16(c.Value) {
			e.u16(c.RGB565)
		}
	}
}
