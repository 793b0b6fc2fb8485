package ogp

import (
	"encoding/binary"
	"fmt"
)

// Type is the packet type in the header (spec 3.1).
type Type uint8

// Packet types.
const (
	TypePing         Type = 0x00 // Ping
	TypeDefault      Type = 0x01 // Default query v1
	TypeRcon         Type = 0x02 // (Rcon), reserved; the Server answers error 1
	TypeMasterUplink Type = 0x03 // Master Server Uplink (answer only)
	TypeError        Type = 0xFF // Error (answer only)
)

// String returns the spec's name, e.g. "default query".
func (t Type) String() string {
	switch t {
	case TypePing:
		return "ping"
	case TypeDefault:
		return "default query"
	case TypeRcon:
		return "rcon"
	case TypeMasterUplink:
		return "master server uplink"
	case TypeError:
		return "error"
	}
	return fmt.Sprintf("Type(%#02x)", uint8(t))
}

// PrefixLen is the length of the FF FF FF FF "OGP\0" prefix that starts
// every datagram; the HeadSize byte follows it.
const PrefixLen = 8

var prefix = [PrefixLen]byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0}

// Is reports whether b starts with the OGP prefix FF FF FF FF "OGP\0", so
// one UDP socket can serve OGP beside other protocols (A2S datagrams start
// with FF FF FF FF too, but never with "OGP\0" after it).
func Is(b []byte) bool { return len(b) >= PrefixLen && [PrefixLen]byte(b[:PrefixLen]) == prefix }

// Split limits (spec 3.1 "MaxBytesPerPacket"): the v0.91 range is
// 500..1500, default 1400.
const (
	MinPacketSize     = 500
	MaxPacketSize     = 1500
	DefaultPacketSize = 1400
)

// Header is the OGP header (spec 3.1). The field a flag announces is only
// meaningful (and only encoded) when the flag is set: Challenge with
// [FlagChallenge], RequestID with [FlagRequestID], and with [FlagSplit]
// MaxBytesPerPacket in a query or SplitCount/SplitNo in an answer
// ([FlagAnswer]).
type Header struct {
	Type              Type
	Flags             HeadFlags
	Challenge         uint32 // INT32 on the wire; opaque
	RequestID         uint32 // INT32 on the wire; opaque
	MaxBytesPerPacket uint16 // query only
	SplitCount        uint8  // answer only; INT8 in v0.91, read unsigned (up to 255)
	SplitNo           uint8  // answer only; 0-based
}

// HeadSize is the value of the HeadSize byte: the bytes from HeadSize
// itself to the first body byte (see the package doc).
func (h *Header) HeadSize() int {
	n := 2 + bitArrayLen(uint64(h.Flags))
	if h.Flags&FlagChallenge != 0 {
		n += 4
	}
	if h.Flags&FlagRequestID != 0 {
		n += 4
	}
	if h.Flags&FlagSplit != 0 {
		n += 2 // MaxBytesPerPacket, or SplitPacketCount + SplitPacketNo
	}
	return n
}

// Len is the encoded length, prefix included.
func (h *Header) Len() int { return PrefixLen + h.HeadSize() }

// AppendBinary appends the prefix and the header. It never fails; the
// error is there to satisfy encoding.BinaryAppender.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, prefix[:]...)
	b = append(b, byte(h.HeadSize()), byte(h.Type))
	e := encoder{b: b}
	e.bitArray(uint64(h.Flags))
	if h.Flags&FlagChallenge != 0 {
		e.u32(h.Challenge)
	}
	if h.Flags&FlagRequestID != 0 {
		e.u32(h.RequestID)
	}
	if h.Flags&FlagSplit != 0 {
		if h.Flags&FlagAnswer != 0 {
			e.u8(h.SplitCount)
			e.u8(h.SplitNo)
		} else {
			e.u16(h.MaxBytesPerPacket)
		}
	}
	return e.b, nil
}

// ParseHeader parses the header of datagram b and returns it with the
// body, which starts at 8+HeadSize and aliases b. Header bytes beyond the
// known fields are skipped, as HeadSize allows.
func ParseHeader(b []byte) (Header, []byte, error) {
	var h Header
	if !Is(b) {
		return h, nil, &ParseError{Section: "header", Err: ErrNotOGP}
	}
	if len(b) < PrefixLen+1 {
		return h, nil, &ParseError{Section: "header", Offset: len(b), Err: ErrTruncated}
	}
	size := int(b[PrefixLen])
	if size < 3 || PrefixLen+size > len(b) {
		return h, nil, &ParseError{Section: "header", Offset: PrefixLen, Err: ErrBadHeadSize}
	}
	d := newDecoder(b[PrefixLen+1:PrefixLen+size], V091, "header")
	h.Type = Type(d.u8())
	h.Flags = HeadFlags(d.bitArray())
	if h.Flags&FlagChallenge != 0 {
		h.Challenge = d.u32()
	}
	if h.Flags&FlagRequestID != 0 {
		h.RequestID = d.u32()
	}
	if h.Flags&FlagSplit != 0 {
		if h.Flags&FlagAnswer != 0 {
			h.SplitCount = d.u8()
			h.SplitNo = d.u8()
		} else {
			h.MaxBytesPerPacket = d.u16()
		}
	}
	if d.err != nil {
		err := d.err.Err
		if err == ErrTruncated {
			err = ErrBadHeadSize
		}
		return h, nil, &ParseError{Section: "header", Offset: PrefixLen + 1 + d.err.Offset, Err: err}
	}
	return h, b[PrefixLen+size:], nil
}

// ErrorAnswer is the body of an error answer (spec 3.2).
type ErrorAnswer struct {
	Code ErrorCode
	// Request is, for ErrorInvalidChallenge, the copy of the query the
	// server sends back: a complete query datagram holding the new
	// challenge (see the package doc). Nil otherwise or when absent.
	Request []byte
}

// AppendBinary appends the error body.
func (e *ErrorAnswer) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, byte(e.Code))
	if e.Code == ErrorInvalidChallenge {
		b = append(b, e.Request...)
	}
	return b, nil
}

// ParseErrorAnswer parses an error body. Request aliases body. Bytes after
// the ErrorValue of codes other than 3 are ignored.
func ParseErrorAnswer(body []byte) (ErrorAnswer, error) {
	if len(body) < 1 {
		return ErrorAnswer{}, &ParseError{Section: "error", Err: ErrTruncated}
	}
	e := ErrorAnswer{Code: ErrorCode(body[0])}
	if e.Code == ErrorInvalidChallenge && len(body) > 1 {
		e.Request = body[1:]
	}
	return e, nil
}

// appendRequestCopy appends to b the copy of query datagram req that an
// error 3 answer carries: req itself, with the challenge flag set and the
// challenge field holding challenge (inserted after the flags when req
// had none, HeadSize growing by 4). Header bytes beyond the known fields
// and the body are kept as they were, so the copy is at most 4 bytes
// longer than req.
func appendRequestCopy(b, req []byte, challenge uint32) ([]byte, error) {
	h, _, err := ParseHeader(req)
	if err != nil {
		return b, err
	}
	// The flags start after the prefix, HeadSize and Type; ParseHeader
	// found their last byte (bit 7 clear) inside the header.
	at := PrefixLen + 2
	for at < len(req) && req[at]&0x80 != 0 {
		at++
	}
	at++
	start := len(b)
	if h.Flags&FlagChallenge != 0 {
		b = append(b, req...)
		binary.LittleEndian.PutUint32(b[start+at:], challenge)
		return b, nil
	}
	size := int(req[PrefixLen]) + 4
	if size > 0xFF {
		return b, fmt.Errorf("%w: HeadSize %d leaves no room for a challenge", ErrTooLarge, req[PrefixLen])
	}
	b = append(b, req[:at]...)
	b[start+PrefixLen] = byte(size)
	b[start+PrefixLen+2] |= byte(FlagChallenge) // bit 0.1 is in the first flags byte
	b = binary.LittleEndian.AppendUint32(b, challenge)
	return append(b, req[at:]...), nil
}

// Challenge returns the new challenge held by the request copy of an
// error 3 answer. ok is false when there is no usable copy: it must be an
// OGP query (bAnswer clear, or set by a server following the v0.05 text)
// with the challenge flag.
func (e *ErrorAnswer) Challenge() (challenge uint32, ok bool) {
	if e.Code != ErrorInvalidChallenge || e.Request == nil {
		return 0, false
	}
	h, _, err := ParseHeader(e.Request)
	if err != nil || h.Type == TypeError || h.Flags&FlagChallenge == 0 {
		return 0, false
	}
	return h.Challenge, true
}

// MasterUplink is the body of a Master Server Uplink answer (spec 3.3).
type MasterUplink struct {
	GameID uint16
}

// AppendBinary appends the body.
func (m *MasterUplink) AppendBinary(b []byte) ([]byte, error) {
	e := encoder{b: b}
	e.u16(m.GameID)
	return e.b, nil
}

// ParseMasterUplink parses a Master Server Uplink body; trailing bytes
// are ignored.
func ParseMasterUplink(body []byte) (MasterUplink, error) {
	d := newDecoder(body, V091, "master uplink")
	m := MasterUplink{GameID: d.u16()}
	return m, d.error()
}
