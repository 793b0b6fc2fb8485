package ogp

import (
	"errors"
	"fmt"

	"github.com/gsq-project/gsq/internal/neterr"
)

// Codec errors. Parsers wrap them in a [*ParseError] that carries the
// offset, so test them with [errors.Is].
var (
	// ErrNotOGP means the datagram does not start with FF FF FF FF "OGP\0".
	ErrNotOGP = errors.New("ogp: not an OGP packet")
	// ErrTruncated means the data ended inside a field, including a
	// string without its NUL terminator.
	ErrTruncated = errors.New("ogp: truncated packet")
	// ErrBadHeadSize means HeadSize is below 3, points past the end of
	// the datagram, or is too small for the fields the flags announce.
	ErrBadHeadSize = errors.New("ogp: bad HeadSize")
	// ErrBitArrayTooLong means a VarBitArray ran past 16 bytes or set a
	// bit beyond the 63 this package represents.
	ErrBitArrayTooLong = errors.New("ogp: VarBitArray too long")
	// ErrUnknownField means an answer sets a field bit whose layout this
	// package does not know, so what follows cannot be parsed. The
	// sections before it are still returned.
	ErrUnknownField = errors.New("ogp: unknown field bit")
	// ErrTooLarge means a count or size exceeds the wire format or a
	// configured limit (checked before anything is allocated).
	ErrTooLarge = errors.New("ogp: too large")
	// ErrBadFragment means split fragments disagree, number 0 fragments,
	// or carry a SplitPacketNo not below SplitPacketCount.
	ErrBadFragment = errors.New("ogp: bad split fragment")
	// ErrNULInText means an encoder was given text with a NUL byte, which
	// would end the SzString early.
	ErrNULInText = errors.New("ogp: text contains a NUL byte")
)

// Client and server errors.
var (
	// ErrTimeout means no complete answer arrived before the deadline.
	// It is a [net.Error] whose Timeout method reports true, and it
	// matches [os.ErrDeadlineExceeded] under errors.Is, as a socket
	// deadline does.
	ErrTimeout error = neterr.Timeout("ogp: timeout")
	// ErrIncomplete means part of a split answer came, but not all of it,
	// before the time ran out: the server answered (the rest was lost on
	// the way). An error that matches it matches ErrTimeout too.
	ErrIncomplete = errors.New("ogp: split answer incomplete")
	// ErrTooManyChallenges means the server kept rejecting the challenge
	// number (error 3) and the client gave up.
	ErrTooManyChallenges = errors.New("ogp: too many challenge rejections")
	// ErrUnreachable means the network reported the server unreachable:
	// an ICMP port unreachable (the port is closed: nothing listens
	// there) or host or network unreachable, after one request. The error
	// also matches the [syscall.Errno] the kernel gave, such as
	// syscall.ECONNREFUSED. Linux reports it to the [Client]'s socket;
	// elsewhere a closed port looks silent.
	ErrUnreachable = errors.New("ogp: server unreachable")
	// ErrClientClosed is returned by calls on a closed [Client].
	ErrClientClosed = errors.New("ogp: client closed")
	// ErrServerClosed is returned by [Server.Serve] and
	// [Server.ListenAndServe] after [Server.Shutdown].
	ErrServerClosed = errors.New("ogp: server closed")
)

// OpError is the error of a [Client] call: its message is
// "ogp: <op> <address>: <cause>", for example
// "ogp: query 127.0.0.1:7776: timeout after 3 attempts", with op "ping"
// or "query". It is a [net.Error] whose Timeout method reports whether the
// cause is a timeout. The cause of a Client's OpError is a [*CallError].
type OpError = neterr.OpError

// ParseError reports malformed input: which structure, where, and why.
type ParseError struct {
	Section string // "header", "query", "answer", "SERVERINFO", "PLAYERLIST", ...
	Offset  int    // byte offset in the parsed slice where the problem was found
	Err     error  // the cause, one of the sentinels above
}

// Error returns "ogp: parse <Section> at offset N: <cause>", without the
// cause's own "ogp: " prefix.
func (e *ParseError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("ogp: parse %s at offset %d", e.Section, e.Offset)
	}
	return fmt.Sprintf("ogp: parse %s at offset %d: %s", e.Section, e.Offset, trimPrefix(e.Err))
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// ErrorCode is the ErrorValue of an error answer (spec 3.2).
type ErrorCode uint8

// Error codes.
const (
	ErrorBanned           ErrorCode = 0 // the client is banned
	ErrorInvalidType      ErrorCode = 1 // the query type in the header is unknown
	ErrorInvalidValue     ErrorCode = 2 // a value in the header is incorrect
	ErrorInvalidChallenge ErrorCode = 3 // the challenge number is incorrect
	ErrorInvalidQuery     ErrorCode = 4 // the query body is incorrect
)

// String returns the spec's name, e.g. "invalid challenge".
func (c ErrorCode) String() string {
	switch c {
	case ErrorBanned:
		return "banned"
	case ErrorInvalidType:
		return "invalid type"
	case ErrorInvalidValue:
		return "invalid value"
	case ErrorInvalidChallenge:
		return "invalid challenge"
	case ErrorInvalidQuery:
		return "invalid query"
	}
	return fmt.Sprintf("error %d", uint8(c))
}

// ServerError is an error answer (Type 0xFF) from the server. A [Handler]
// may also return one to make the [Server] answer with that code.
type ServerError struct {
	Code ErrorCode
}

// Error returns "ogp: server answered error N (name)".
func (e *ServerError) Error() string {
	return fmt.Sprintf("ogp: server answered error %d (%s)", uint8(e.Code), e.Code)
}

// Refused reports whether the server refused the client (error 0,
// banned), which is how programs that read errors of several protocols
// (package result's KindOf) tell a refusal from other failures.
func (e *ServerError) Refused() bool { return e.Code == ErrorBanned }

// incomplete is the timeout of a call that got part of a split answer:
// it matches ErrIncomplete besides what the timeout matches.
type incomplete struct{ error }

func (e incomplete) Unwrap() []error { return []error{e.error, ErrIncomplete} }

// notOGP is the error of a call whose server sent only datagrams that are
// not OGP: it matches [ErrNotOGP] and the [*ParseError] of the first.
type notOGP struct{ err error }

func (e *notOGP) Error() string {
	return "answered, but not with OGP (" + trimPrefix(e.err) + ")"
}

func (e *notOGP) Unwrap() []error { return []error{ErrNotOGP, e.err} }
