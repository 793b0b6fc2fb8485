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
	for _, n := range []int{a2s.PaddedInfoSize, a2s.PaddedInfoSize + 100, 3000} {
		b, _ := a2s.Request{Type: a2s.TypeInfoRequest}.PadTo(n).AppendBinary(nil)
		f.Add(b)
	}
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 1, 0})
	f.Add([]byte{})
	s := &a2s.Server{Handler: staticHandler(f), RateLimit: -1, ChallengeSecret: []byte("fuzz")}
	// A server taking padded INFO requests, whose replies (split past
	// 1248 bytes) grow with the request: some fit it, some do not.
	padded := &a2s.Server{RateLimit: -1, ChallengeSecret: []byte("fuzz"), AcceptPaddedInfo: true,
		Handler: a2s.HandlerFunc(func(w a2s.ResponseWriter, r *a2s.Request) {
			_ = w.Write(append([]byte{0xFF, 0xFF, 0xFF, 0xFF, a2s.TypeInfoReply}, make([]byte, r.Padding*2%4000)...))
		})}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []*a2s.Server{s, padded} {
			var rec recorder
			s.HandlePacket(&rec, client1, b)
			if sent, n := rec.take(); n > len(b) {
				t.Fatalf("AcceptPaddedInfo %v: %d-byte request %x answered with %d bytes in %d datagrams", s.AcceptPaddedInfo, len(b), b, n, len(sent))
			}
		}
	})
}
