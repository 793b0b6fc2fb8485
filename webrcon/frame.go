package webrcon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Opcode is a WebSocket frame's opcode (RFC 6455 §5.2).
type Opcode byte

// The opcodes.
const (
	OpContinuation Opcode = 0x0
	OpText         Opcode = 0x1
	OpBinary       Opcode = 0x2
	OpClose        Opcode = 0x8
	OpPing         Opcode = 0x9
	OpPong         Opcode = 0xA
)

func (o Opcode) String() string {
	switch o {
	case OpContinuation:
		return "continuation"
	case OpText:
		return "text"
	case OpBinary:
		return "binary"
	case OpClose:
		return "close"
	case OpPing:
		return "ping"
	case OpPong:
		return "pong"
	}
	return fmt.Sprintf("opcode 0x%x", byte(o))
}

// control reports whether o is a control frame's opcode (§5.5).
func (o Opcode) control() bool { return o >= OpClose }

// maxControlPayload is the longest payload of a control frame (§5.5).
const maxControlPayload = 125

// Frame is one WebSocket frame. Extensions are not negotiated, so the RSV
// bits are always zero.
type Frame struct {
	Fin     bool
	Op      Opcode
	Masked  bool    // client-to-server frames are masked (§5.3)
	Key     [4]byte // the masking key, when Masked
	Payload []byte  // unmasked
}

// AppendBinary appends the frame to b, masking its payload with Key when
// Masked (§5.2). A control frame must be final and at most 125 bytes.
func (f Frame) AppendBinary(b []byte) ([]byte, error) {
	if f.Op.control() && (!f.Fin || len(f.Payload) > maxControlPayload) {
		return b, &FrameError{Err: ErrBadControlFrame}
	}
	b0 := byte(f.Op) & 0x0F
	if f.Fin {
		b0 |= 0x80
	}
	var mask byte
	if f.Masked {
		mask = 0x80
	}
	n := len(f.Payload)
	switch {
	case n <= 125:
		b = append(b, b0, mask|byte(n))
	case n <= 0xFFFF:
		b = append(b, b0, mask|126)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
	default:
		b = append(b, b0, mask|127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	if !f.Masked {
		return append(b, f.Payload...), nil
	}
	b = append(b, f.Key[:]...)
	start := len(b)
	b = append(b, f.Payload...)
	maskBytes(b[start:], f.Key)
	return b, nil
}

// maskBytes masks (or unmasks) b with key (RFC 6455 §5.3), eight bytes
// at a time.
func maskBytes(b []byte, key [4]byte) {
	k := uint64(binary.LittleEndian.Uint32(key[:]))
	k |= k << 32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k)
	}
	for ; i < len(b); i++ {
		b[i] ^= key[i&3]
	}
}

// ReadFrame reads one frame from r. A payload longer than max is refused
// before it is read or allocated ([ErrFrameTooLarge]); so are RSV bits
// (no extension is negotiated), unknown opcodes and control frames that
// are fragmented or longer than 125 bytes. Input that ends inside a frame
// is io.ErrUnexpectedEOF; input that ends before one is io.EOF.
func ReadFrame(r io.Reader, max int) (Frame, error) {
	var h [14]byte
	if _, err := io.ReadFull(r, h[:2]); err != nil {
		return Frame{}, err
	}
	f := Frame{Fin: h[0]&0x80 != 0, Op: Opcode(h[0] & 0x0F), Masked: h[1]&0x80 != 0}
	if h[0]&0x70 != 0 {
		return Frame{}, &FrameError{Err: ErrReservedBits}
	}
	switch f.Op {
	case OpContinuation, OpText, OpBinary, OpClose, OpPing, OpPong:
	default:
		return Frame{}, &FrameError{Err: fmt.Errorf("%v: %w", f.Op, ErrUnknownOpcode)}
	}
	n := uint64(h[1] & 0x7F)
	switch n {
	case 126:
		if _, err := io.ReadFull(r, h[2:4]); err != nil {
			return Frame{}, unexpected(err)
		}
		n = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		if _, err := io.ReadFull(r, h[2:10]); err != nil {
			return Frame{}, unexpected(err)
		}
		n = binary.BigEndian.Uint64(h[2:10])
	}
	if f.Op.control() && (!f.Fin || n > maxControlPayload) {
		return Frame{}, &FrameError{Err: ErrBadControlFrame}
	}
	if n > uint64(max) {
		return Frame{}, &FrameError{Err: &SizeError{Size: n, Max: max}}
	}
	if f.Masked {
		if _, err := io.ReadFull(r, f.Key[:]); err != nil {
			return Frame{}, unexpected(err)
		}
	}
	f.Payload = make([]byte, n)
	if _, err := io.ReadFull(r, f.Payload); err != nil {
		return Frame{}, unexpected(err)
	}
	if f.Masked {
		maskBytes(f.Payload, f.Key)
	}
	return f, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// closeFrame is what Rust's WebRCON writes in place of the HTTP answer to
// an upgrade with a wrong password: a close frame, code 1000 (§7).
var closeFrame = []byte{0x88, 0x02, 0x03, 0xE8}

// Framing errors, inside a [*FrameError]; test them with errors.Is.
var (
	ErrReservedBits    = errors.New("webrcon: RSV bits set (no extension negotiated)")
	ErrUnknownOpcode   = errors.New("webrcon: unknown opcode")
	ErrBadControlFrame = errors.New("webrcon: control frame fragmented or over 125 bytes")
	ErrFrameTooLarge   = errors.New("webrcon: frame too large")
	// ErrMessageTooLarge: a message's frames add up to more than the
	// limit in force.
	ErrMessageTooLarge = errors.New("webrcon: message too large")
)

// FrameError is a frame that breaks RFC 6455 or gsq's limits. Its message
// is "webrcon: bad frame: <cause>".
type FrameError struct{ Err error }

func (e *FrameError) Error() string {
	msg := e.Err.Error()
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	return "webrcon: bad frame: " + msg
}

// Unwrap returns the cause.
func (e *FrameError) Unwrap() error { return e.Err }

const prefix = "webrcon: "

// SizeError reports a frame or message over the limit. It matches
// [ErrFrameTooLarge].
type SizeError struct {
	Size uint64
	Max  int
}

func (e *SizeError) Error() string {
	return fmt.Sprintf("webrcon: %d bytes, above the limit of %d", e.Size, e.Max)
}

// Unwrap returns ErrFrameTooLarge.
func (e *SizeError) Unwrap() error { return ErrFrameTooLarge }

// Is reports whether b, the first bytes a TCP server sent back, come from
// a WebSocket server such as Rust's WebRCON: an HTTP status line, or the
// close frame Rust writes in place of one. A client of another protocol
// (Source RCON) that reads such bytes can tell its user to use WebRCON.
func Is(b []byte) bool {
	return len(b) >= 2 && b[0] == closeFrame[0] && b[1] <= maxControlPayload ||
		len(b) >= 5 && string(b[:5]) == "HTTP/"
}
