package rcon

import (
	"errors"
	"fmt"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
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

// Client errors. A [Client] returns them inside an [*OpError] that names
// the operation and the server; test them with [errors.Is]. ErrAuthFailed,
// ErrTimeout and ErrClientClosed also match their kinds of every console
// session: [console.ErrAuthFailed], [console.ErrTimeout] and
// [console.ErrClosed].
var (
	// ErrAuthFailed is returned when the server refuses the password: it
	// answers the login with id -1, or closes the connection before
	// answering it (Squad does that; the error then also matches
	// [ErrConnClosed]).
	ErrAuthFailed = console.NewError("rcon: authentication failed", console.ErrAuthFailed)
	// ErrNoAuthResponse is returned when the server keeps the connection
	// open but never answers the login: ARK answers a wrong password so,
	// and so does a port that is not an RCON server. It comes with
	// [ErrTimeout].
	ErrNoAuthResponse = errors.New("rcon: no authentication response")
	// ErrConnClosed is returned when the server closes the connection
	// while a command waits for its answer, or during the login.
	ErrConnClosed = errors.New("rcon: connection closed by server")
	// ErrTimeout is returned when a login or a command gets no complete
	// answer before its deadline. It is a [net.Error] whose Timeout
	// method reports true, and it matches [os.ErrDeadlineExceeded]; when
	// the deadline came from a context the error also matches
	// [context.DeadlineExceeded].
	ErrTimeout = console.NewError("rcon: timeout", console.ErrTimeout)
	// ErrClientClosed is returned by calls on a [Client] after [Client.Close].
	ErrClientClosed = console.NewError("rcon: client closed", console.ErrClosed)
	// ErrInvalidCommand is returned for an empty command or one that holds
	// a NUL byte (the server would cut it there).
	ErrInvalidCommand = errors.New("rcon: invalid command")
	// ErrCommandTooLong is returned when a request would exceed the
	// dialect's request limit (1460 bytes on the wire for Minecraft).
	ErrCommandTooLong = errors.New("rcon: command too long")
	// ErrResponseTooLarge is returned when one command's output exceeds
	// Options.MaxResponseSize. The connection is closed, since the rest
	// of that answer would still be on its way.
	ErrResponseTooLarge = errors.New("rcon: response too large")
	// ErrProtocol reports a packet the client cannot fit into the
	// conversation (a size field out of range, for example). The
	// connection is closed afterwards.
	ErrProtocol = errors.New("rcon: protocol violation")
)

// OpError is the error of an exchange with a server: its message is
// "rcon: <op> <addr>: <cause>", for example
// "rcon: exec 127.0.0.1:27015: timeout: no complete answer within 5s".
// Op is "dial", "login" or "exec". It is a [net.Error] whose Timeout
// method reports whether the cause is a timeout. a2s and ogp return the
// same type.
type OpError = neterr.OpError

// opError wraps err, unless it is nil or already an *OpError.
func opError(op, addr string, err error) error {
	if err == nil {
		return nil
	}
	var oe *OpError
	if errors.As(err, &oe) {
		return err
	}
	return &OpError{Pkg: "rcon", Op: op, Addr: addr, Err: err}
}

// ParseError describes malformed input. Offset is the byte offset, from
// the start of the packet, at which the problem was found. Its message is
// "rcon: parse packet at offset N: <cause>".
type ParseError struct {
	Offset int
	Err    error
}

func (e *ParseError) Error() string {
	msg := e.Err.Error()
	if len(msg) > len("rcon: ") && msg[:len("rcon: ")] == "rcon: " {
		msg = msg[len("rcon: "):]
	}
	return fmt.Sprintf("rcon: parse packet at offset %d: %s", e.Offset, msg)
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
