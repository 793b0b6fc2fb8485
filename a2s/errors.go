package a2s

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/wire"
)

// Sentinel errors. Parsers wrap the malformed-input ones in a [*ParseError]
// that carries the offset, so test them with [errors.Is].
var (
	// ErrTruncated means the packet ended before a field it announced,
	// including a string without its NUL terminator.
	ErrTruncated = errors.New("a2s: truncated packet")
	// ErrBadHeader means the packet does not start with the header the
	// parser expects (0xFFFFFFFF for a simple packet, 0xFFFFFFFE for a split
	// fragment).
	ErrBadHeader = errors.New("a2s: bad packet header")
	// ErrUnexpectedType means the message type byte is not one the parser
	// handles, for example an 'A' challenge given to ParseInfo.
	ErrUnexpectedType = errors.New("a2s: unexpected message type")
	// ErrMalformed means a field holds a value that cannot be right, such as
	// an A2S_INFO VAC byte that is neither 0 nor 1 (a server that left the
	// byte out shifts every later field).
	ErrMalformed = errors.New("a2s: malformed packet")
	// ErrBadFragment means a split fragment header is inconsistent: a total
	// of zero, a number not below the total, or fragments of one reply that
	// disagree.
	ErrBadFragment = errors.New("a2s: bad split fragment")
	// ErrTooManyFragments means a split reply announces more fragments than
	// the limit (Reassembler.MaxFragments, or 15 for the GoldSource format).
	ErrTooManyFragments = errors.New("a2s: too many split fragments")
	// ErrFragmentTooLarge means a fragment datagram is bigger than
	// Reassembler.MaxFragmentSize.
	ErrFragmentTooLarge = errors.New("a2s: split fragment too large")
	// ErrDecompressedTooLarge means a bzip2-compressed reply announces or
	// produces more bytes than Reassembler.MaxDecompressed, or more than it
	// announced.
	ErrDecompressedTooLarge = errors.New("a2s: decompressed reply too large")
	// ErrDecompress means a bzip2-compressed reply is not a valid bzip2
	// stream, or is shorter than it announced.
	ErrDecompress = errors.New("a2s: bad bzip2 data")
	// ErrChecksum means the CRC32 of a decompressed reply does not match
	// the one the server sent.
	ErrChecksum = errors.New("a2s: checksum mismatch")
	// ErrNULInText means an encoder was given a [Text] containing a NUL
	// byte, which would end the string early on the wire.
	ErrNULInText = errors.New("a2s: text contains a NUL byte")
	// ErrTooLarge means an encoder was asked for a message or field that
	// does not fit its wire format (more than 255 players or 65535 rules,
	// a split reply needing more fragments than the format can number).
	ErrTooLarge = errors.New("a2s: message too large")
	// ErrTooManyChallenges means the server kept answering with new
	// challenges and the client gave up.
	ErrTooManyChallenges = errors.New("a2s: too many challenge replies")
	// ErrServerClosed is returned by the server's Serve methods after
	// Shutdown.
	ErrServerClosed = errors.New("a2s: server closed")
	// ErrTimeout means no answer arrived in time. It is a [net.Error]
	// whose Timeout method reports true, and it matches
	// os.ErrDeadlineExceeded under errors.Is.
	ErrTimeout error = neterr.Timeout("a2s: timeout")
	// ErrUnreachable means the network reported the server unreachable:
	// an ICMP port unreachable (the port is closed: nothing listens
	// there) or host or network unreachable, after one request. The error
	// also matches the [syscall.Errno] the kernel gave, such as
	// syscall.ECONNREFUSED. Linux reports it to the shared sockets of
	// [Client] and of the scan engine; elsewhere a closed port looks
	// silent.
	ErrUnreachable = errors.New("a2s: server unreachable")
	// ErrNotA2S means the server answered, but only with datagrams that are
	// not A2S: the error of a section that got nothing else before its
	// time ran out. It wraps the [*ParseError] of the first such datagram.
	ErrNotA2S = errors.New("a2s: answered, but not with A2S")
	// ErrIncomplete means fragments of a split reply came, but not all of
	// them, before the time ran out: the server answered in part (the
	// rest was lost on the way). The error is a timeout too.
	ErrIncomplete = errors.New("a2s: split reply incomplete")
)

// OpError is the error of a query: the operation ("info", "players",
// "rules", "ping"), the server's address and the cause, with the message
// "a2s: info 127.0.0.1:27015: no answer (timeout)". It is a [net.Error].
type OpError = neterr.OpError

// errUnterminated is the ErrTruncated flavour for a string with no NUL.
var errUnterminated = fmt.Errorf("%w: string has no NUL terminator", ErrTruncated)

// noAnswer is the cause of a section that got no answer in time. It
// matches ErrTimeout and os.ErrDeadlineExceeded, and
// context.DeadlineExceeded when a context's deadline ended the wait;
// ErrIncomplete too when fragments of unfinished split replies came.
type noAnswer struct {
	ctx       bool
	fragments int // of split replies that never completed
}

func (e noAnswer) Error() string {
	msg := "no answer (timeout)"
	if e.ctx {
		msg = "no answer before the context deadline"
	}
	if e.fragments > 0 {
		msg = "no complete " + strings.TrimPrefix(msg, "no ")
		msg += fmt.Sprintf(": part of a split reply came, not all (%d fragment%s)", e.fragments, map[bool]string{true: "s"}[e.fragments > 1])
	}
	return msg
}

func (e noAnswer) Is(target error) bool {
	return target == ErrTimeout || target == os.ErrDeadlineExceeded || e.ctx && target == context.DeadlineExceeded ||
		e.fragments > 0 && target == ErrIncomplete
}

// Timeout reports true, as net.Error timeouts do.
func (noAnswer) Timeout() bool { return true }

// Temporary reports true; net.Error deprecates it.
func (noAnswer) Temporary() bool { return true }

// notA2S is the cause of a section whose server sent only datagrams that
// are not A2S.
type notA2S struct{ err error }

func (e *notA2S) Error() string {
	return "answered, but not with A2S (" + strings.TrimPrefix(e.err.Error(), "a2s: ") + ")"
}

func (e *notA2S) Unwrap() []error { return []error{ErrNotA2S, e.err} }

// ParseError reports malformed input: which packet, where, and why.
type ParseError struct {
	Packet string // "info", "players", "rules", "request", "challenge", "ping", "fragment", "reply"
	Offset int    // byte offset in the packet where the problem was found
	Err    error  // the cause, usually one of the sentinels above
}

// Error returns "a2s: parse <Packet> at offset N: <cause>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("a2s: parse %s at offset %d: %s", e.Packet, e.Offset,
		strings.TrimPrefix(e.Err.Error(), "a2s: "))
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// parseErr builds a ParseError, mapping the wire reader's errors onto ours.
func parseErr(packet string, off int, err error) error {
	switch err {
	case wire.ErrShort:
		err = ErrTruncated
	case wire.ErrNoTerminator:
		err = errUnterminated
	}
	return &ParseError{Packet: packet, Offset: off, Err: err}
}
