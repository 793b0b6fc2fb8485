package battleye

import (
	"errors"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/neterr"
)

// Session errors. A [Client] returns them inside an [*OpError] naming the
// operation and the server; test them with [errors.Is]. Those that stand
// for one of package console's match it too.
var (
	// ErrAuthFailed: the server answered the login with 0, a wrong
	// password. The client never tries that password again. It matches
	// [console.ErrAuthFailed].
	ErrAuthFailed = neterr.Also("battleye: authentication failed", console.ErrAuthFailed)
	// ErrNoResponse: the port stayed silent through the login. BattlEye
	// says nothing when its RCon is disabled, and nothing until the
	// server has loaded its mission, so silence is either of those (or a
	// firewall, or a wrong port); it is not a wrong password. It comes
	// with [ErrTimeout].
	ErrNoResponse = errors.New("battleye: no answer to the login (RCon disabled, server still loading, or wrong port)")
	// ErrUnreachable: the network said nothing listens on the port (ICMP
	// port unreachable): no BattlEye RCon there.
	ErrUnreachable = errors.New("battleye: unreachable")
	// ErrTimeout: no complete answer in time. It is a net.Error whose
	// Timeout reports true, and matches os.ErrDeadlineExceeded and
	// [console.ErrTimeout].
	ErrTimeout = neterr.TimeoutAlso("battleye: timeout", console.ErrTimeout)
	// ErrIncomplete: parts of a multi-part answer never came, even after
	// the command was sent again. It comes with [ErrTimeout].
	ErrIncomplete = errors.New("battleye: answer incomplete")
	// ErrClosed: the client was closed. It matches [console.ErrClosed].
	ErrClosed = neterr.Also("battleye: client closed", console.ErrClosed)
	// ErrConnLost: the connection was found dead (keep-alives unanswered,
	// the port closed) while a command waited; the command may or may
	// not have run, and is not sent again. The client logs in again by
	// itself.
	ErrConnLost = errors.New("battleye: connection lost")
	// ErrInvalidCommand: an empty command (an empty command is a
	// keep-alive) or one holding a NUL byte.
	ErrInvalidCommand = errors.New("battleye: invalid command")
	// ErrResponseTooLarge: an answer beyond Options.MaxResponseSize.
	ErrResponseTooLarge = errors.New("battleye: response too large")
)

// isAuthFailed reports a refused password, which ends a session: it is
// never tried again.
func isAuthFailed(err error) bool { return errors.Is(err, ErrAuthFailed) }

// OpError is the error of an exchange with a server, shared with the other
// protocol packages: "battleye: <op> <addr>: <cause>". Op is "dial",
// "login" or "exec".
type OpError = neterr.OpError

func opError(op, addr string, err error) error { return neterr.Op("battleye", op, addr, err) }
