package satisfactory

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/internal/neterr"
)

// Sentinel errors. Parsers wrap the malformed-input ones in a [*ParseError]
// that carries the offset, so test them with [errors.Is].
var (
	// ErrTruncated means the datagram ended inside a field.
	ErrTruncated = errors.New("satisfactory: truncated packet")
	// ErrBadMagic means the datagram does not start with D5 F6.
	ErrBadMagic = errors.New("satisfactory: not a Lightweight Query packet (no D5 F6 magic)")
	// ErrUnexpectedType means the message type is not the one the parser
	// reads (0 for a poll, 1 for a reply).
	ErrUnexpectedType = errors.New("satisfactory: unexpected message type")
	// ErrVersion means the protocol version is not 1, the only one this
	// package knows.
	ErrVersion = errors.New("satisfactory: unknown protocol version")
	// ErrMalformed means a field cannot be right: a byte after the name
	// that is not the terminator 01.
	ErrMalformed = errors.New("satisfactory: malformed packet")
	// ErrTooLarge means a name, or a list of sub-states, too long for
	// its length field, or a reply beyond the server's MaxReplySize.
	ErrTooLarge = errors.New("satisfactory: field too large")
	// ErrTimeout means no reply came in time. It is a [net.Error] whose
	// Timeout method reports true, and it matches os.ErrDeadlineExceeded.
	ErrTimeout error = neterr.Timeout("satisfactory: timeout")
	// ErrUnreachable means the network reported the server unreachable
	// (an ICMP port unreachable). It also matches the kernel's error.
	ErrUnreachable = errors.New("satisfactory: server unreachable")
	// ErrNotSatisfactory means the server answered, but only with
	// datagrams that are not a reply to the poll; it wraps the
	// [*ParseError] of the first.
	ErrNotSatisfactory = errors.New("satisfactory: answered, but not with a server state")
	// ErrClientClosed is the error of a poll on a closed [Client].
	ErrClientClosed = errors.New("satisfactory: client closed")
	// ErrServerClosed is returned by the server's Serve methods after
	// Shutdown.
	ErrServerClosed = errors.New("satisfactory: server closed")
)

// OpError is the error of a poll: "satisfactory: state <address>:
// <cause>". It is a [net.Error].
type OpError = neterr.OpError

// ParseError reports a malformed datagram: which message ("poll" or
// "reply"), where, and why.
type ParseError struct {
	Packet string
	Offset int
	Err    error
}

// Error returns "satisfactory: parse <packet> at offset N: <cause>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("satisfactory: parse %s at offset %d: %s", e.Packet, e.Offset, strings.TrimPrefix(e.Err.Error(), "satisfactory: "))
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// notSatisfactory is the cause of a poll whose server sent only
// datagrams that are not replies to it.
type notSatisfactory struct{ err error }

func (e *notSatisfactory) Error() string {
	return "answered, but not with a server state (" + strings.TrimPrefix(e.err.Error(), "satisfactory: ") + ")"
}

func (e *notSatisfactory) Unwrap() []error { return []error{ErrNotSatisfactory, e.err} }
