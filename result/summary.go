package result

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
	"unicode/utf8"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/textenc"
	"github.com/gsq-project/gsq/ogp"
)

// Summary is what every protocol can say about a server, under the same
// keys whatever the protocol, so that a script or the monitor reading
// results from A2S and OGP servers alike need not know where each protocol
// keeps its fields. A field the server did not report is nil, and is left
// out of the JSON encoding rather than zero-filled.
//
// The strings are text for display: valid UTF-8 as the server sent it, and
// any other byte read as Latin-1. The exact bytes are in the protocol's
// own section (Result.A2S, Result.OGP), and in its JSON with a base64 twin.
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
func (s *Summary) AppendJSON(b []byte) []byte {
	o := beginObject(b)
	optString(&o, "name", s.Name)
	optString(&o, "map", s.Map)
	optString(&o, "game", s.Game)
	optInt(&o, "players", s.Players)
	optInt(&o, "max_players", s.MaxPlayers)
	optInt(&o, "bots", s.Bots)
	if s.Password != nil {
		o.bool("password", *s.Password)
	}
	optString(&o, "version", s.Version)
	optString(&o, "connect", s.Connect)
	return o.end()
}

func optString(o *object, k string, v *string) {
	if v != nil {
		o.str(k, *v)
	}
}

func optInt(o *object, k string, v *int) {
	if v != nil {
		o.int(k, int64(*v))
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
	o := beginObject(b)
	o.str("kind", string(e.Kind))
	o.str("message", e.Message)
	return o.end()
}

// KindOf classifies an error of the a2s, ogp or net packages:
//
//   - an *Error keeps its kind;
//   - context.Canceled is canceled;
//   - a ban reply (a2s.ErrBanned, OGP error answer 0) is refused;
//   - a name that does not resolve (*net.DNSError), and a port or host the
//     network reports closed or unreachable (a2s.ErrUnreachable,
//     ogp.ErrUnreachable, ECONNREFUSED, which a connected UDP socket reports after an ICMP
//     port unreachable, EHOSTUNREACH, ENETUNREACH) are unreachable;
//   - a timeout (a net.Error whose Timeout reports true,
//     os.ErrDeadlineExceeded, context.DeadlineExceeded) is timeout;
//   - anything else, such as a reply that does not parse, is protocol.
func KindOf(err error) Kind {
	var e *Error
	var dns *net.DNSError
	var ne net.Error
	var se *ogp.ServerError
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Kind
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.Is(err, a2s.ErrBanned), errors.As(err, &se) && se.Code == ogp.ErrorBanned:
		return KindRefused
	case errors.As(err, &dns), errors.Is(err, a2s.ErrUnreachable), errors.Is(err, ogp.ErrUnreachable), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return KindUnreachable
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, context.DeadlineExceeded):
		return KindTimeout
	}
	return KindProtocol
}
