package a2s

import "github.com/gsq-project/gsq/internal/wire"

// ParseChallenge parses an S2C_CHALLENGE ('A') reply and returns the
// challenge number. Treat it as opaque: echo it back with
// Request.Challenge, which writes the same four bytes. Trailing bytes are
// ignored.
func ParseChallenge(b []byte) (uint32, error) {
	r, _, err := openSimple(b, "challenge", string(TypeChallengeReply))
	if err != nil {
		return 0, err
	}
	c, err := r.Uint32()
	if err != nil {
		return 0, parseErr("challenge", r.Offset(), err)
	}
	return c, nil
}

// AppendChallenge appends an S2C_CHALLENGE reply carrying c.
func AppendChallenge(b []byte, c uint32) []byte {
	b = wire.AppendUint32(b, HeaderSimple)
	b = append(b, TypeChallengeReply)
	return wire.AppendUint32(b, c)
}
