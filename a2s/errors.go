package a2s

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
	// ErrTimeout means no answer arrived before the deadline. It also
	// matches os.ErrDeadlineExceeded under errors.Is, and has a Timeout
	// method returning true like net.Error.
	ErrTimeout error = timeoutError{}
)

// errUnterminated is the ErrTruncated flavour for a string with no NUL.
var errUnterminated = fmt.Errorf("%w: string has no NUL terminator", ErrTruncated)

type timeoutError struct{}

func (timeoutError) Error() string        { return "a2s: timeout" }
func (timeoutError) Timeout() bool        { return true }
func (timeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }

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
