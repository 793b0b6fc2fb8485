package mcquery

import "fmt"

// Describe names a Query datagram in a few words, for gsq's --debug hex
// dumps: a request (by the FE FD magic), or a reply (by its type).
func Describe(b []byte) string {
	if r, err := ParseRequest(b); err == nil {
		switch {
		case r.Type == TypeHandshake:
			return fmt.Sprintf("handshake, session %#x", r.SessionID)
		case r.Full:
			return fmt.Sprintf("full stat request, token %d", r.Token)
		default:
			return fmt.Sprintf("basic stat request, token %d", r.Token)
		}
	}
	if _, token, err := ParseHandshakeReply(b); err == nil {
		return fmt.Sprintf("handshake reply, token %d", token)
	}
	if _, s, err := ParseFullStat(b); err == nil {
		return fmt.Sprintf("full stat, %d keys, %d players", len(s.KV), len(s.Players))
	}
	if _, s, err := ParseBasicStat(b); err == nil {
		return fmt.Sprintf("basic stat, %d of %d players", s.NumPlayers, s.MaxPlayers)
	}
	return "not a Query datagram"
}
