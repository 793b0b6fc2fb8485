package rcon

import (
	"errors"
	"fmt"
)

// Codec errors. They reach callers wrapped in a [*ParseError] (and, for
// sizes, a [*SizeError]), so test them with [errors.Is].
var (
	// ErrPacketTooSmall reports a size field below [MinPacketSize]
	// (negative sizes included).
	ErrPacketTooSmall = errors.New("rcon: packet size below minimum")
	// ErrPacketTooLarge reports a size field above the configured limit,
	// detected before anything is allocated.
	ErrPacketTooLarge = errors.New("rcon: packet size above limit")
	// ErrTruncated reports input that ends inside a packet.
	ErrTruncated = errors.New("rcon: truncated packet")
)

// Client errors.
var (
	// ErrAuthFailed is returned when the server answers the login with
	// request id -1 (wrong password).
	ErrAuthFailed = errors.New("rcon: authentication failed")
	// ErrNoAuthResponse is returned when the server keeps the connection
	// open but never answers the login (ARK with a wrong password, or a
	// port that is not an RCON server). It is distinct from [ErrConnClosed].
	ErrNoAuthResponse = errors.New("rcon: no authentication response")
	// ErrConnClosed is returned when the server closes the connection
	// during the login (Squad's answer to a wrong password) or in the
	// middle of a response.
	ErrConnClosed = errors.New("rcon: connection closed by server")
	// ErrTimeout is returned when a command gets no complete answer
	// before its deadline. When the deadline came from a context the
	// error also matches [context.DeadlineExceeded].
	ErrTimeout = errors.New("rcon: timeout")
	// ErrClientClosed is returned by calls on a [Client] after [Client.Close].
	ErrClientClosed = errors.New("rcon: client closed")
	// ErrInvalidCommand is returned for an empty command or one that holds
	// a NUL byte (the server would cut it there).
	ErrInvalidCommand = errors.New("rcon: invalid command")
	// ErrCommandTooLong is returned when a request would exceed the
	// dialect's request limit (1460 bytes on the wire for Minecraft).
	ErrCommandTooLong = errors.New("rcon: command too long")
	// ErrResponseTooLarge is returned when one command's output exceeds
	// Options.MaxResponseSize.
	ErrResponseTooLarge = errors.New("rcon: response too large")
	// ErrProtocol reports a packet the client cannot fit into the
	// conversation (for example an AUTH_RESPONSE for an unknown id while
	// logging in). The connection is closed afterwards.
	ErrProtocol = errors.New("rcon: protocol violation")
)

// ParseError describes malformed input. Offset is the byte offset, from
// the start of the packet, at which the problem was found.
type ParseError struct {
	Offset int
	Err    error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%v (at byte %d)", e.Err, e.Offset)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// SizeError reports a size field outside [MinPacketSize, Max]. It unwraps
// to [ErrPacketTooSmall] or [ErrPacketTooLarge].
type SizeError struct {
	Size int // value of the size field
	Max  int // limit in force
}

func (e *SizeError) Error() string {
	if e.Size < MinPacketSize {
		return fmt.Sprintf("rcon: packet size %d below minimum %d", e.Size, MinPacketSize)
	}
	return fmt.Sprintf("rcon: packet size %d above limit %d", e.Size, e.Max)
}

// Unwrap returns ErrPacketTooSmall or ErrPacketTooLarge.
func (e *SizeError) Unwrap() error {
	if e.Size < MinPacketSize {
		return ErrPacketTooSmall
	}
	return ErrPacketTooLarge
}
