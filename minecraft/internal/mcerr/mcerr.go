// Package mcerr holds the error types the Minecraft status packages
// (slp, mcquery, bedrock) share, each aliasing them under its own name:
// the parse error of malformed input and the cause of an exchange that
// ran out of time, with the conventions of docs/conventions.md. It uses
// the standard library only.
package mcerr

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// ParseError reports malformed input: which packet, where, and why.
type ParseError struct {
	Pkg    string // the package whose parser failed: "slp", "mcquery", "bedrock"
	Packet string // what was parsed: "status", "handshake", "pong" ...
	Offset int    // byte offset in the packet where the problem was found
	Err    error  // the cause, usually a sentinel of the package
}

// Error returns "<pkg>: parse <Packet> at offset N: <cause>", the cause's
// own package prefix dropped.
func (e *ParseError) Error() string {
	return fmt.Sprintf("%s: parse %s at offset %d: %s", e.Pkg, e.Packet, e.Offset,
		strings.TrimPrefix(e.Err.Error(), e.Pkg+": "))
}

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// Detail wraps a sentinel with a detail; errors.Is still finds the
// sentinel.
func Detail(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}

// NoAnswer is the cause of an exchange that ran out of time. It matches
// its package's timeout sentinel and os.ErrDeadlineExceeded, and
// context.DeadlineExceeded when a context's deadline ended the wait. It is
// a net.Error whose Timeout reports true.
type NoAnswer struct {
	Sentinel error  // the package's ErrTimeout
	Ctx      bool   // a context's deadline ended the wait
	What     string // what was awaited: "answer", "status", "pong" ...
}

func (e NoAnswer) Error() string {
	if e.Ctx {
		return "no " + e.What + " before the context deadline"
	}
	return "no " + e.What + " (timeout)"
}

// Is matches the package's timeout, os.ErrDeadlineExceeded and, when a
// context ended the wait, context.DeadlineExceeded.
func (e NoAnswer) Is(target error) bool {
	return target == e.Sentinel || target == os.ErrDeadlineExceeded || e.Ctx && target == context.DeadlineExceeded
}

// Timeout reports true, as net.Error timeouts do.
func (NoAnswer) Timeout() bool { return true }

// Temporary reports true; net.Error deprecates it.
func (NoAnswer) Temporary() bool { return true }
