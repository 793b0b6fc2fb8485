package a2s

import (
	"bytes"
	"errors"

	"github.com/gsq-project/gsq/internal/wire"
)

// ErrBanned means the server refused to answer with an 'l' reply:
// GoldSource non-Steam servers send one, with a line of text such as
// "You have been banned from this server.", to any query from an address
// they ban (reported in the WoozyMasta/a2s issue tracker, #6). Retrying
// will not help.
var ErrBanned = errors.New("a2s: banned by the server")

// BannedError is the error of a query the server refused with an 'l'
// reply. It matches [ErrBanned] under errors.Is.
type BannedError struct {
	Message Text // the server's text, without its NUL and line ends
}

func (e *BannedError) Error() string {
	if len(e.Message) == 0 {
		return ErrBanned.Error()
	}
	return ErrBanned.Error() + ": " + e.Message.UTF8()
}

// Is reports whether target is ErrBanned.
func (e *BannedError) Is(target error) bool { return target == ErrBanned }

// ParseBanned parses an 'l' reply and returns its message. The text runs
// to a NUL or to the end of the datagram, as servers differ; trailing
// line ends are dropped.
func ParseBanned(b []byte) (Text, error) {
	r, _, err := openSimple(b, "banned", string(TypeBannedReply))
	if err != nil {
		return nil, err
	}
	msg := r.Rest()
	if i := bytes.IndexByte(msg, 0); i >= 0 {
		msg = msg[:i]
	}
	return Text(bytes.Clone(bytes.TrimRight(msg, "\r\n"))), nil
}

// AppendBanned appends an 'l' reply carrying msg.
func AppendBanned(b []byte, msg Text) ([]byte, error) {
	b = wire.AppendUint32(b, HeaderSimple)
	b = append(b, TypeBannedReply)
	return appendText(b, msg)
}

// Refused reports true: the server refused the client, which is how
// programs that read errors of several protocols (package result's
// KindOf) tell a refusal from other failures.
func (e *BannedError) Refused() bool { return true }
