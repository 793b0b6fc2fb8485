package bohemia

import (
	"bytes"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/gsq-project/gsq/a2s"
)

// Errors wrapped by [*DecodeError] and returned by [Message].
var (
	// ErrNoMessage means the rules hold no chunk of a binary message.
	ErrNoMessage = errors.New("bohemia: no binary message in the rules")
	// ErrIncomplete means chunks of the message are missing.
	ErrIncomplete = errors.New("bohemia: binary message incomplete")
	// ErrEscape is a 0x01 escape byte followed by something other than
	// 0x01, 0x02 or 0x03.
	ErrEscape = errors.New("bohemia: bad escape sequence")
	// ErrTruncated means the message ends inside a field.
	ErrTruncated = errors.New("bohemia: message truncated")
	// ErrTrailing means bytes follow the last field.
	ErrTrailing = errors.New("bohemia: bytes after the message")
	// ErrVersion means the message's version is not one Decode reads.
	ErrVersion = errors.New("bohemia: unsupported message version")
	// ErrTooLong is a list or text too long for its one-byte length.
	ErrTooLong = errors.New("bohemia: value too long to encode")
)

// DecodeError reports where a message stopped making sense.
type DecodeError struct {
	Offset int   // byte offset in the unescaped message
	Err    error // one of the errors above
}

func (e *DecodeError) Error() string {
	return fmt.Sprintf("%v at offset %d", e.Err, e.Offset)
}

// Unwrap returns the cause.
func (e *DecodeError) Unwrap() error { return e.Err }

// Escape bytes. A value of an A2S_RULES reply is NUL-terminated, so the
// message is escaped to hold no NUL.
const (
	escape     = 0x01
	escapedOne = 0x01 // 01 01 is 0x01
	escapedNUL = 0x02 // 01 02 is 0x00
	escapedFF  = 0x03 // 01 03 is 0xFF
)

// ChunkSize is the most escaped bytes [Chunks] puts in one rule value.
const ChunkSize = 124

// isChunk reports whether a rule name is a chunk's: two raw bytes, the
// chunk's number from 1 and the chunk count.
func isChunk(name a2s.Text) bool {
	return len(name) == 2 && name[0] >= 1 && name[0] <= name[1]
}

// Message collects the binary message from the chunks among rules and
// returns it unescaped, with the other rules in their order. The count
// of the first chunk is the message's; chunks that disagree with it are
// left among the other rules. A chunk sent twice must carry the same
// value both times. When no rule is a chunk, rest is rules itself and
// err is ErrNoMessage: most servers carry no message, so that answer
// costs no allocation.
func Message(rules []a2s.Rule) (msg []byte, rest []a2s.Rule, err error) {
	if !slices.ContainsFunc(rules, func(r a2s.Rule) bool { return isChunk(r.Name) }) {
		return nil, rules, ErrNoMessage
	}
	var total int
	var chunks [][]byte
	var seen []bool
	for _, r := range rules {
		if !isChunk(r.Name) || (total != 0 && int(r.Name[1]) != total) {
			rest = append(rest, r)
			continue
		}
		if total == 0 {
			total = int(r.Name[1])
			chunks, seen = make([][]byte, total), make([]bool, total)
		}
		i := int(r.Name[0]) - 1
		switch {
		case !seen[i]:
			chunks[i], seen[i] = r.Value, true
		case !bytes.Equal(chunks[i], r.Value):
			return nil, rest, fmt.Errorf("%w: chunk %d sent twice with different values", ErrIncomplete, i+1)
		}
	}
	var escaped []byte
	for i, c := range chunks {
		if !seen[i] {
			return nil, rest, fmt.Errorf("%w: chunk %d of %d missing", ErrIncomplete, i+1, total)
		}
		escaped = append(escaped, c...)
	}
	msg, err = Unescape(escaped)
	return msg, rest, err
}

// Unescape undoes the escaping of a message.
func Unescape(b []byte) ([]byte, error) {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != escape {
			out = append(out, b[i])
			continue
		}
		if i+1 == len(b) {
			return nil, &DecodeError{Offset: len(out), Err: ErrEscape}
		}
		i++
		switch b[i] {
		case escapedOne:
			out = append(out, 0x01)
		case escapedNUL:
			out = append(out, 0x00)
		case escapedFF:
			out = append(out, 0xFF)
		default:
			return nil, &DecodeError{Offset: len(out), Err: ErrEscape}
		}
	}
	return out, nil
}

// AppendEscaped appends msg to b escaped.
func AppendEscaped(b, msg []byte) []byte {
	for _, c := range msg {
		switch c {
		case 0x01:
			b = append(b, escape, escapedOne)
		case 0x00:
			b = append(b, escape, escapedNUL)
		case 0xFF:
			b = append(b, escape, escapedFF)
		default:
			b = append(b, c)
		}
	}
	return b
}

// Chunks escapes msg and cuts it into rules of at most ChunkSize bytes,
// named as servers name them, ready to go before a server's own rules.
// An escape pair is never cut. It fails if msg needs more than 255
// chunks.
func Chunks(msg []byte) ([]a2s.Rule, error) {
	escaped := AppendEscaped(nil, msg)
	var values [][]byte
	for len(escaped) > 0 {
		n := min(ChunkSize, len(escaped))
		if escaped[n-1] == escape && n < len(escaped) && n > 1 && !pairEnds(escaped[:n]) {
			n-- // keep 01 xx together
		}
		values = append(values, escaped[:n])
		escaped = escaped[n:]
	}
	if len(values) == 0 {
		values = append(values, nil)
	}
	if len(values) > 255 {
		return nil, fmt.Errorf("%w: %d chunks", ErrTooLong, len(values))
	}
	rules := make([]a2s.Rule, len(values))
	for i, v := range values {
		rules[i] = a2s.Rule{Name: a2s.Text{byte(i + 1), byte(len(values))}, Value: a2s.Text(v)}
	}
	return rules, nil
}

// pairEnds reports whether the last byte of b, an escape byte, is the
// second byte of a pair (01 01) rather than the start of one.
func pairEnds(b []byte) bool {
	run := 0 // escape bytes at the end of b
	for i := len(b) - 1; i >= 0 && b[i] == escape; i-- {
		run++
	}
	// Pairs start at the first byte of the run: an even run ends a pair.
	return run%2 == 0
}

// Browser is a decoded version 2 Server Browser Protocol message: the DLC
// and mod lists DayZ servers advertise.
type Browser struct {
	Version uint8
	// Overflow holds the server's flags for lists it cut short to fit
	// the reply; it is kept as sent.
	Overflow uint8
	// DLC is a bit set of the DLCs the server runs; DLCHashes holds a
	// hash for each bit set, lowest bit first.
	DLC       uint16
	DLCHashes []uint32
	Mods      []Mod
	// Signatures names the keys the server accepts.
	Signatures []a2s.Text
}

// Mod is one mod a server runs.
type Mod struct {
	Hash uint32
	// DLC reports a mod that is a DLC.
	DLC bool
	// WorkshopID is the mod's Steam Workshop ID.
	WorkshopID uint64
	Name       a2s.Text
}

// modDLCFlag marks a DLC in a mod's info byte; the low four bits hold the
// length of the Workshop ID that follows.
const (
	modDLCFlag     = 0x10
	modIDLenMask   = 0x0F
	versionDayZ    = 2
	maxWorkshopLen = 8
)

// Decode reads an unescaped version 2 message (see [Message]). Every
// length is checked, and the message must end with the last signature.
func Decode(msg []byte) (*Browser, error) {
	d := decoder{b: msg}
	br := &Browser{Version: d.u8(), Overflow: d.u8()}
	if d.err == nil && br.Version != versionDayZ {
		return nil, &DecodeError{Offset: 0, Err: fmt.Errorf("%w %d", ErrVersion, br.Version)}
	}
	br.DLC = uint16(d.u8()) | uint16(d.u8())<<8
	for range bits.OnesCount16(br.DLC) {
		br.DLCHashes = append(br.DLCHashes, d.u32())
	}
	mods := int(d.u8())
	for i := 0; i < mods && d.err == nil; i++ {
		m := Mod{Hash: d.u32()}
		info := d.u8()
		m.DLC = info&modDLCFlag != 0
		m.WorkshopID = d.uintN(int(info & modIDLenMask))
		m.Name = d.text()
		br.Mods = append(br.Mods, m)
	}
	sigs := int(d.u8())
	for i := 0; i < sigs && d.err == nil; i++ {
		br.Signatures = append(br.Signatures, d.text())
	}
	if d.err != nil {
		return nil, d.err
	}
	if d.off != len(msg) {
		return nil, &DecodeError{Offset: d.off, Err: ErrTrailing}
	}
	return br, nil
}

// Append appends the unescaped version 2 message of br to b (pass the
// result to [Chunks]). Version is written as 2 whatever it holds; a hash
// is written for each DLC bit, zero where DLCHashes runs short.
func (br *Browser) Append(b []byte) ([]byte, error) {
	if len(br.Mods) > 255 || len(br.Signatures) > 255 {
		return b, fmt.Errorf("%w: %d mods, %d signatures", ErrTooLong, len(br.Mods), len(br.Signatures))
	}
	b = append(b, versionDayZ, br.Overflow, byte(br.DLC), byte(br.DLC>>8))
	for i := range bits.OnesCount16(br.DLC) {
		var h uint32
		if i < len(br.DLCHashes) {
			h = br.DLCHashes[i]
		}
		b = appendU32(b, h)
	}
	b = append(b, byte(len(br.Mods)))
	for _, m := range br.Mods {
		if len(m.Name) > 255 {
			return b, fmt.Errorf("%w: mod name of %d bytes", ErrTooLong, len(m.Name))
		}
		b = appendU32(b, m.Hash)
		n := (bits.Len64(m.WorkshopID) + 7) / 8
		info := byte(n)
		if m.DLC {
			info |= modDLCFlag
		}
		b = append(b, info)
		for i := range n {
			b = append(b, byte(m.WorkshopID>>(8*i)))
		}
		b = append(b, byte(len(m.Name)))
		b = append(b, m.Name...)
	}
	b = append(b, byte(len(br.Signatures)))
	for _, s := range br.Signatures {
		if len(s) > 255 {
			return b, fmt.Errorf("%w: signature of %d bytes", ErrTooLong, len(s))
		}
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	return b, nil
}

func appendU32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

// decoder reads little-endian fields, remembering the first error.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.err = &DecodeError{Offset: len(d.b), Err: ErrTruncated}
		return nil
	}
	v := d.b[d.off : d.off+n]
	d.off += n
	return v
}

func (d *decoder) u8() uint8 {
	if v := d.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (d *decoder) u32() uint32 { return uint32(d.uintN(4)) }

// uintN reads an n-byte little-endian integer (n <= 8).
func (d *decoder) uintN(n int) uint64 {
	if n > maxWorkshopLen {
		if d.err == nil {
			d.err = &DecodeError{Offset: d.off - 1, Err: fmt.Errorf("%w: %d-byte integer", ErrTooLong, n)}
		}
		return 0
	}
	var v uint64
	for i, c := range d.take(n) {
		v |= uint64(c) << (8 * i)
	}
	return v
}

// text reads a text with a one-byte length.
func (d *decoder) text() a2s.Text {
	n := int(d.u8())
	if v := d.take(n); v != nil {
		return a2s.Text(bytes.Clone(v))
	}
	return nil
}
