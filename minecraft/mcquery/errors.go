package mcquery

import (
	"errors"
	"strings"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/minecraft/internal/mcerr"
)

// Sentinel errors. Parsers wrap the malformed-input ones in a [*ParseError]
// that carries the offset, so test them with [errors.Is].
var (
	// ErrTruncated means the datagram ended before a field it announced,
	// including a string without its NUL and a key list without its end.
	ErrTruncated = errors.New("mcquery: truncated packet")
	// ErrBadHeader means a request does not start with FE FD.
	ErrBadHeader = errors.New("mcquery: bad packet header")
	// ErrUnexpectedType means the type byte is not one the parser handles.
	ErrUnexpectedType = errors.New("mcquery: unexpected packet type")
	// ErrMalformed means a field holds a value that cannot be right, such
	// as a challenge token that is not a number.
	ErrMalformed = errors.New("mcquery: malformed packet")
	// ErrTooLarge means an encoder was given more than its format holds.
	ErrTooLarge = errors.New("mcquery: message too large")
	// ErrNULInText means an encoder was given text with a NUL, which would
	// end the string early on the wire.
	ErrNULInText = errors.New("mcquery: text contains a NUL byte")
	// ErrTimeout means no answer came in time. It is a [net.Error] whose
	// Timeout method reports true, and it matches os.ErrDeadlineExceeded.
	ErrTimeout error = neterr.Timeout("mcquery: timeout")
	// ErrUnreachable means the network reported the server unreachable
	// (an ICMP port unreachable: nothing listens there; Query is off by
	// default, enable-query). It also matches the kernel's error.
	ErrUnreachable = errors.New("mcquery: server unreachable")
	// ErrNotQuery means the server answered, but only with datagrams that
	// are not Query; it wraps the [*ParseError] of the first.
	ErrNotQuery = errors.New("mcquery: answered, but not with Query")
	// ErrTooManyTokens means the server kept sending new challenge tokens.
	ErrTooManyTokens = errors.New("mcquery: too many challenge tokens")
	// ErrClientClosed is the error of a call on a closed [Client].
	ErrClientClosed = errors.New("mcquery: client closed")
	// ErrServerClosed is returned by the server's Serve methods after
	// Shutdown.
	ErrServerClosed = errors.New("mcquery: server closed")
)

// OpError is the error of a query: the operation ("basic-stat" or
// "full-stat"), the server's address and the cause. It is a [net.Error].
type OpError = neterr.OpError

// ParseError reports malformed input: which packet, where, and why. Its
// Pkg is "mcquery"; Packet is "request", "handshake", "basic-stat",
// "full-stat" or "reply".
type ParseError = mcerr.ParseError

func parseErr(packet string, off int, err error) error {
	return &ParseError{Pkg: "mcquery", Packet: packet, Offset: off, Err: err}
}

var detail = mcerr.Detail

// notQuery is the cause of a query whose server sent only datagrams that
// are not Query.
type notQuery struct{ err error }

func (e *notQuery) Error() string {
	return "answered, but not with Query (" + strings.TrimPrefix(e.err.Error(), "mcquery: ") + ")"
}

func (e *notQuery) Unwrap() []error { return []error{ErrNotQuery, e.err} }
