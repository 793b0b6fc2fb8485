// Package wire holds the bounds-checked little-endian reader and the append
// helpers shared by the protocol codecs: Valve's server queries and Source
// RCON (both little-endian, as the Valve Developer Community wiki pages
// "Server queries" and "Source RCON Protocol" describe them), Minecraft
// RCON (wiki.vg, "RCON") and OGP v0.91. It uses the standard library
// only and never panics on short input: every read reports failure instead.
package wire

import (
	"encoding/binary"
	"errors"
	"math"
)

// ErrShort is returned when a read needs more bytes than remain.
var ErrShort = errors.New("unexpected end of data")

// ErrNoTerminator is returned when a C string has no NUL before the end.
var ErrNoTerminator = errors.New("string is not NUL-terminated")

// Reader is a cursor over a byte slice. The zero value reads nothing.
// Methods return ErrShort (or ErrNoTerminator) and leave the offset
// unchanged when the data is too short; the returned byte slices alias
// the input.
type Reader struct {
	buf []byte
	off int
}

// NewReader returns a Reader positioned at the start of b.
func NewReader(b []byte) Reader { return Reader{buf: b} }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Len is the number of unread bytes.
func (r *Reader) Len() int { return len(r.buf) - r.off }

// Rest returns the unread bytes without consuming them.
func (r *Reader) Rest() []byte { return r.buf[r.off:] }

// Skip consumes n bytes.
func (r *Reader) Skip(n int) error {
	if n < 0 || r.Len() < n {
		return ErrShort
	}
	r.off += n
	return nil
}

// Bytes consumes and returns the next n bytes.
func (r *Reader) Bytes(n int) ([]byte, error) {
	if n < 0 || r.Len() < n {
		return nil, ErrShort
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b, nil
}

// Peek returns the next byte without consuming it.
func (r *Reader) Peek() (byte, error) {
	if r.Len() < 1 {
		return 0, ErrShort
	}
	return r.buf[r.off], nil
}

// Uint8 consumes one byte.
func (r *Reader) Uint8() (uint8, error) {
	if r.Len() < 1 {
		return 0, ErrShort
	}
	v := r.buf[r.off]
	r.off++
	return v, nil
}

// Uint16 consumes a little-endian uint16.
func (r *Reader) Uint16() (uint16, error) {
	if r.Len() < 2 {
		return 0, ErrShort
	}
	v := binary.LittleEndian.Uint16(r.buf[r.off:])
	r.off += 2
	return v, nil
}

// Uint32 consumes a little-endian uint32.
func (r *Reader) Uint32() (uint32, error) {
	if r.Len() < 4 {
		return 0, ErrShort
	}
	v := binary.LittleEndian.Uint32(r.buf[r.off:])
	r.off += 4
	return v, nil
}

// Int32 consumes a little-endian int32.
func (r *Reader) Int32() (int32, error) {
	v, err := r.Uint32()
	return int32(v), err
}

// Uint64 consumes a little-endian uint64.
func (r *Reader) Uint64() (uint64, error) {
	if r.Len() < 8 {
		return 0, ErrShort
	}
	v := binary.LittleEndian.Uint64(r.buf[r.off:])
	r.off += 8
	return v, nil
}

// Float32 consumes a little-endian IEEE 754 float32.
func (r *Reader) Float32() (float32, error) {
	v, err := r.Uint32()
	return math.Float32frombits(v), err
}

// CString consumes a NUL-terminated string and returns it without the NUL.
func (r *Reader) CString() ([]byte, error) {
	rest := r.buf[r.off:]
	for i, c := range rest {
		if c == 0 {
			s := rest[:i:i]
			r.off += i + 1
			return s, nil
		}
	}
	return nil, ErrNoTerminator
}

// AppendUint16 appends v little-endian.
func AppendUint16(b []byte, v uint16) []byte { return binary.LittleEndian.AppendUint16(b, v) }

// AppendUint32 appends v little-endian.
func AppendUint32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// AppendInt32 appends v little-endian.
func AppendInt32(b []byte, v int32) []byte { return binary.LittleEndian.AppendUint32(b, uint32(v)) }

// AppendUint64 appends v little-endian.
func AppendUint64(b []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(b, v) }

// AppendFloat32 appends v as a little-endian IEEE 754 float32.
func AppendFloat32(b []byte, v float32) []byte {
	return binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
}

// AppendCString appends s and a terminating NUL. A NUL inside s would end
// the string early on the wire, so callers that accept user data must
// reject or strip it first.
func AppendCString(b []byte, s []byte) []byte {
	b = append(b, s...)
	return append(b, 0)
}

// AppendString is AppendCString for a string.
func AppendString(b []byte, s string) []byte {
	b = append(b, s...)
	return append(b, 0)
}
