package mcquery

import (
	"encoding/binary"
	"strconv"
)

// The packet types (wiki.vg, "Query").
const (
	TypeStat      byte = 0x00
	TypeHandshake byte = 0x09
)

// Request sizes: the vanilla server answers a stat request of exactly
// FullStatRequestLen bytes with the full stat, and any other with the
// basic one.
const (
	HandshakeRequestLen = 7
	BasicStatRequestLen = 11
	FullStatRequestLen  = 15
)

// SessionMask keeps every byte of a session id below 0x80 (wiki.vg masks
// with 0x0F0F0F0F): the vanilla server echoes the id through a UTF-8
// string, and bytes above 0x7F come back as U+FFFD.
const SessionMask = 0x0F0F0F0F

// requestMagic starts every request.
var requestMagic = [2]byte{0xFE, 0xFD}

// Request is a client's datagram.
type Request struct {
	Type      byte // TypeHandshake or TypeStat
	SessionID uint32
	Token     int32 // the challenge token, for a stat
	Full      bool  // a full stat: padded to 15 bytes
}

// AppendBinary appends the request: FE FD, the type, the session id, and
// for a stat the token (big-endian two's complement) and, for a full one,
// four bytes of padding.
func (r Request) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, requestMagic[0], requestMagic[1], r.Type)
	b = binary.BigEndian.AppendUint32(b, r.SessionID)
	switch r.Type {
	case TypeHandshake:
		return b, nil
	case TypeStat:
		b = binary.BigEndian.AppendUint32(b, uint32(r.Token))
		if r.Full {
			b = append(b, 0, 0, 0, 0)
		}
		return b, nil
	}
	return b, detail(ErrUnexpectedType, "request type 0x%02x", r.Type)
}

// ParseRequest reads a request as the vanilla server does: a stat request
// is full when the datagram is exactly 15 bytes long.
func ParseRequest(b []byte) (Request, error) {
	if len(b) < 3 {
		return Request{}, parseErr("request", len(b), ErrTruncated)
	}
	if b[0] != requestMagic[0] || b[1] != requestMagic[1] {
		return Request{}, parseErr("request", 0, ErrBadHeader)
	}
	r := Request{Type: b[2]}
	switch r.Type {
	case TypeHandshake:
		if len(b) < HandshakeRequestLen {
			return r, parseErr("request", len(b), ErrTruncated)
		}
	case TypeStat:
		if len(b) < BasicStatRequestLen {
			return r, parseErr("request", len(b), ErrTruncated)
		}
		r.Token = int32(binary.BigEndian.Uint32(b[7:]))
		r.Full = len(b) == FullStatRequestLen
	default:
		return r, parseErr("request", 2, detail(ErrUnexpectedType, "type 0x%02x", r.Type))
	}
	r.SessionID = binary.BigEndian.Uint32(b[3:])
	return r, nil
}

// AppendHandshakeReply appends the reply to a handshake: the type, the
// session id and the token in decimal ASCII with a NUL.
func AppendHandshakeReply(b []byte, sessionID uint32, token int32) []byte {
	b = append(b, TypeHandshake)
	b = binary.BigEndian.AppendUint32(b, sessionID)
	b = strconv.AppendInt(b, int64(token), 10)
	return append(b, 0)
}

// ParseHandshakeReply reads the reply to a handshake. The token is read
// as a 64-bit number and kept as the int32 of its low 32 bits: servers
// print it signed (PocketMine, Nukkit: negative) or unsigned.
func ParseHandshakeReply(b []byte) (sessionID uint32, token int32, err error) {
	sid, err := replyHeader(b, TypeHandshake, "handshake")
	if err != nil {
		return 0, 0, err
	}
	end := -1
	for i := 5; i < len(b); i++ {
		if b[i] == 0 {
			end = i
			break
		}
	}
	if end < 0 {
		return sid, 0, parseErr("handshake", len(b), detail(ErrTruncated, "the token has no NUL"))
	}
	v, perr := strconv.ParseInt(string(b[5:end]), 10, 64)
	if perr != nil || v < -1<<31 || v > 1<<32-1 {
		return sid, 0, parseErr("handshake", 5, detail(ErrMalformed, "token %q is not a 32-bit number", b[5:end]))
	}
	return sid, int32(v), nil
}

// replyHeader checks a reply's type and returns its session id.
func replyHeader(b []byte, typ byte, packet string) (uint32, error) {
	if len(b) < 5 {
		return 0, parseErr(packet, len(b), ErrTruncated)
	}
	if b[0] != typ {
		return 0, parseErr(packet, 0, detail(ErrUnexpectedType, "type 0x%02x, want 0x%02x", b[0], typ))
	}
	return binary.BigEndian.Uint32(b[1:]), nil
}
