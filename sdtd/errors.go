package sdtd

import (
	"errors"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
)

// Session errors, inside an [*OpError]; test them with errors.Is. Those
// that stand for one of package console's match it too.
var (
	// ErrAuthFailed: the server said "Password incorrect". The client
	// never sends that password again. It matches [console.ErrAuthFailed].
	ErrAuthFailed = neterr.Also("sdtd: authentication failed", console.ErrAuthFailed)
	// ErrLockedOut: the server closed the connection without a word, as
	// 7DTD does while an address is blocked after failed logins, or said
	// "Too many failed login attempts!". It matches
	// [console.ErrAuthFailed]: only time lifts it.
	ErrLockedOut = neterr.Also("sdtd: locked out after failed logins", console.ErrAuthFailed)
	// ErrTimeout: no answer in time; a net.Error matching
	// os.ErrDeadlineExceeded and [console.ErrTimeout].
	ErrTimeout = neterr.TimeoutAlso("sdtd: timeout", console.ErrTimeout)
	// ErrClosed: the client was closed. It matches [console.ErrClosed].
	ErrClosed = neterr.Also("sdtd: client closed", console.ErrClosed)
	// ErrConnLost: the connection died while a command waited.
	ErrConnLost = errors.New("sdtd: connection lost")
	// ErrInvalidCommand: an empty command, one holding a line end or a
	// NUL, or "exit".
	ErrInvalidCommand = errors.New("sdtd: invalid command")
	// ErrNotTelnet: the port is not a 7DTD telnet console (Probe).
	ErrNotTelnet = errors.New("sdtd: not a 7 Days to Die telnet console")
	// ErrResponseTooLarge: an answer beyond Options.MaxResponseSize.
	ErrResponseTooLarge = errors.New("sdtd: response too large")
)

// isAuthFailed reports a refused password, which ends a session: it is
// never tried again.
func isAuthFailed(err error) bool { return errors.Is(err, ErrAuthFailed) }

// OpError is the error of an exchange with a server, shared with the
// other protocol packages: "sdtd: <op> <addr>: <cause>".
type OpError = neterr.OpError

func opError(op, addr string, err error) error { return neterr.Op("sdtd", op, addr, err) }
