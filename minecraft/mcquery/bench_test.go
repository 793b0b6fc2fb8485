package mcquery

import (
	"net/netip"
	"testing"
)

func benchFullStat(players int) *FullStat {
	full := &FullStat{}
	for _, k := range VanillaKeys {
		full.Set(k, Text("value"))
	}
	full.Set("numplayers", Text("100"))
	for i := range players {
		full.Players = append(full.Players, Text("player_"+string(rune('a'+i%26))+string(rune('a'+i/26%26))))
	}
	return full
}

// BenchmarkParseFullStat parses a full stat of 100 players.
func BenchmarkParseFullStat(b *testing.B) {
	reply, err := benchFullStat(100).AppendReply(nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, _, err := ParseFullStat(reply); err != nil {
			b.Fatal(err)
		}
	}
}

// counter counts the datagrams a server sends.
type counter int

func (c *counter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	*c++
	return len(b), nil
}

// BenchmarkServerFullStat measures the full stats a Server answers a
// second (a stat request with a valid token, in process).
func BenchmarkServerFullStat(b *testing.B) {
	h, err := NewStaticHandler(benchFullStat(100))
	if err != nil {
		b.Fatal(err)
	}
	s := &Server{Handler: h, RateLimit: -1}
	var rec recorder
	hs, _ := Request{Type: TypeHandshake, SessionID: 1}.AppendBinary(nil)
	s.HandlePacket(&rec, client1, hs)
	_, tok, err := ParseHandshakeReply(rec.sent[0])
	if err != nil {
		b.Fatal(err)
	}
	req, _ := Request{Type: TypeStat, SessionID: 1, Token: tok, Full: true}.AppendBinary(nil)
	var n counter
	b.ReportAllocs()
	for b.Loop() {
		s.HandlePacket(&n, client1, req)
	}
	if n == 0 {
		b.Fatal("no replies")
	}
}
