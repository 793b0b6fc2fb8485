package a2s

import (
	"bytes"

	"github.com/gsq-project/gsq/internal/wire"
)

// Ping is an A2A_PING reply ('j'). Source servers send the string
// "00000000000000"; GoldSource servers send an empty string (a single
// NUL), and some send nothing at all after the type byte.
type Ping struct {
	Payload Text
}

// SourcePingPayload is the payload Source servers put in an A2A_PING reply.
const SourcePingPayload = "00000000000000"

// ParsePing parses an A2A_PING reply. Payload is the bytes up to the first
// NUL, or to the end of the packet when there is none. It does not alias b.
func ParsePing(b []byte) (Ping, error) {
	r, _, err := openSimple(b, "ping", string(TypePingReply))
	if err != nil {
		return Ping{}, err
	}
	rest := r.Rest()
	if i := bytes.IndexByte(rest, 0); i >= 0 {
		rest = rest[:i]
	}
	return Ping{Payload: bytes.Clone(rest)}, nil
}

// AppendBinary appends the reply, header included: Payload and a NUL.
func (p Ping) AppendBinary(b []byte) ([]byte, error) {
	out := wire.AppendUint32(b, HeaderSimple)
	out = append(out, TypePingReply)
	out, err := appendText(out, p.Payload)
	if err != nil {
		return b, err
	}
	return out, nil
}
