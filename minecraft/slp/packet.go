package slp

import (
	"encoding/binary"
	"unicode/utf8"
)

// Packet ids of the handshaking and status states (wiki.vg, "Server List
// Ping"). The client's status request and the server's status response
// share id 0, as do the handshake; ping and pong share id 1.
const (
	IDHandshake      = 0x00
	IDStatusRequest  = 0x00
	IDStatusResponse = 0x00
	IDPing           = 0x01
	IDPong           = 0x01
)

// The handshake's next states.
const (
	NextStatus   = 1
	NextLogin    = 2
	NextTransfer = 3 // since 1.20.5
)

// MaxHostLen is the longest server address a handshake carries, in
// characters, as the vanilla server reads it.
const MaxHostLen = 255

// Packet is one framed packet: `VarInt length | VarInt id | data`, where
// the length counts the id and the data.
type Packet struct {
	ID   int32
	Data []byte // the fields after the id, aliasing the input
}

// AppendPacket appends a packet of id with data, framed.
func AppendPacket(b []byte, id int32, data []byte) []byte {
	b = AppendVarInt(b, int32(VarIntLen(id)+len(data)))
	b = AppendVarInt(b, id)
	return append(b, data...)
}

// ParsePacket reads the packet framed at the start of b, whose length may
// be at most limit bytes, and returns it and the bytes it took. It fails
// with ErrTruncated when b ends inside the packet (more bytes may complete
// it); with ErrTooLarge, before looking further, when the length is beyond
// limit or negative.
func ParsePacket(b []byte, limit int) (p Packet, n int, err error) {
	l, n, err := ConsumeVarInt(b)
	if err != nil {
		return Packet{}, 0, parseErr("packet", 0, err)
	}
	if l < 0 || int(l) > limit {
		return Packet{}, 0, parseErr("packet", 0, detail(ErrTooLarge, "a packet of %d bytes (the limit is %d)", l, limit))
	}
	if l == 0 {
		return Packet{}, 0, parseErr("packet", n, detail(ErrMalformed, "an empty packet has no id"))
	}
	if len(b)-n < int(l) {
		return Packet{}, 0, parseErr("packet", len(b), ErrTruncated)
	}
	body := b[n : n+int(l) : n+int(l)]
	id, m, err := ConsumeVarInt(body)
	if err != nil {
		if err == ErrTruncated { // the length ends inside the id: not more data's fault
			err = detail(ErrMalformed, "the packet's id runs past its length")
		}
		return Packet{}, 0, parseErr("packet", n, err)
	}
	return Packet{ID: id, Data: body[m:]}, n + int(l), nil
}

// Handshake is the first packet of a connection, which names the state
// the client wants next.
type Handshake struct {
	// Protocol is the client's protocol version; -1 by convention when
	// the client only asks for the status.
	Protocol int32
	// Host is the address the client connected to, as it names it: the
	// host it was given, or the target of the SRV record it followed.
	// Virtual-host proxies route on it.
	Host string
	// Port is the port the client connected to.
	Port uint16
	// NextState is NextStatus, NextLogin or NextTransfer.
	NextState int32
}

// AppendBinary appends the handshake, framed. It fails when Host is longer
// than MaxHostLen characters or is not UTF-8.
func (h Handshake) AppendBinary(b []byte) ([]byte, error) {
	if !utf8.ValidString(h.Host) || utf8.RuneCountInString(h.Host) > MaxHostLen {
		return b, detail(ErrTooLarge, "a handshake host is at most %d characters of UTF-8", MaxHostLen)
	}
	n := VarIntLen(IDHandshake) + VarIntLen(h.Protocol) + VarIntLen(int32(len(h.Host))) + len(h.Host) + 2 + VarIntLen(h.NextState)
	b = AppendVarInt(b, int32(n))
	b = AppendVarInt(b, IDHandshake)
	b = AppendVarInt(b, h.Protocol)
	b = AppendString(b, h.Host)
	b = binary.BigEndian.AppendUint16(b, h.Port)
	return AppendVarInt(b, h.NextState), nil
}

// ParseHandshake reads a handshake's fields: the Data of a packet whose
// id is IDHandshake.
func ParseHandshake(data []byte) (Handshake, error) {
	var h Handshake
	var off int
	v, n, err := ConsumeVarInt(data)
	if err != nil {
		return h, parseErr("handshake", off, err)
	}
	h.Protocol, off = v, off+n
	host, n, err := consumeString(data[off:], MaxHostLen*utf8.UTFMax)
	if err != nil {
		return h, parseErr("handshake", off, err)
	}
	if !utf8.Valid(host) || utf8.RuneCount(host) > MaxHostLen {
		return h, parseErr("handshake", off, detail(ErrMalformed, "the host is not %d characters of UTF-8 or fewer", MaxHostLen))
	}
	h.Host, off = string(host), off+n
	if len(data)-off < 2 {
		return h, parseErr("handshake", off, ErrTruncated)
	}
	h.Port, off = binary.BigEndian.Uint16(data[off:]), off+2
	if h.NextState, n, err = ConsumeVarInt(data[off:]); err != nil {
		return h, parseErr("handshake", off, err)
	}
	if off+n != len(data) {
		return h, parseErr("handshake", off+n, detail(ErrMalformed, "%d bytes after the handshake", len(data)-off-n))
	}
	return h, nil
}

// AppendStatusRequest appends the status request: 01 00.
func AppendStatusRequest(b []byte) []byte { return append(b, 1, IDStatusRequest) }

// AppendPing appends a ping carrying payload, which the server echoes in
// its pong.
func AppendPing(b []byte, payload int64) []byte {
	b = append(b, 9, IDPing)
	return binary.BigEndian.AppendUint64(b, uint64(payload))
}

// AppendPong appends the pong that answers a ping carrying payload: the
// same bytes with the pong's id, which is the ping's.
func AppendPong(b []byte, payload int64) []byte { return AppendPing(b, payload) }

// ParsePing reads the payload of a ping or a pong: the Data of a packet
// whose id is IDPing or IDPong, exactly 8 bytes.
func ParsePing(data []byte) (int64, error) {
	if len(data) < 8 {
		return 0, parseErr("pong", len(data), ErrTruncated)
	}
	if len(data) > 8 {
		return 0, parseErr("pong", 8, detail(ErrMalformed, "%d bytes after the payload", len(data)-8))
	}
	return int64(binary.BigEndian.Uint64(data)), nil
}

// StatusResponse is the server's answer to a status request: a String of
// JSON, and whatever else the packet carries after it. The Better
// Compatibility Checker mod appends a second String there; it is kept raw
// in Trailer, never read as part of the JSON.
type StatusResponse struct {
	JSON    []byte // aliasing the input
	Trailer []byte // the packet's bytes after the JSON string, aliasing the input; nil when none
}

// AppendStatusResponse appends a status response carrying json and, when
// not empty, the raw trailer after it, framed.
func AppendStatusResponse(b []byte, json, trailer []byte) []byte {
	n := VarIntLen(IDStatusResponse) + VarIntLen(int32(len(json))) + len(json) + len(trailer)
	b = AppendVarInt(b, int32(n))
	b = AppendVarInt(b, IDStatusResponse)
	b = AppendVarInt(b, int32(len(json)))
	b = append(b, json...)
	return append(b, trailer...)
}

// ParseStatusResponse reads a status response's fields: the Data of a
// packet whose id is IDStatusResponse. The JSON string may be at most
// limit bytes.
func ParseStatusResponse(data []byte, limit int) (StatusResponse, error) {
	json, n, err := consumeString(data, limit)
	if err != nil {
		return StatusResponse{}, parseErr("status", 0, err)
	}
	r := StatusResponse{JSON: json}
	if n < len(data) {
		r.Trailer = data[n:]
	}
	return r, nil
}
