package satisfactory

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/gsq-project/gsq/internal/rawtext"
)

// Wire constants (the field notes, section 2.1; gamedig's
// satisfactory.js).
const (
	// Magic is the first two bytes of every message: 0xF6D5,
	// little-endian.
	Magic = 0xF6D5
	// TypePoll is a poll's message type (PollServerState); TypeReply a
	// reply's (ServerStateResponse).
	TypePoll  = 0
	TypeReply = 1
	// Version is the protocol version this package speaks.
	Version = 1
	// Terminator ends every message.
	Terminator = 0x01
	// PollLen is the length of a poll.
	PollLen = 13
	// replyFixedLen is a reply without sub-states and name: magic, type,
	// version, cookie, state, NetCL, flags, count, name length,
	// terminator.
	replyFixedLen = 2 + 1 + 1 + 8 + 1 + 4 + 8 + 1 + 2 + 1
	// DefaultPort is the dedicated server's game port, where the query
	// answers.
	DefaultPort = 7777
)

// Text is a string exactly as the server sent it: String returns every
// byte, UTF8 decodes it for display (valid UTF-8 as is, any other byte
// as Latin-1).
type Text = rawtext.Text

// Poll asks a server for its state. The reply echoes Cookie.
type Poll struct {
	Cookie uint64
}

// AppendBinary appends the poll's 13 bytes to b.
func (p Poll) AppendBinary(b []byte) ([]byte, error) {
	b = binary.LittleEndian.AppendUint16(b, Magic)
	b = append(b, TypePoll, Version)
	b = binary.LittleEndian.AppendUint64(b, p.Cookie)
	return append(b, Terminator), nil
}

// ParsePoll reads a poll. Bytes after the terminator are ignored.
func ParsePoll(b []byte) (Poll, error) {
	if err := header(b, "poll", TypePoll); err != nil {
		return Poll{}, err
	}
	if len(b) < PollLen {
		return Poll{}, &ParseError{Packet: "poll", Offset: len(b), Err: ErrTruncated}
	}
	if b[12] != Terminator {
		return Poll{}, &ParseError{Packet: "poll", Offset: 12, Err: fmt.Errorf("%w: %#02x where the terminator 01 is due", ErrMalformed, b[12])}
	}
	return Poll{Cookie: binary.LittleEndian.Uint64(b[4:12])}, nil
}

// header checks the magic, the message type and the version.
func header(b []byte, packet string, typ byte) error {
	switch {
	case len(b) < 2:
		return &ParseError{Packet: packet, Offset: len(b), Err: ErrTruncated}
	case binary.LittleEndian.Uint16(b) != Magic:
		return &ParseError{Packet: packet, Offset: 0, Err: ErrBadMagic}
	case len(b) < 4:
		return &ParseError{Packet: packet, Offset: len(b), Err: ErrTruncated}
	case b[2] != typ:
		return &ParseError{Packet: packet, Offset: 2, Err: fmt.Errorf("%w %d", ErrUnexpectedType, b[2])}
	case b[3] != Version:
		return &ParseError{Packet: packet, Offset: 3, Err: fmt.Errorf("%w %d", ErrVersion, b[3])}
	}
	return nil
}

// State is a server's state.
type State uint8

// The states.
const (
	StateOffline State = 0 // the server is not running
	StateIdle    State = 1 // running, no session loaded
	StateLoading State = 2 // preparing a world
	StatePlaying State = 3 // a session is live
)

// String returns "offline", "idle", "loading", "playing", or the number.
func (s State) String() string {
	switch s {
	case StateOffline:
		return "offline"
	case StateIdle:
		return "idle"
	case StateLoading:
		return "loading"
	case StatePlaying:
		return "playing"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// SubState is one of a server's sub-states: its id and the version of its
// data, which changes when the data does (a client asks the HTTPS API
// again then).
type SubState struct {
	ID      uint8
	Version uint16
}

// ServerState is a server's reply to a poll.
type ServerState struct {
	// Cookie is the poll's, echoed.
	Cookie uint64
	State  State
	// NetCL is the server's network changelist: its build.
	NetCL uint32
	// Flags are the server's flags, as sent.
	Flags     uint64
	SubStates []SubState
	// Name is the server's name. The HTTPS API does not tell it: this
	// reply is the only place it is.
	Name Text
	// NoTerminator reports a reply that ended after the name, without
	// the terminator 01 (read all the same).
	NoTerminator bool
}

// AppendBinary appends the reply to b. It fails when the name or the
// sub-states do not fit their length fields.
func (s *ServerState) AppendBinary(b []byte) ([]byte, error) {
	if len(s.Name) > math.MaxUint16 || len(s.SubStates) > math.MaxUint8 {
		return b, fmt.Errorf("%w: a %d-byte name and %d sub-states", ErrTooLarge, len(s.Name), len(s.SubStates))
	}
	b = binary.LittleEndian.AppendUint16(b, Magic)
	b = append(b, TypeReply, Version)
	b = binary.LittleEndian.AppendUint64(b, s.Cookie)
	b = append(b, byte(s.State))
	b = binary.LittleEndian.AppendUint32(b, s.NetCL)
	b = binary.LittleEndian.AppendUint64(b, s.Flags)
	b = append(b, byte(len(s.SubStates)))
	for _, sub := range s.SubStates {
		b = binary.LittleEndian.AppendUint16(append(b, sub.ID), sub.Version)
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(s.Name)))
	b = append(b, s.Name...)
	if s.NoTerminator {
		return b, nil
	}
	return append(b, Terminator), nil
}

// Len returns the length of the reply's encoding.
func (s *ServerState) Len() int {
	n := replyFixedLen + 3*len(s.SubStates) + len(s.Name)
	if s.NoTerminator {
		n--
	}
	return n
}

// ReplyCookie returns the cookie of what reads as a reply header (magic,
// type, version and a cookie), without parsing the rest.
func ReplyCookie(b []byte) (uint64, bool) {
	if len(b) < 12 || header(b, "reply", TypeReply) != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[4:12]), true
}

// ParseServerState reads a reply. The name and the sub-states are copied.
// A reply that ends after the name reads, with NoTerminator set; a byte
// there other than the terminator is malformed; bytes after the
// terminator are ignored.
func ParseServerState(b []byte) (*ServerState, error) {
	if err := header(b, "reply", TypeReply); err != nil {
		return nil, err
	}
	short := func(off int) error { return &ParseError{Packet: "reply", Offset: off, Err: ErrTruncated} }
	if len(b) < 4+8+1+4+8+1 {
		return nil, short(len(b))
	}
	s := &ServerState{
		Cookie: binary.LittleEndian.Uint64(b[4:]),
		State:  State(b[12]),
		NetCL:  binary.LittleEndian.Uint32(b[13:]),
		Flags:  binary.LittleEndian.Uint64(b[17:]),
	}
	n := int(b[25])
	off := 26
	if len(b) < off+3*n+2 {
		return nil, short(len(b))
	}
	if n > 0 {
		s.SubStates = make([]SubState, n)
		for i := range s.SubStates {
			s.SubStates[i] = SubState{ID: b[off], Version: binary.LittleEndian.Uint16(b[off+1:])}
			off += 3
		}
	}
	nameLen := int(binary.LittleEndian.Uint16(b[off:]))
	off += 2
	if len(b) < off+nameLen {
		return nil, &ParseError{Packet: "reply", Offset: off - 2, Err: fmt.Errorf("%w: a %d-byte name in %d bytes", ErrTruncated, nameLen, len(b)-off)}
	}
	s.Name = append(Text(nil), b[off:off+nameLen]...)
	off += nameLen
	switch {
	case off == len(b):
		s.NoTerminator = true
	case b[off] != Terminator:
		return nil, &ParseError{Packet: "reply", Offset: off, Err: fmt.Errorf("%w: %#02x where the terminator 01 is due", ErrMalformed, b[off])}
	}
	return s, nil
}
