package bedrock

import "fmt"

// Describe names a RakNet datagram of the status exchange in a few
// words, for gsq's --debug hex dumps.
func Describe(b []byte) string {
	if p, err := ParsePing(b); err == nil {
		return fmt.Sprintf("unconnected ping, time %d", p.Time)
	}
	if p, err := ParsePong(b); err == nil {
		return fmt.Sprintf("unconnected pong, time %d, %d bytes of status", p.Time, len(p.Status))
	}
	return "not a RakNet ping or pong"
}
