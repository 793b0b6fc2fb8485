package master

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/internal/neterr"
)

// Sentinel errors. Parsers wrap the malformed-input ones in a [*ParseError]
// that carries the offset, so test them with [errors.Is].
var (
	// ErrTruncated means the datagram ended inside a field: a string
	// without its NUL, or a partial reply entry.
	ErrTruncated = errors.New("master: truncated packet")
	// ErrBadHeader means the datagram does not start as a query (0x31) or
	// a reply (FF FF FF FF 66 0A) does.
	ErrBadHeader = errors.New("master: bad header")
	// ErrBadSeed means a query's seed is not an IPv4 "IP:port".
	ErrBadSeed = errors.New("master: bad seed address")
	// ErrNotIPv4 means an encoder was given an address the protocol
	// cannot carry: it knows IPv4 only.
	ErrNotIPv4 = errors.New("master: not an IPv4 address")
	// ErrNULInText means an encoder was given a filter holding a NUL,
	// which would end it early.
	ErrNULInText = errors.New("master: filter contains a NUL byte")
	// ErrTooLarge means a filter longer than serverlist.MaxFilterLen.
	ErrTooLarge = errors.New("master: filter too large")
	// ErrTimeout means a page went unanswered through every retry, or the
	// Deadline passed. It is a [net.Error] whose Timeout method reports
	// true, and it matches os.ErrDeadlineExceeded. A master that limits
	// its pages per minute (Valve's allowed about 30) falls silent this
	// way.
	ErrTimeout error = neterr.Timeout("master: timeout")
	// ErrUnreachable means the network reported the master unreachable
	// (an ICMP port unreachable). It also matches the kernel's error.
	ErrUnreachable = errors.New("master: server unreachable")
	// ErrNotMaster means the master answered, but only with datagrams
	// that are not replies; it wraps the [*ParseError] of the first.
	ErrNotMaster = errors.New("master: answered, but not with a server list")
	// ErrLimit means the listing reached MaxPages or MaxAddresses before
	// the list ended: what came was delivered, the rest was not asked.
	ErrLimit = errors.New("master: listing cut short by a limit")
	// ErrStalled means the master sent pages that listed nothing new
	// several times in a row without ending the list, or answered every
	// request for a page with the page before (it ignores the seed).
	ErrStalled = errors.New("master: listing makes no progress")
	// ErrClientClosed is the error of a listing on a closed [Client].
	ErrClientClosed = errors.New("master: client closed")
	// ErrServerClosed is returned by the server's Serve methods after
	// Shutdown.
	ErrServerClosed = errors.New("master: server closed")
)

// OpError is the error of a listing: "master: list <address>: <cause>".
// It is a [net.Error] whose Timeout method reports whether the cause is a
// timeout.
type OpError = neterr.OpError

// ParseError reports a malformed datagram: which message, where, and why.
type ParseError struct {
	Message string // "query" or "reply"
	Offset  int    // byte offset in the datagram
	Err     error  // the cause, one of the sentinels above
}

// Error returns "master: parse <message> at offset N: <cause>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("master: parse %s at offset %d: %s", e.Message, e.Offset, strings.TrimPrefix(e.Err.Error(), "master: "))
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// notMaster is the cause of a listing whose master sent only datagrams
// that are not replies.
type notMaster struct{ err error }

func (e *notMaster) Error() string {
	return "answered, but not with a server list (" + strings.TrimPrefix(e.err.Error(), "master: ") + ")"
}

func (e *notMaster) Unwrap() []error { return []error{ErrNotMaster, e.err} }
