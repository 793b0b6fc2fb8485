package battleye

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// PacketType is the byte after the header's 0xFF: what a datagram is
// (BERConProtocol.txt, "Packet types").
type PacketType byte

// The packet types.
const (
	// TypeLogin: the client's password, or the server's verdict (1 ok,
	// 0 wrong).
	TypeLogin PacketType = 0x00
	// TypeCommand: a command with its sequence number, or its answer
	// (whole or one part). An empty command is a keep-alive.
	TypeCommand PacketType = 0x01
	// TypeMessage: a server message with its own sequence number, or the
	// client's acknowledgement of it.
	TypeMessage PacketType = 0x02
)

func (t PacketType) String() string {
	switch t {
	case TypeLogin:
		return "login"
	case TypeCommand:
		return "command"
	case TypeMessage:
		return "message"
	}
	return fmt.Sprintf("type 0x%02x", byte(t))
}

// HeaderSize is the size of a packet up to its type: 'B' 'E', the CRC32
// and 0xFF.
const HeaderSize = 7

// MaxParts is the most parts one multi-part answer can have: the count is
// one byte.
const MaxParts = 255

// Packet is one BattlEye RCon datagram. Which fields mean something
// depends on Type and on the direction:
//
//   - TypeLogin: Data is the password (client) or one byte, 1 for a
//     successful login and 0 for a wrong password (server).
//   - TypeCommand: Seq is the command's sequence number; Data the command
//     (client) or its answer (server). A server splits a long answer into
//     parts: Total > 0 then, and Index is the part's place, from 0.
//   - TypeMessage: Seq is the message's sequence number; Data the message
//     (server), empty in the client's acknowledgement.
type Packet struct {
	Type  PacketType
	Seq   byte
	Total byte // parts of a multi-part answer; 0 for a whole one
	Index byte // this part's index, below Total
	Data  []byte
}

// Len is the size of the encoded packet.
func (p Packet) Len() int {
	n := HeaderSize + 1 + len(p.Data)
	if p.Type != TypeLogin {
		n++
	}
	if p.Type == TypeCommand && p.Total > 0 {
		n += 3
	}
	return n
}

// AppendBinary appends the encoded packet to b: 'B' 'E', the CRC32 (IEEE,
// little-endian) of everything from the 0xFF on, 0xFF, and the payload.
// It fails for a multi-part header whose Index is not below Total.
func (p Packet) AppendBinary(b []byte) ([]byte, error) {
	if p.Total > 0 && (p.Type != TypeCommand || p.Index >= p.Total) {
		return b, fmt.Errorf("battleye: part %d of %d: %w", p.Index, p.Total, ErrBadPart)
	}
	start := len(b)
	b = append(b, 'B', 'E', 0, 0, 0, 0, 0xFF, byte(p.Type))
	if p.Type != TypeLogin {
		b = append(b, p.Seq)
	}
	if p.Type == TypeCommand && p.Total > 0 {
		b = append(b, 0x00, p.Total, p.Index)
	}
	b = append(b, p.Data...)
	binary.LittleEndian.PutUint32(b[start+2:], crc32.ChecksumIEEE(b[start+6:]))
	return b, nil
}

// ParsePacket decodes one datagram. Data aliases b. A datagram that does
// not start with "BE" fails with [ErrNotBattlEye], one whose checksum is
// wrong with [ErrBadCRC], one cut short with [ErrTruncated], all inside a
// [*ParseError].
//
// A command packet whose payload starts with a NUL and holds at least
// three bytes is a part of a multi-part answer (commands never hold a
// NUL, and a text answer never starts with one).
func ParsePacket(b []byte) (Packet, error) {
	if len(b) < 2 || b[0] != 'B' || b[1] != 'E' {
		return Packet{}, &ParseError{Offset: 0, Err: ErrNotBattlEye}
	}
	if len(b) < HeaderSize+1 {
		return Packet{}, &ParseError{Offset: len(b), Err: ErrTruncated}
	}
	if want, got := binary.LittleEndian.Uint32(b[2:]), crc32.ChecksumIEEE(b[6:]); want != got {
		return Packet{}, &ParseError{Offset: 2, Err: &CRCError{Want: want, Got: got}}
	}
	if b[6] != 0xFF {
		return Packet{}, &ParseError{Offset: 6, Err: ErrNotBattlEye}
	}
	p := Packet{Type: PacketType(b[7])}
	rest := b[8:]
	switch p.Type {
	case TypeLogin:
	case TypeCommand, TypeMessage:
		if len(rest) < 1 {
			return Packet{}, &ParseError{Offset: len(b), Err: ErrTruncated}
		}
		p.Seq, rest = rest[0], rest[1:]
		if p.Type == TypeCommand && len(rest) > 0 && rest[0] == 0 {
			if len(rest) < 3 {
				return Packet{}, &ParseError{Offset: len(b), Err: ErrTruncated}
			}
			p.Total, p.Index, rest = rest[1], rest[2], rest[3:]
			if p.Total == 0 || p.Index >= p.Total {
				return Packet{}, &ParseError{Offset: 10, Err: fmt.Errorf("part %d of %d: %w", p.Index, p.Total, ErrBadPart)}
			}
		}
	default:
		return Packet{}, &ParseError{Offset: 7, Err: fmt.Errorf("%v: %w", p.Type, ErrUnknownType)}
	}
	if len(rest) > 0 {
		p.Data = rest
	}
	return p, nil
}

// Is reports whether b looks like a BattlEye RCon datagram: "BE", room for
// the header, and 0xFF at its place. It checks no CRC; a demultiplexer
// uses it to tell BattlEye from other traffic on one port.
func Is(b []byte) bool {
	return len(b) >= HeaderSize+1 && b[0] == 'B' && b[1] == 'E' && b[6] == 0xFF
}

// Codec errors, inside a [*ParseError]; test them with [errors.Is].
var (
	// ErrNotBattlEye: the datagram does not start with "BE" or lacks the
	// 0xFF after the checksum.
	ErrNotBattlEye = errors.New("battleye: not a BattlEye RCon packet")
	// ErrBadCRC: the checksum does not match the payload. A [*CRCError]
	// says both values.
	ErrBadCRC = errors.New("battleye: bad CRC32")
	// ErrTruncated: the datagram ends inside its header.
	ErrTruncated = errors.New("battleye: truncated packet")
	// ErrUnknownType: the type byte is none of login, command, message.
	ErrUnknownType = errors.New("battleye: unknown packet type")
	// ErrBadPart: a multi-part header whose index is not below its
	// count, or whose count is 0.
	ErrBadPart = errors.New("battleye: bad multi-part header")
)

// CRCError reports a checksum mismatch. It matches [ErrBadCRC].
type CRCError struct {
	Want uint32 // the checksum the datagram carries
	Got  uint32 // the checksum of its payload
}

func (e *CRCError) Error() string {
	return fmt.Sprintf("battleye: CRC32 %08x in the header, %08x computed", e.Want, e.Got)
}

// Unwrap returns ErrBadCRC.
func (e *CRCError) Unwrap() error { return ErrBadCRC }

// ParseError describes malformed input: a datagram, or a row of a
// command's answer. Its message is
// "battleye: parse <what> at offset N: <cause>".
type ParseError struct {
	What   string // "packet" (when empty), "players", "bans", "admins"
	Offset int    // from the start of the datagram or the answer
	Err    error
}

func (e *ParseError) Error() string {
	msg := e.Err.Error()
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		msg = msg[len(prefix):]
	}
	what := e.What
	if what == "" {
		what = "packet"
	}
	return fmt.Sprintf("battleye: parse %s at offset %d: %s", what, e.Offset, msg)
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

const prefix = "battleye: "
