package ogp

import "fmt"

// Describe names an OGP datagram from its header in a few words, for
// debugging output: its type, flags, challenge, request ID, body size and
// fragment number, or why it is not OGP.
func Describe(b []byte) string {
	h, body, err := ParseHeader(b)
	if err != nil {
		return err.Error()
	}
	desc := fmt.Sprintf("OGP %s, flags %s, challenge %#x, request id %#x, body %d bytes", h.Type, h.Flags, h.Challenge, h.RequestID, len(body))
	if h.Flags&FlagSplit != 0 && h.Flags&FlagAnswer != 0 {
		desc += fmt.Sprintf(", fragment %d of %d", int(h.SplitNo)+1, h.SplitCount)
	}
	return desc
}
