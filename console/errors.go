package console

import (
	"errors"
	"os"
)

// Errors that every console's errors match with errors.Is, whatever the
// protocol, so that a caller (and gsq's exit codes) can tell them apart.
// A console package declares its own sentinels with [NewError], so that
// its errors match both its own and these.
var (
	// ErrAuthFailed: the server refused the password.
	ErrAuthFailed = errors.New("console: authentication failed")
	// ErrTimeout: no answer in time. A timeout is also a net.Error whose
	// Timeout reports true.
	ErrTimeout = errors.New("console: timeout")
	// ErrClosed: the session was closed.
	ErrClosed = errors.New("console: session closed")
)

// NewError returns a sentinel error of a console package, such as
// rcon.ErrAuthFailed: its message is msg, and it matches kind (one of
// [ErrAuthFailed], [ErrTimeout] and [ErrClosed]) under errors.Is, as
// well as itself. A sentinel of kind ErrTimeout is a net.Error whose
// Timeout reports true, and it matches os.ErrDeadlineExceeded, as a
// socket's deadline does (docs/conventions.md).
func NewError(msg string, kind error) error {
	if kind == ErrTimeout {
		return &timeoutError{sentinel{msg, kind}}
	}
	return &sentinel{msg, kind}
}

// sentinel is a package's own error that matches a console kind.
type sentinel struct {
	msg  string
	kind error
}

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.kind }

// timeoutError is a sentinel of kind ErrTimeout: a net.Error.
type timeoutError struct{ sentinel }

func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }

// Is makes a timeout match os.ErrDeadlineExceeded.
func (*timeoutError) Is(target error) bool { return target == os.ErrDeadlineExceeded }
