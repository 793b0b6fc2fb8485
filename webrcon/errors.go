package webrcon

import (
	"errors"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
)

// Session errors, inside an [*OpError]; test them with errors.Is. Those
// that stand for one of package console's match it too.
var (
	// ErrAuthFailed: the server refused the password (Rust answers the
	// upgrade with a close frame instead of HTTP). It matches
	// [console.ErrAuthFailed].
	ErrAuthFailed = neterr.Also("webrcon: authentication failed", console.ErrAuthFailed)
	// ErrNotWebRcon: the port answered, but not as a WebSocket server.
	ErrNotWebRcon = errors.New("webrcon: not a WebRCON server")
	// ErrTimeout: no reply in time; a net.Error matching
	// os.ErrDeadlineExceeded and [console.ErrTimeout].
	ErrTimeout = neterr.TimeoutAlso("webrcon: timeout", console.ErrTimeout)
	// ErrClosed: the client was closed. It matches [console.ErrClosed].
	ErrClosed = neterr.Also("webrcon: client closed", console.ErrClosed)
	// ErrConnLost: the connection died while a command waited; the
	// command may have run and is not sent again.
	ErrConnLost = errors.New("webrcon: connection lost")
	// ErrInvalidCommand: an empty command.
	ErrInvalidCommand = errors.New("webrcon: invalid command")
)

// isAuthFailed reports a refused password, which ends a session: it is
// never tried again.
func isAuthFailed(err error) bool { return errors.Is(err, ErrAuthFailed) }

// OpError is the error of an exchange with a server, shared with the
// other protocol packages: "webrcon: <op> <addr>: <cause>".
type OpError = neterr.OpError

func opError(op, addr string, err error) error { return neterr.Op("webrcon", op, addr, err) }
