package ogp

import (
	"bytes"
	"fmt"

	"github.com/gsq-project/gsq/internal/wire"
)

// maxEmptyEntries caps the count of a list whose entries carry no field
// (an empty mask): such entries take no bytes, so the count is the only
// thing a peer could inflate.
const maxEmptyEntries = 65535

// errCountTooBig reports a list count larger than the bytes left could
// hold: the list is truncated or the count lies.
var errCountTooBig = fmt.Errorf("%w: list count exceeds the bytes left", ErrTruncated)

// decoder reads OGP elementary types from one slice. The first failure
// sticks: later reads return zero values and the error keeps the section
// and offset of the first problem.
type decoder struct {
	r       wire.Reader
	d       Dialect
	section string
	err     *ParseError
}

func newDecoder(b []byte, d Dialect, section string) decoder {
	return decoder{r: wire.NewReader(b), d: d, section: section}
}

// fail records err at the current offset unless an error is already set.
func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = &ParseError{Section: d.section, Offset: d.r.Offset(), Err: err}
	}
}

func (d *decoder) ok() bool { return d.err == nil }

// error returns the first failure as an error interface (nil if none).
func (d *decoder) error() error {
	if d.err == nil {
		return nil
	}
	return d.err
}

// check turns a wire error into ErrTruncated.
func (d *decoder) check(err error) bool {
	if err != nil {
		d.fail(ErrTruncated)
		return false
	}
	return true
}

func (d *decoder) u8() uint8 {
	if !d.ok() {
		return 0
	}
	v, err := d.r.Uint8()
	d.check(err)
	return v
}

func (d *decoder) u16() uint16 {
	if !d.ok() {
		return 0
	}
	v, err := d.r.Uint16()
	d.check(err)
	return v
}

func (d *decoder) u32() uint32 {
	if !d.ok() {
		return 0
	}
	v, err := d.r.Uint32()
	d.check(err)
	return v
}

func (d *decoder) bytes(n int) []byte {
	if !d.ok() {
		return nil
	}
	v, err := d.r.Bytes(n)
	d.check(err)
	return v
}

// text reads a SzString. The result aliases the input.
func (d *decoder) text() Text {
	if !d.ok() {
		return nil
	}
	v, err := d.r.CString()
	if !d.check(err) {
		return nil
	}
	return Text(v)
}

// bitArray reads a VarBitArray of at most maxBitArrayLen bytes.
func (d *decoder) bitArray() uint64 {
	var v uint64
	for i := 0; d.ok(); i++ {
		if i == maxBitArrayLen {
			d.fail(ErrBitArrayTooLong)
			return 0
		}
		c := d.u8()
		if data := uint64(c & 0x7F); data != 0 {
			if i >= 9 {
				d.fail(ErrBitArrayTooLong)
				return 0
			}
			v |= data << (7 * i)
		}
		if c&0x80 == 0 {
			return v
		}
	}
	return 0
}

// varUint reads a VarUINT8-32 (spec 3.4; the V1 escapes are in the package doc).
// Non-minimal forms are accepted.
func (d *decoder) varUint() uint32 {
	b := d.u8()
	if d.d == V1 {
		switch b {
		case 0xFE:
			return uint32(d.u16())
		case 0xFF:
			return d.u32()
		}
		return uint32(b)
	}
	if b != 0xFF {
		return uint32(b)
	}
	if w := d.u16(); w != 0xFFFF {
		return uint32(w)
	}
	return d.u32()
}

// varSint reads a VarSINT8-32.
func (d *decoder) varSint() int32 {
	b := int8(d.u8())
	if d.d == V1 {
		switch b {
		case -0x80:
			return int32(int16(d.u16()))
		case -0x7F:
			return int32(d.u32())
		}
		return int32(b)
	}
	if b != -0x80 {
		return int32(b)
	}
	if w := int16(d.u16()); w != -0x8000 {
		return int32(w)
	}
	return int32(d.u32())
}

// count reads a list count and checks it against the bytes left, given
// that every entry takes at least minEntry bytes.
func (d *decoder) count(minEntry int) int {
	n := d.varUint()
	if !d.ok() {
		return 0
	}
	if uint64(n)*uint64(minEntry) > uint64(d.r.Len()) {
		d.fail(errCountTooBig)
		return 0
	}
	return int(n)
}

// known fails with ErrUnknownField when mask has bits outside known.
func (d *decoder) known(mask, known uint64) bool {
	if mask&^known != 0 {
		d.fail(ErrUnknownField)
		return false
	}
	return d.ok()
}

// AppendVarUint appends v as a VarUINT8-32 in dialect d, minimally.
func AppendVarUint(b []byte, v uint32, d Dialect) []byte {
	if d == V1 {
		switch {
		case v <= 0xFD:
			return append(b, byte(v))
		case v <= 0xFFFE:
			return wire.AppendUint16(append(b, 0xFE), uint16(v))
		}
		return wire.AppendUint32(append(b, 0xFF), v)
	}
	switch {
	case v <= 0xFE:
		return append(b, byte(v))
	case v <= 0xFFFE:
		return wire.AppendUint16(append(b, 0xFF), uint16(v))
	}
	return wire.AppendUint32(append(b, 0xFF, 0xFF, 0xFF), v)
}

// varUintLen is len(AppendVarUint(nil, v, d)).
func varUintLen(v uint32, d Dialect) int {
	switch {
	case v <= 0xFD || v == 0xFE && d == V091:
		return 1
	case v <= 0xFFFE:
		return 3
	case d == V1:
		return 5
	}
	return 7
}

// AppendVarSint appends v as a VarSINT8-32 in dialect d, minimally.
func AppendVarSint(b []byte, v int32, d Dialect) []byte {
	lo := int32(-0x7F)
	if d == V1 {
		lo = -0x7E
	}
	switch {
	case v >= lo && v <= 0x7F:
		return append(b, byte(int8(v)))
	case v >= -0x7FFF && v <= 0x7FFF:
		return wire.AppendUint16(append(b, 0x80), uint16(int16(v)))
	case d == V1:
		return wire.AppendInt32(append(b, 0x81), v)
	}
	return wire.AppendInt32(append(b, 0x80, 0x00, 0x80), v)
}

// ParseVarUint decodes one VarUINT8-32 from the start of b and returns it
// with the number of bytes it took.
func ParseVarUint(b []byte, d Dialect) (uint32, int, error) {
	dec := newDecoder(b, d, "VarUINT")
	v := dec.varUint()
	return v, dec.r.Offset(), dec.error()
}

// ParseVarSint decodes one VarSINT8-32 from the start of b.
func ParseVarSint(b []byte, d Dialect) (int32, int, error) {
	dec := newDecoder(b, d, "VarSINT")
	v := dec.varSint()
	return v, dec.r.Offset(), dec.error()
}

// AppendBitArray appends v (bit n.x at bit n*7+x) as a minimal
// VarBitArray.
func AppendBitArray(b []byte, v uint64) []byte { return appendBitArray(b, v) }

// ParseBitArray decodes one VarBitArray from the start of b. Non-minimal
// encodings (such as 80 00) are accepted.
func ParseBitArray(b []byte) (uint64, int, error) {
	dec := newDecoder(b, V091, "VarBitArray")
	v := dec.bitArray()
	return v, dec.r.Offset(), dec.error()
}

// encoder appends OGP elementary types; the first error sticks.
type encoder struct {
	b      []byte
	d      Dialect
	latin1 bool // transcode text to Latin-1 (V1 answer to a client without bUTF8)
	err    error
}

func (e *encoder) u8(v uint8)             { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16)           { e.b = wire.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32)           { e.b = wire.AppendUint32(e.b, v) }
func (e *encoder) bitArray(v uint64)      { e.b = appendBitArray(e.b, v) }
func (e *encoder) varUint(v uint32)       { e.b = AppendVarUint(e.b, v, e.d) }
func (e *encoder) varSint(v int32)        { e.b = AppendVarSint(e.b, v, e.d) }
func (e *encoder) count(n int, max int64) { e.varUint(uint32(e.limit(n, max))) }

// limit returns n, or records ErrTooLarge when n exceeds max.
func (e *encoder) limit(n int, max int64) int {
	if int64(n) > max {
		e.fail(ErrTooLarge)
	}
	return n
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

func (e *encoder) text(t Text) {
	if bytes.IndexByte(t, 0) >= 0 {
		e.fail(ErrNULInText)
		return
	}
	if e.latin1 {
		t = latin1(t)
	}
	e.b = append(append(e.b, t...), 0)
}

// result returns the appended bytes or the first error.
func (e *encoder) result() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.b, nil
}
