package palworld

import (
	"errors"
	"fmt"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
)

// Errors, inside an [*OpError]; test them with errors.Is. Those that
// stand for one of package console's match it too.
var (
	// ErrAuthFailed: 401, the admin password was refused. It matches
	// [console.ErrAuthFailed].
	ErrAuthFailed = neterr.Also("palworld: authentication failed", console.ErrAuthFailed)
	// ErrTimeout: no whole answer in time (a server that never answers,
	// or a body that trickles); a net.Error matching
	// os.ErrDeadlineExceeded and [console.ErrTimeout].
	ErrTimeout = neterr.TimeoutAlso("palworld: timeout", console.ErrTimeout)
	// ErrServer: the server answered 5xx. A [*StatusError] says more.
	ErrServer = errors.New("palworld: server error")
	// ErrStatus: the server answered another status than 200, 401 or 5xx.
	ErrStatus = errors.New("palworld: unexpected status")
	// ErrResponseTooLarge: a body beyond Options.MaxBodySize; it was
	// read no further.
	ErrResponseTooLarge = errors.New("palworld: response too large")
	// ErrNotPalworld: the port answered, but not as Palworld's REST API
	// (a 404 at /v1/api/info, or a body that is not its JSON).
	ErrNotPalworld = errors.New("palworld: not a Palworld REST API")
	// ErrUnknownCommand: Exec got a command that maps to no endpoint.
	ErrUnknownCommand = errors.New("palworld: unknown command")
	// ErrClosed: the client was closed. It matches [console.ErrClosed].
	ErrClosed = neterr.Also("palworld: client closed", console.ErrClosed)
)

// StatusError is an answer with an error status. It matches ErrServer
// for 5xx, ErrNotPalworld for 404 and ErrStatus otherwise.
type StatusError struct {
	Code int
	// Body is the start of the answer's body (up to 512 bytes).
	Body string
}

func (e *StatusError) Error() string {
	if e.Body == "" {
		return fmt.Sprintf("palworld: HTTP %d", e.Code)
	}
	return fmt.Sprintf("palworld: HTTP %d: %s", e.Code, e.Body)
}

// Unwrap returns the sentinel the status matches.
func (e *StatusError) Unwrap() error {
	switch {
	case e.Code >= 500:
		return ErrServer
	case e.Code == 404:
		return ErrNotPalworld
	}
	return ErrStatus
}

// OpError is the error of an exchange with a server, shared with the
// other protocol packages: "palworld: <op> <addr>: <cause>", Op being the
// endpoint ("info", "players", "kick", ...).
type OpError = neterr.OpError

func opError(op, addr string, err error) error { return neterr.Op("palworld", op, addr, err) }
