package bedrock

import (
	"errors"
	"strings"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/minecraft/internal/mcerr"
)

// Sentinel errors. Parsers wrap the malformed-input ones in a [*ParseError]
// that carries the offset, so test them with [errors.Is].
var (
	// ErrTruncated means the datagram ended before a field it announced.
	ErrTruncated = errors.New("bedrock: truncated packet")
	// ErrUnexpectedType means the packet id is not one the parser handles.
	ErrUnexpectedType = errors.New("bedrock: unexpected packet id")
	// ErrBadMagic means the datagram lacks RakNet's offline magic.
	ErrBadMagic = errors.New("bedrock: no RakNet magic")
	// ErrTooLarge means a status string beyond MaxStatusLen, or a field
	// that does not fit its format.
	ErrTooLarge = errors.New("bedrock: status too large")
	// ErrMalformed means a field cannot be right, such as a status field
	// holding the separator ';'.
	ErrMalformed = errors.New("bedrock: malformed packet")
	// ErrTimeout means no answer came in time. It is a [net.Error] whose
	// Timeout method reports true, and it matches os.ErrDeadlineExceeded.
	ErrTimeout error = neterr.Timeout("bedrock: timeout")
	// ErrUnreachable means the network reported the server unreachable
	// (an ICMP port unreachable). It also matches the kernel's error.
	ErrUnreachable = errors.New("bedrock: server unreachable")
	// ErrNotBedrock means the server answered, but only with datagrams
	// that are not a pong; it wraps the [*ParseError] of the first.
	ErrNotBedrock = errors.New("bedrock: answered, but not with a pong")
	// ErrClientClosed is the error of a call on a closed [Client].
	ErrClientClosed = errors.New("bedrock: client closed")
	// ErrServerClosed is returned by the server's Serve methods after
	// Shutdown.
	ErrServerClosed = errors.New("bedrock: server closed")
)

// OpError is the error of a ping: the operation ("status"), the server's
// address and the cause. It is a [net.Error].
type OpError = neterr.OpError

// ParseError reports malformed input: which packet, where, and why. Its
// Pkg is "bedrock"; Packet is "ping", "pong" or "reply".
type ParseError = mcerr.ParseError

func parseErr(packet string, off int, err error) error {
	return &ParseError{Pkg: "bedrock", Packet: packet, Offset: off, Err: err}
}

var detail = mcerr.Detail

// notBedrock is the cause of a ping whose server sent only datagrams that
// are not pongs.
type notBedrock struct{ err error }

func (e *notBedrock) Error() string {
	return "answered, but not with a pong (" + strings.TrimPrefix(e.err.Error(), "bedrock: ") + ")"
}

func (e *notBedrock) Unwrap() []error { return []error{ErrNotBedrock, e.err} }
