package mcquery

import (
	"net/netip"
	"testing"
)

type recorder struct{ sent [][]byte }

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.sent = append(r.sent, append([]byte(nil), b...))
	return len(b), nil
}

var client1 = netip.MustParseAddrPort("192.0.2.1:40000")

func testServer(tb testing.TB) *Server {
	full := &FullStat{Players: []Text{Text("Steve")}}
	for _, k := range VanillaKeys {
		full.Set(k, Text("0"))
	}
	h, err := NewStaticHandler(full)
	if err != nil {
		tb.Fatal(err)
	}
	return &Server{Handler: h, RateLimit: -1, ChallengeSecret: []byte("fuzz")}
}

// FuzzServerHandlePacket feeds arbitrary datagrams to the server and
// checks the amplification rule: without a proven token no reply is
// larger than the request plus 32 bytes, nor three times the request.
func FuzzServerHandlePacket(f *testing.F) {
	for _, r := range []Request{{Type: TypeHandshake, SessionID: 1}, {Type: TypeHandshake, SessionID: 0xFFFFFFFF},
		{Type: TypeStat, SessionID: 1, Token: 5}, {Type: TypeStat, SessionID: 1, Token: -5, Full: true}} {
		b, _ := r.AppendBinary(nil)
		f.Add(b)
	}
	f.Add([]byte{0xFE, 0xFD, 0x09})
	f.Add([]byte{})
	s := testServer(f)
	signed := testServer(f)
	signed.SignedTokens = true
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, s := range []*Server{s, signed} {
			var rec recorder
			s.HandlePacket(&rec, client1, b)
			for _, out := range rec.sent {
				if len(out) > min(3*len(b), len(b)+32) {
					t.Fatalf("%d-byte request %x answered with %d bytes before a token", len(b), b, len(out))
				}
			}
		}
	})
}

// The handshake's token opens the stat, basic or full by the length;
// another token gets nothing; a signed server's tokens go negative.
func TestServerTokens(t *testing.T) {
	t.Parallel()
	s := testServer(t)
	var rec recorder
	hs, _ := Request{Type: TypeHandshake, SessionID: 7}.AppendBinary(nil)
	s.HandlePacket(&rec, client1, hs)
	if len(rec.sent) != 1 {
		t.Fatal("no handshake reply")
	}
	sid, tok, err := ParseHandshakeReply(rec.sent[0])
	if err != nil || sid != 7 || tok < 0 || tok >= 1<<24 {
		t.Fatalf("%d %d %v", sid, tok, err)
	}
	for _, full := range []bool{false, true} {
		rec = recorder{}
		b, _ := Request{Type: TypeStat, SessionID: 7, Token: tok, Full: full}.AppendBinary(nil)
		s.HandlePacket(&rec, client1, b)
		if len(rec.sent) != 1 {
			t.Fatalf("full %v: %d replies", full, len(rec.sent))
		}
		if full {
			if _, fs, err := ParseFullStat(rec.sent[0]); err != nil || len(fs.Players) != 1 {
				t.Errorf("%+v %v", fs, err)
			}
		} else if _, _, err := ParseBasicStat(rec.sent[0]); err != nil {
			t.Error(err)
		}
	}
	rec = recorder{}
	b, _ := Request{Type: TypeStat, SessionID: 7, Token: tok + 1}.AppendBinary(nil)
	s.HandlePacket(&rec, client1, b)
	other := netip.MustParseAddrPort("192.0.2.1:40001")
	b, _ = Request{Type: TypeStat, SessionID: 7, Token: tok}.AppendBinary(nil)
	s.HandlePacket(&rec, other, b) // tokens are per address and port
	if len(rec.sent) != 0 {
		t.Errorf("%d replies to bad tokens", len(rec.sent))
	}
	signed := testServer(t)
	signed.SignedTokens = true
	neg := false
	for i := range 64 {
		rec = recorder{}
		signed.HandlePacket(&rec, netip.AddrPortFrom(client1.Addr(), uint16(i+1)), hs)
		_, tok, _ := ParseHandshakeReply(rec.sent[0])
		neg = neg || tok < 0
	}
	if !neg {
		t.Error("no negative token from 64 sources")
	}
}
