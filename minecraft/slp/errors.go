package slp

import (
	"errors"

	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/minecraft/internal/mcerr"
)

// Sentinel errors. Parsers wrap the malformed-input ones in a [*ParseError]
// that carries the offset, so test them with [errors.Is].
var (
	// ErrTruncated means the data ended before a field it announced.
	ErrTruncated = errors.New("slp: truncated packet")
	// ErrVarIntTooLong means a VarInt ran past its fifth byte: wiki.vg's
	// "Data types" caps a VarInt at 5 bytes.
	ErrVarIntTooLong = errors.New("slp: VarInt longer than 5 bytes")
	// ErrTooLarge means a length is beyond the limit (the client's
	// MaxResponseSize, the server's MaxRequestSize, a string's own bound),
	// or negative: it is refused before anything is allocated for it.
	ErrTooLarge = errors.New("slp: length beyond the limit")
	// ErrUnexpectedPacket means a packet of another id came where the
	// exchange expects a status response or a pong.
	ErrUnexpectedPacket = errors.New("slp: unexpected packet")
	// ErrMalformed means a field holds a value that cannot be right: JSON
	// that does not parse, a legacy reply that is not UTF-16BE, a legacy
	// ping that breaks 1.6's length rules.
	ErrMalformed = errors.New("slp: malformed packet")
	// ErrNoStatus means the server accepted the connection and closed it
	// without a status: it is up, but does not answer status requests
	// (enable-status=false, or still starting: the vanilla server closes
	// right after the handshake in both cases). It is neither a timeout
	// nor unreachable.
	ErrNoStatus = errors.New("slp: up, but not answering status")
	// ErrTimeout means no answer came in time. It is a [net.Error] whose
	// Timeout method reports true, and it matches os.ErrDeadlineExceeded
	// under errors.Is.
	ErrTimeout error = neterr.Timeout("slp: timeout")
	// ErrUnreachable means the connection was refused or the network
	// reported the host unreachable: nothing listens there. The error also
	// matches the kernel's [syscall.Errno], such as syscall.ECONNREFUSED.
	ErrUnreachable = errors.New("slp: server unreachable")
	// ErrServerClosed is returned by the server's Serve methods after
	// Shutdown.
	ErrServerClosed = errors.New("slp: server closed")
)

// OpError is the error of an exchange: the operation ("status", "legacy",
// "connect", "resolve"), the server's address and the cause, with the
// message "slp: status 127.0.0.1:25565: no answer (timeout)". It is a
// [net.Error].
type OpError = neterr.OpError

// ParseError reports malformed input: which packet, where, and why. Its
// Pkg is "slp"; Packet is "varint", "packet", "handshake", "status",
// "pong", "legacy", "legacy-ping", "forge-data" or "proxy".
type ParseError = mcerr.ParseError

func parseErr(packet string, off int, err error) error {
	return &ParseError{Pkg: "slp", Packet: packet, Offset: off, Err: err}
}

// detail wraps a sentinel with a detail: errors.Is still finds the
// sentinel.
var detail = mcerr.Detail

// noAnswer is the cause of an exchange that ran out of time waiting for
// what.
func noAnswer(ctx bool, what string) error {
	return mcerr.NoAnswer{Sentinel: ErrTimeout, Ctx: ctx, What: what}
}
