package steamapi

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/neterr"
)

// Errors, inside an [*OpError]; test them with errors.Is.
var (
	// ErrNoKey: GetServerList was asked without a key. Nothing was sent.
	ErrNoKey = errors.New("steamapi: no Web API key (get one at https://steamcommunity.com/dev/apikey)")
	// ErrBadKey: the key holds what a URL cannot carry. Nothing was sent.
	ErrBadKey = errors.New("steamapi: the Web API key holds a control character or a space")
	// ErrForbidden: 401 or 403, the key was refused (a wrong or revoked
	// key), or the API refuses the method to it.
	ErrForbidden = errors.New("steamapi: forbidden: the Web API refused the key")
	// ErrRateLimited: 429, the API asks for fewer requests, and the
	// retries (or the wait it asked for) ran out. A [*StatusError] says
	// how long it asked to wait.
	ErrRateLimited = errors.New("steamapi: rate limited (429)")
	// ErrServer: the API answered 5xx.
	ErrServer = errors.New("steamapi: server error")
	// ErrStatus: the API answered another status than 200, 401, 403,
	// 404, 429 or 5xx (a redirect included: it is not followed).
	ErrStatus = errors.New("steamapi: unexpected status")
	// ErrNotAPI: the URL answered, but not as the Web API (404 at both
	// method versions, or a body that is not its JSON).
	ErrNotAPI = errors.New("steamapi: not the Steam Web API")
	// ErrResponseTooLarge: a body beyond MaxBodySize; it was read no
	// further, and the servers before the cut were handed out.
	ErrResponseTooLarge = errors.New("steamapi: response too large")
	// ErrTimeout: no whole answer within Timeout; a net.Error matching
	// os.ErrDeadlineExceeded.
	ErrTimeout = neterr.TimeoutAlso("steamapi: timeout")
	// ErrFailed: GetServersAtAddress answered success false.
	ErrFailed = errors.New("steamapi: the API reported a failure")
	// ErrTooFrequent: GetServersAtAddress was asked about an address
	// again within AddressInterval. Nothing was sent.
	ErrTooFrequent = errors.New("steamapi: asked again too soon (GetServersAtAddress is for troubleshooting: once in 10 minutes)")
	// ErrCutShort: a listing reached the request cap in a partition that
	// could be split no further, or reached MaxRequests: the list is
	// incomplete ([ListResult.CutShort] says where).
	ErrCutShort = errors.New("steamapi: listing cut short")
)

// OpError is the error of an exchange with the API, shared with the
// other protocol packages: "steamapi: <op> <host>: <cause>", Op being the
// method ("GetServerList", "GetServersAtAddress").
type OpError = neterr.OpError

func opError(op, host string, err error) error { return neterr.Op("steamapi", op, host, err) }

// StatusError is an answer with an error status. It matches ErrForbidden
// for 401 and 403, ErrRateLimited for 429, ErrServer for 5xx, ErrNotAPI
// for 404 and ErrStatus otherwise.
type StatusError struct {
	Code int
	// RetryAfter is how long a 429 asked to wait (its Retry-After), zero
	// when it did not say.
	RetryAfter time.Duration
	// Body is the start of the answer's body (up to 256 bytes), for
	// people.
	Body string
}

// Error returns "steamapi: HTTP <code>", what it means, and the body's
// start.
func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "steamapi: HTTP %d", e.Code)
	switch {
	case e.Code == 401 || e.Code == 403:
		b.WriteString(" (the key was refused: check it, or make a new one)")
	case e.Code == 429 && e.RetryAfter > 0:
		fmt.Fprintf(&b, " (too many requests; asked to wait %v)", e.RetryAfter)
	case e.Code == 429:
		b.WriteString(" (too many requests)")
	}
	if e.Body != "" {
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	return b.String()
}

// Unwrap returns the sentinel the status matches.
func (e *StatusError) Unwrap() error {
	switch {
	case e.Code == 401 || e.Code == 403:
		return ErrForbidden
	case e.Code == 429:
		return ErrRateLimited
	case e.Code == 404:
		return ErrNotAPI
	case e.Code >= 500:
		return ErrServer
	}
	return ErrStatus
}

// ParseError reports an answer whose JSON does not read: which method,
// where in the body, and why.
type ParseError struct {
	Method string // "GetServerList", "GetServersAtAddress"
	Offset int64  // byte offset in the body
	Err    error  // the decoder's error
}

// Error returns "steamapi: parse <method> at offset N: <cause>".
func (e *ParseError) Error() string {
	return fmt.Sprintf("steamapi: parse %s at offset %d: %v", e.Method, e.Offset, e.Err)
}

// Unwrap returns the cause and ErrNotAPI: a body that is not the API's
// JSON is not the API.
func (e *ParseError) Unwrap() []error { return []error{e.Err, ErrNotAPI} }

// asStatus returns the *StatusError in err's chain.
func asStatus(err error) (*StatusError, bool) {
	var se *StatusError
	ok := errors.As(err, &se)
	return se, ok
}
