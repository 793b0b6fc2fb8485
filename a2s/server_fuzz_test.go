package a2s_test

import (
	"testing"

	"github.com/gsq-project/gsq/a2s"
)

// FuzzServerHandlePacket feeds arbitrary datagrams to a challenging server
// and checks the amplification rule: without a proven challenge the server
// never answers with more bytes than it received.
func FuzzServerHandlePacket(f *testing.F) {
	for _, req := range []a2s.Request{
		{Type: a2s.TypeInfoRequest},
		{Type: a2s.TypeInfoRequest, Challenge: 1, HasChallenge: true},
		{Type: a2s.TypeInfoRequest, Padding: 40},
		{Type: a2s.TypePlayerRequest},
		{Type: a2s.TypeRulesRequest, Challenge: 7, HasChallenge: true},
		{Type: a2s.TypePingRequest},
		{Type: a2s.TypePingRequest, Padding: 15},
		{Type: a2s.TypeChallengeRequestLegacy},
		{Type: a2s.TypeChallengeRequestLegacy, Padding: 4},
	} {
		b, err := req.AppendBinary(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 1, 0})
	f.Add([]byte{})
	h := staticHandler(f)
	s := &a2s.Server{Handler: h, RateLimit: -1, ChallengeSecret: []byte("fuzz")}
	f.Fuzz(func(t *testing.T, b []byte) {
		var rec recorder
		s.HandlePacket(&rec, client1, b)
		if sent, n := rec.take(); n > len(b) {
			t.Fatalf("%d-byte request %x answered with %d bytes in %d datagrams", len(b), b, n, len(sent))
		}
	})
}
