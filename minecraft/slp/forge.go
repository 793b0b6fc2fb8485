package slp

import (
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Mods is the mod list a Forge server puts in its status: FML1's modinfo
// (1.7 to 1.12) or FML2/3's forgeData (1.13 on), whose list Forge 1.18.1
// and later compresses into forgeData.d. Forge truncates the list at 150
// entries to stay under the string limit, and says so in Truncated.
type Mods struct {
	// Kind is "modinfo" or "forgeData": which field the list came in.
	Kind string
	// Type is modinfo's type, "FML" for Forge.
	Type string
	// FMLNetworkVersion is forgeData's fmlNetworkVersion; nil when not
	// sent.
	FMLNetworkVersion *int32
	Mods              []Mod
	Channels          []Channel
	Truncated         bool
	// Compressed is set when the lists came compressed in forgeData.d.
	Compressed bool
	// Err is why forgeData.d could not be read, when it could not; the
	// lists then hold what was read before the fault.
	Err error
}

// Mod is one mod.
type Mod struct {
	ID      string
	Version string // the version or marker the server sends; "" when IgnoreServerOnly
	// IgnoreServerOnly is set when forgeData.d marks the mod as one the
	// client need not have (Forge's IGNORESERVERONLY marker).
	IgnoreServerOnly bool
}

// Channel is one network channel of forgeData.
type Channel struct {
	Name     string
	Version  string
	Required bool
}

// forgeDataJSON is forgeData as the status JSON has it (FML2/3).
type forgeDataJSON struct {
	Channels []struct {
		Res      string `json:"res"`
		Version  string `json:"version"`
		Required flag   `json:"required"`
	} `json:"channels"`
	Mods []struct {
		ModID     string `json:"modId"`
		ModMarker string `json:"modmarker"`
	} `json:"mods"`
	FMLNetworkVersion count  `json:"fmlNetworkVersion"`
	Truncated         flag   `json:"truncated"`
	D                 string `json:"d"`
}

// modInfoJSON is modinfo as the status JSON has it (FML1).
type modInfoJSON struct {
	Type    string `json:"type"`
	ModList []struct {
		ModID   string `json:"modid"`
		Version string `json:"version"`
	} `json:"modList"`
}

// parseMods reads forgeData or modinfo, preferring forgeData.
func parseMods(modinfo *modInfoJSON, forgeData *forgeDataJSON) *Mods {
	if w := forgeData; w != nil {
		m := &Mods{Kind: "forgeData", FMLNetworkVersion: w.FMLNetworkVersion.v, Truncated: w.Truncated.v != nil && *w.Truncated.v}
		for _, c := range w.Channels {
			m.Channels = append(m.Channels, Channel{Name: c.Res, Version: c.Version, Required: c.Required.v != nil && *c.Required.v})
		}
		for _, e := range w.Mods {
			m.Mods = append(m.Mods, Mod{ID: e.ModID, Version: e.ModMarker})
		}
		if w.D != "" {
			m.Compressed = true
			m.Err = m.decodeD(w.D)
		}
		return m
	}
	if w := modinfo; w != nil {
		m := &Mods{Kind: "modinfo", Type: w.Type}
		for _, e := range w.ModList {
			m.Mods = append(m.Mods, Mod{ID: e.ModID, Version: e.Version})
		}
		return m
	}
	return nil
}

// forgeStringLimit is the most bytes a String of forgeData.d takes: the
// 32767 characters of Minecraft's writeUtf, three bytes each at most.
const forgeStringLimit = 32767 * 3

// DecodeForgeData turns forgeData.d into the bytes it packs. Forge's
// ServerStatusPing writes them 15 bits to a character, after two
// characters holding the byte count (low 15 bits first), so that the
// binary survives as a Java string. It fails with a *ParseError when the
// count is more than the characters can hold or a character is beyond
// 15 bits.
func DecodeForgeData(d string) ([]byte, error) {
	units := make([]uint16, 0, min(len(d), 1<<20))
	for i, r := range d {
		if r > 0x7FFF {
			return nil, parseErr("forge-data", i, detail(ErrMalformed, "character U+%04X is beyond 15 bits", r))
		}
		units = append(units, uint16(r))
	}
	if len(units) < 2 {
		return nil, parseErr("forge-data", 0, ErrTruncated)
	}
	size := int(units[0]) | int(units[1])<<15
	if avail := (len(units) - 2) * 15 / 8; size > avail+1 {
		return nil, parseErr("forge-data", 0, detail(ErrTooLarge, "%d bytes announced in %d characters", size, len(units)-2))
	}
	out := make([]byte, 0, size)
	var buf uint32
	bits := 0
	for _, u := range units[2:] {
		for bits >= 8 && len(out) < size {
			out = append(out, byte(buf))
			buf >>= 8
			bits -= 8
		}
		buf |= uint32(u) << bits
		bits += 15
	}
	for len(out) < size && bits > 0 {
		out = append(out, byte(buf))
		buf >>= 8
		bits -= 8
	}
	if len(out) < size {
		return nil, parseErr("forge-data", len(d), ErrTruncated)
	}
	return out, nil
}

// EncodeForgeData packs b as forgeData.d, as Forge does (see
// DecodeForgeData).
func EncodeForgeData(b []byte) string {
	var sb strings.Builder
	sb.WriteRune(rune(len(b) & 0x7FFF))
	sb.WriteRune(rune(len(b) >> 15 & 0x7FFF))
	var buf uint32
	bits := 0
	for _, c := range b {
		if bits >= 15 {
			sb.WriteRune(rune(buf & 0x7FFF))
			buf >>= 15
			bits -= 15
		}
		buf |= uint32(c) << bits
		bits += 8
	}
	for bits > 0 {
		sb.WriteRune(rune(buf & 0x7FFF))
		buf >>= 15
		bits -= 15
	}
	return sb.String()
}

// decodeD reads forgeData.d into m: a truncated flag, a u16 mod count,
// and per mod a VarInt (channel count << 1 | the IGNORESERVERONLY flag),
// its id, its version unless flagged, and its channels (path, version,
// required); then a VarInt count of the channels of no mod (name,
// version, required).
func (m *Mods) decodeD(d string) error {
	b, err := DecodeForgeData(d)
	if err != nil {
		return err
	}
	r := forgeReader{b: b}
	m.Truncated = r.bool()
	n := r.u16()
	for i := 0; i < int(n) && r.err == nil; i++ {
		flags := r.varint()
		mod := Mod{ID: r.string(), IgnoreServerOnly: flags&1 != 0}
		if !mod.IgnoreServerOnly {
			mod.Version = r.string()
		}
		for j := int32(0); j < flags>>1 && r.err == nil; j++ {
			c := Channel{Name: mod.ID + ":" + r.string(), Version: r.string(), Required: r.bool()}
			if r.err == nil {
				m.Channels = append(m.Channels, c)
			}
		}
		if r.err == nil {
			m.Mods = append(m.Mods, mod)
		}
	}
	other := r.varint()
	for j := int32(0); j < other && r.err == nil; j++ {
		c := Channel{Name: r.string(), Version: r.string(), Required: r.bool()}
		if r.err == nil {
			m.Channels = append(m.Channels, c)
		}
	}
	return r.err
}

// forgeReader reads the fields of forgeData.d; the first fault sticks.
type forgeReader struct {
	b   []byte
	off int
	err error
}

func (r *forgeReader) fail(err error) {
	if r.err == nil {
		r.err = parseErr("forge-data", r.off, err)
	}
}

func (r *forgeReader) bool() bool {
	if r.err != nil || r.off >= len(r.b) {
		r.fail(ErrTruncated)
		return false
	}
	r.off++
	return r.b[r.off-1] != 0
}

func (r *forgeReader) u16() uint16 {
	if r.err != nil || len(r.b)-r.off < 2 {
		r.fail(ErrTruncated)
		return 0
	}
	r.off += 2
	return binary.BigEndian.Uint16(r.b[r.off-2:])
}

func (r *forgeReader) varint() int32 {
	if r.err != nil {
		return 0
	}
	v, n, err := ConsumeVarInt(r.b[r.off:])
	if err != nil {
		r.fail(err)
		return 0
	}
	r.off += n
	return v
}

func (r *forgeReader) string() string {
	if r.err != nil {
		return ""
	}
	s, n, err := consumeString(r.b[r.off:], forgeStringLimit)
	if err != nil {
		r.fail(err)
		return ""
	}
	r.off += n
	if !utf8.Valid(s) {
		return strings.ToValidUTF8(string(s), "\uFFFD")
	}
	return string(s)
}

// ForgeDataPayload is the binary forgeData.d packs, for a server that
// plays a modern Forge one: m's Truncated, Mods and Channels (a channel
// named "modid:path" goes with its mod, any other after the mods).
func ForgeDataPayload(m *Mods) []byte {
	var b []byte
	b = append(b, boolByte(m.Truncated))
	b = binary.BigEndian.AppendUint16(b, uint16(min(len(m.Mods), 0xFFFF)))
	used := make([]bool, len(m.Channels))
	for _, mod := range m.Mods[:min(len(m.Mods), 0xFFFF)] {
		var own []int
		for i, c := range m.Channels {
			if ns, _, ok := strings.Cut(c.Name, ":"); ok && ns == mod.ID && !used[i] {
				own, used[i] = append(own, i), true
			}
		}
		flags := int32(len(own)) << 1
		if mod.IgnoreServerOnly {
			flags |= 1
		}
		b = AppendVarInt(b, flags)
		b = AppendString(b, mod.ID)
		if !mod.IgnoreServerOnly {
			b = AppendString(b, mod.Version)
		}
		for _, i := range own {
			_, path, _ := strings.Cut(m.Channels[i].Name, ":")
			b = AppendString(b, path)
			b = AppendString(b, m.Channels[i].Version)
			b = append(b, boolByte(m.Channels[i].Required))
		}
	}
	var rest []int
	for i := range m.Channels {
		if !used[i] {
			rest = append(rest, i)
		}
	}
	b = AppendVarInt(b, int32(len(rest)))
	for _, i := range rest {
		b = AppendString(b, m.Channels[i].Name)
		b = AppendString(b, m.Channels[i].Version)
		b = append(b, boolByte(m.Channels[i].Required))
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
