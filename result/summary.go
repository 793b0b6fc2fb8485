package result

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/internal/neterr"
	"github.com/gsq-project/gsq/internal/textenc"
)

// Summary is what every protocol can say about a server, under the same
// keys whatever the protocol, so that a script or the monitor reading
// results from A2S and OGP servers alike need not know where each protocol
// keeps its fields. A field the server did not report is nil, and is left
// out of the JSON encoding rather than zero-filled.
//
// The strings are text for display: valid UTF-8 as the server sent it, and
// any other byte read as Latin-1. The exact bytes are in the protocol's
// own sections (Result.Detail), and in its JSON with a base64 twin.
type Summary struct {
	Name       *string `json:"name,omitempty"`
	Map        *string `json:"map,omitempty"`
	Game       *string `json:"game,omitempty"`
	Players    *int    `json:"players,omitempty"`
	MaxPlayers *int    `json:"max_players,omitempty"`
	Bots       *int    `json:"bots,omitempty"`
	Password   *bool   `json:"password,omitempty"`
	Version    *string `json:"version,omitempty"`
	// Connect is the address a player connects to, when known: the game
	// port a server announces, on the address that was queried.
	Connect *string `json:"connect,omitempty"`
}

// MarshalJSON encodes s as AppendJSON does.
func (s Summary) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// AppendJSON appends s to b as a JSON object, without reflection: the keys
// of the struct tags in their order, nil fields left out (what
// encoding/json writes for the struct's fields, HTML characters
// unescaped).
func (s *Summary) AppendJSON(b []byte) []byte { return s.appendJSON(b, false) }

// AppendHTMLSafeJSON is AppendJSON with <, > and & escaped as \u003c,
// \u003e and \u0026, as encoding/json escapes them by default: for JSON
// that may end up inside an HTML page, such as the monitor's web API.
func (s *Summary) AppendHTMLSafeJSON(b []byte) []byte { return s.appendJSON(b, true) }

func (s *Summary) appendJSON(b []byte, html bool) []byte {
	o := jsonenc.Begin(b, html)
	optString(&o, "name", s.Name)
	optString(&o, "map", s.Map)
	optString(&o, "game", s.Game)
	optInt(&o, "players", s.Players)
	optInt(&o, "max_players", s.MaxPlayers)
	optInt(&o, "bots", s.Bots)
	if s.Password != nil {
		o.Bool("password", *s.Password)
	}
	optString(&o, "version", s.Version)
	optString(&o, "connect", s.Connect)
	return o.End()
}

func optString(o *jsonenc.Object, k string, v *string) {
	if v != nil {
		o.Str(k, *v)
	}
}

func optInt(o *jsonenc.Object, k string, v *int) {
	if v != nil {
		o.Int(k, int64(*v))
	}
}

// summaryValues holds what the fields of one Summary point to, so that
// a Summary takes two allocations: this block, and one string holding
// the bytes of every string field. A Summary kept for long (the monitor
// keeps the last one of every server) holds on to nothing else of the
// reply.
type summaryValues struct {
	players, maxPlayers, bots int
	password                  bool
	strs                      [5]string
}

// setStrings sets strs[i] to raws[i] decoded for display.
func (v *summaryValues) setStrings(raws ...[]byte) {
	var buf [256]byte
	b := buf[:0]
	var ends [len(v.strs)]int
	for i, raw := range raws {
		b = appendDecoded(b, raw)
		ends[i] = len(b)
	}
	all := string(b)
	start := 0
	for i := range raws {
		v.strs[i] = all[start:ends[i]]
		start = ends[i]
	}
}

// appendDecoded appends raw decoded for display: valid UTF-8 as is, any
// other byte read as Latin-1 (internal/textenc).
func appendDecoded(b, raw []byte) []byte {
	if utf8.Valid(raw) {
		return append(b, raw...)
	}
	return append(b, textenc.Decode(raw)...)
}

// Kind classifies an error, as the JSON contract's "kind" field does.
type Kind string

// The kinds of errors.
const (
	KindTimeout     Kind = "timeout"     // no answer in time
	KindUnreachable Kind = "unreachable" // the port is closed, or the name does not resolve
	KindProtocol    Kind = "protocol"    // the server answered, badly
	KindAuth        Kind = "auth"        // authentication failed
	KindRefused     Kind = "refused"     // the server refused us (a ban reply)
	KindCanceled    Kind = "canceled"    // the caller stopped waiting (Ctrl-C)
	KindInvalid     Kind = "invalid"     // the target is not a valid address; nothing was sent
)

// Error is why a section, or a whole server, failed. It is an error
// itself: Error returns Message, and Unwrap the error it was made from
// (nil for an Error decoded from JSON), so errors.Is sees through it.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// Err is the error this one was made from, for Go callers; it is not
	// part of the JSON encoding.
	Err error `json:"-"`
}

// NewError classifies err (see KindOf) and returns it as an Error; nil
// for nil.
func NewError(err error) *Error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return &Error{Kind: KindOf(err), Message: err.Error(), Err: err}
}

// Error returns the message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the error e was made from.
func (e *Error) Unwrap() error { return e.Err }

// appendJSON appends e as {"kind":...,"message":...}.
func (e *Error) appendJSON(b []byte) []byte {
	o := jsonenc.Begin(b, false)
	o.Str("kind", string(e.Kind))
	o.Str("message", e.Message)
	return o.End()
}

// KindOf classifies an error of a protocol package or of package net:
//
//   - an *Error keeps its kind;
//   - context.Canceled is canceled;
//   - an error with a Refused method that reports true (a2s.BannedError,
//     an OGP error answer 0) is refused: the server refused us;
//   - a name that does not resolve (*net.DNSError), and a port or host the
//     network reports closed or unreachable (the protocols' ErrUnreachable,
//     ECONNREFUSED, which a connected UDP socket reports after an ICMP
//     port unreachable, EHOSTUNREACH, ENETUNREACH) are unreachable;
//   - a timeout (a net.Error whose Timeout reports true,
//     os.ErrDeadlineExceeded, context.DeadlineExceeded) is timeout;
//   - anything else, such as a reply that does not parse, is protocol.
func KindOf(err error) Kind {
	var e *Error
	var dns *net.DNSError
	var ne net.Error
	var refusal interface{ Refused() bool }
	var unreachable *neterr.Unreachable
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, console.ErrAuthFailed):
		return KindAuth
	case errors.As(err, &refusal) && refusal.Refused():
		return KindRefused
	case errors.As(err, &dns), errors.As(err, &unreachable), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return KindUnreachable
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	return KindProtocol
}
