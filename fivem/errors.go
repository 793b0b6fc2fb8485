package fivem

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gsq-project/gsq/internal/neterr"
)

// Errors, inside an [*OpError]; test them with errors.Is.
var (
	// ErrTimeout: no whole answer in time (a server that never answers,
	// or a body that trickles); a net.Error matching
	// os.ErrDeadlineExceeded.
	ErrTimeout = neterr.TimeoutAlso("fivem: timeout")
	// ErrNotAvailable: the server disabled the endpoint (404 or 403 at
	// /players.json, as servers do since gamedig's #674).
	ErrNotAvailable = errors.New("fivem: endpoint disabled by the server")
	// ErrNotFiveM: the port answered, but not as FXServer (no
	// /info.json, or a body that is not its JSON).
	ErrNotFiveM = errors.New("fivem: not a FiveM server")
	// ErrServer: the server answered 5xx.
	ErrServer = errors.New("fivem: server error")
	// ErrStatus: another status than 200, 403, 404 or 5xx (a redirect
	// included: it is not followed).
	ErrStatus = errors.New("fivem: unexpected status")
	// ErrResponseTooLarge: a body beyond MaxBodySize; it was read no
	// further.
	ErrResponseTooLarge = errors.New("fivem: response too large")
)

// OpError is the error of an exchange with a server, shared with the
// other protocol packages: "fivem: <op> <addr>: <cause>", Op being the
// endpoint ("info", "players", "dynamic").
type OpError = neterr.OpError

func opError(op, addr string, err error) error { return neterr.Op("fivem", op, addr, err) }

// StatusError is an answer with an error status. It matches
// ErrNotAvailable for 403 and 404 at /players.json, ErrNotFiveM for 404
// elsewhere, ErrServer for 5xx and ErrStatus otherwise.
type StatusError struct {
	Code int
	Path string // the endpoint asked
	// Body is the start of the answer's body (up to 256 bytes).
	Body string
}

// Error returns "fivem: HTTP <code> at <path>" and the body's start.
func (e *StatusError) Error() string {
	s := fmt.Sprintf("fivem: HTTP %d at %s", e.Code, e.Path)
	if e.Unwrap() == ErrNotAvailable {
		s += " (the server disabled it)"
	}
	if e.Body != "" {
		s += ": " + e.Body
	}
	return s
}

// Unwrap returns the sentinel the status matches.
func (e *StatusError) Unwrap() error {
	switch {
	case (e.Code == 404 || e.Code == 403) && e.Path == PathPlayers:
		return ErrNotAvailable
	case e.Code == 404:
		return ErrNotFiveM
	case e.Code >= 500:
		return ErrServer
	}
	return ErrStatus
}

// ParseError reports a body that is not the endpoint's JSON: which
// endpoint, where, and why. It matches ErrNotFiveM.
type ParseError struct {
	Path   string
	Offset int64
	Err    error
}

// Error returns "fivem: parse <path> at offset N: <cause>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("fivem: parse %s at offset %d: %s", e.Path, e.Offset, strings.TrimPrefix(e.Err.Error(), "json: "))
}

// Unwrap returns the cause and ErrNotFiveM.
func (e *ParseError) Unwrap() []error { return []error{e.Err, ErrNotFiveM} }
