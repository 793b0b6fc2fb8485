package a2s

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/internal/wire"
)

// Packet headers (the first four bytes of every datagram, little-endian).
const (
	HeaderSimple uint32 = 0xFFFFFFFF // a whole message in one datagram
	HeaderSplit  uint32 = 0xFFFFFFFE // one fragment of a multi-packet reply
)

// Message type bytes, the byte after the simple header.
const (
	TypeInfoRequest            byte = 'T' // A2S_INFO
	TypeInfoReply              byte = 'I' // A2S_INFO reply (Source)
	TypeInfoReplyGoldSource    byte = 'm' // obsolete GoldSource A2S_INFO reply
	TypePlayerRequest          byte = 'U' // A2S_PLAYER
	TypePlayerReply            byte = 'D' // A2S_PLAYER reply
	TypeRulesRequest           byte = 'V' // A2S_RULES
	TypeRulesReply             byte = 'E' // A2S_RULES reply
	TypePingRequest            byte = 'i' // A2A_PING (deprecated)
	TypePingReply              byte = 'j' // A2A_PING reply
	TypeChallengeReply         byte = 'A' // S2C_CHALLENGE
	TypeChallengeRequestLegacy byte = 'W' // A2S_SERVERQUERY_GETCHALLENGE (deprecated)
	TypeBannedReply            byte = 'l' // refusal of GoldSource non-Steam servers (not in the spec)
)

// AskChallenge is the challenge value (-1) a client sends in A2S_PLAYER and
// A2S_RULES requests to ask the server for a challenge number.
const AskChallenge uint32 = 0xFFFFFFFF

// infoQuery is the fixed payload of an A2S_INFO request.
const infoQuery = "Source Engine Query"

// MaxPacketSize is the largest UDP payload; parsers accept unsplit
// datagrams of any size up to it (Rust and Unreal games exceed 1400 bytes).
const MaxPacketSize = 65535

// ParseHeader returns the header and, for a simple packet, the message type
// byte. For a split fragment typ is 0: call [ParseFragment]. It lets a
// caller route a datagram without parsing it.
func ParseHeader(b []byte) (header uint32, typ byte, err error) {
	r := wire.NewReader(b)
	header, err = r.Uint32()
	if err != nil {
		return 0, 0, parseErr("packet", 0, err)
	}
	switch header {
	case HeaderSplit:
		return header, 0, nil
	case HeaderSimple:
		typ, err = r.Uint8()
		if err != nil {
			return 0, 0, parseErr("packet", 4, err)
		}
		return header, typ, nil
	}
	return 0, 0, parseErr("packet", 0, ErrBadHeader)
}

// openSimple checks the simple header and the type byte against the allowed
// types and returns a reader positioned after the type byte.
func openSimple(b []byte, packet string, allowed string) (wire.Reader, byte, error) {
	r := wire.NewReader(b)
	h, err := r.Uint32()
	if err != nil {
		return r, 0, parseErr(packet, 0, err)
	}
	if h != HeaderSimple {
		return r, 0, parseErr(packet, 0, ErrBadHeader)
	}
	t, err := r.Uint8()
	if err != nil {
		return r, 0, parseErr(packet, 4, err)
	}
	if strings.IndexByte(allowed, t) < 0 {
		return r, 0, parseErr(packet, 4, fmt.Errorf("%w 0x%02x", ErrUnexpectedType, t))
	}
	return r, t, nil
}

// appendText appends t NUL-terminated, refusing embedded NULs.
func appendText(b []byte, t []byte) ([]byte, error) {
	if bytes.IndexByte(t, 0) >= 0 {
		return b, ErrNULInText
	}
	return wire.AppendCString(b, t), nil
}

// decoder is a wire.Reader with a sticky error: after the first failure
// every read returns zero and the error keeps the failing field's offset.
type decoder struct {
	r      wire.Reader
	packet string
	err    error
}

func (d *decoder) fail(err error) {
	if err != nil && d.err == nil {
		d.err = parseErr(d.packet, d.r.Offset(), err)
	}
}

// The read methods below are spelled out rather than built on a generic
// helper taking a method value: through a func value the reader escapes
// and every parse pays one more allocation.

func (d *decoder) u8() uint8 {
	if d.err != nil {
		return 0
	}
	v, err := d.r.Uint8()
	d.fail(err)
	return v
}

func (d *decoder) u16() uint16 {
	if d.err != nil {
		return 0
	}
	v, err := d.r.Uint16()
	d.fail(err)
	return v
}

func (d *decoder) u32() uint32 {
	if d.err != nil {
		return 0
	}
	v, err := d.r.Uint32()
	d.fail(err)
	return v
}

func (d *decoder) u64() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := d.r.Uint64()
	d.fail(err)
	return v
}

func (d *decoder) text() Text {
	if d.err != nil {
		return nil
	}
	v, err := d.r.CString()
	d.fail(err)
	return v
}

// encoder appends to b with a sticky error.
type encoder struct {
	b   []byte
	err error
}

func (e *encoder) u8(v uint8)   { e.b = append(e.b, v) }
func (e *encoder) u16(v uint16) { e.b = wire.AppendUint16(e.b, v) }
func (e *encoder) u32(v uint32) { e.b = wire.AppendUint32(e.b, v) }
func (e *encoder) u64(v uint64) { e.b = wire.AppendUint64(e.b, v) }

func (e *encoder) text(t Text) {
	if e.err != nil {
		return
	}
	e.b, e.err = appendText(e.b, t)
}

// result returns the appended bytes, or orig and the error.
func (e *encoder) result(orig []byte) ([]byte, error) {
	if e.err != nil {
		return orig, e.err
	}
	return e.b, nil
}

// newBodyReader returns a reader over a simple packet positioned after the
// header and type byte (already validated by openSimple).
func newBodyReader(b []byte) wire.Reader {
	r := wire.NewReader(b)
	_ = r.Skip(5)
	return r
}

// hasHeader reports whether b is a whole message: the 0xFFFFFFFF header
// and a type byte.
func hasHeader(b []byte) bool {
	return len(b) >= 5 && b[0] == 0xFF && b[1] == 0xFF && b[2] == 0xFF && b[3] == 0xFF
}
