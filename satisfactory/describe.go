package satisfactory

import "fmt"

// Describe names a datagram of the Lightweight Query in a few words, for
// hex dumps: "poll, cookie 0x…", "reply, playing, cookie 0x…", or what
// is wrong with it.
func Describe(b []byte) string {
	if p, err := ParsePoll(b); err == nil {
		return fmt.Sprintf("poll, cookie %#x", p.Cookie)
	}
	s, err := ParseServerState(b)
	if err != nil {
		if _, ok := ReplyCookie(b); ok {
			return "malformed reply"
		}
		return "not a Lightweight Query datagram"
	}
	return fmt.Sprintf("reply, %v, cookie %#x", s.State, s.Cookie)
}
