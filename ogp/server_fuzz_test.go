package ogp_test

import (
	"testing"

	"github.com/gsq-project/gsq/ogp"
)

// FuzzServerHandlePacket feeds arbitrary datagrams to challenging servers
// of both dialects, whose answers (60 players) need several datagrams, and
// checks the amplification rule: unless the request carries the valid
// challenge, the answer is at most the request plus 32 bytes and at most
// three times the request, in one datagram.
func FuzzServerHandlePacket(f *testing.F) {
	all := ogp.QueryAll(ogp.V091)
	body, _ := all.Append(nil, ogp.V091)
	allV1 := ogp.QueryAll(ogp.V1)
	bodyV1, _ := allV1.Append(nil, ogp.V1)
	for _, seed := range [][]byte{
		packet(ogp.Header{Type: ogp.TypeDefault}, body...),
		packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 7}, body...),
		packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID | ogp.FlagSplit | ogp.FlagUTF8, RequestID: 7, MaxBytesPerPacket: 500}, bodyV1...),
		packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: 99}, 0x01),
		packet(ogp.Header{Type: ogp.TypeDefault}, 0x00),
		packet(ogp.Header{Type: ogp.TypeDefault}, 0x81),
		packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagSplit, MaxBytesPerPacket: 500}, append([]byte{0x01, 0x00}, make([]byte, 490)...)...),
		packet(ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge | ogp.FlagRequestID}),
		packet(ogp.Header{Type: ogp.TypeRcon}, 1),
		packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagSplit, MaxBytesPerPacket: 1}, body...),
		append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0, 0xFE, 0x01, 0x00}, make([]byte, 260)...),
	} {
		f.Add(seed)
	}
	servers := []*ogp.Server{sampleServer(ogp.V091, 60), sampleServer(ogp.V1, 60)}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, _, err := ogp.ParseHeader(b)
		for _, s := range servers {
			got := handle(s, b)
			if err == nil && h.Flags&ogp.FlagChallenge != 0 {
				if chal := learnChallenge(t, s); h.Challenge == chal {
					continue // proven
				}
			}
			total := 0
			for _, p := range got {
				total += len(p)
			}
			if limit := min(len(b)+32, 3*len(b)); total > limit || len(got) > 1 {
				t.Fatalf("%v: %d-byte request % X answered with %d bytes in %d datagrams", s.Dialect, len(b), b, total, len(got))
			}
		}
	})
}
