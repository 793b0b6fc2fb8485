package bedrock

import (
	"net/netip"
	"testing"
)

// BenchmarkParsePong parses a pong and its status string.
func BenchmarkParsePong(b *testing.B) {
	pong, _ := Pong{Time: 1, Status: Text("MCPE;§r§aWILDWOOD SMP§r;545;1.19.21;111;300;-305653527360353208;line2;Survival;1;19132;0;")}.AppendBinary(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(pong)))
	for b.Loop() {
		p, err := ParsePong(pong)
		if err != nil {
			b.Fatal(err)
		}
		_ = ParseStatus(p.Status)
	}
}

type counter int

func (c *counter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	*c++
	return len(b), nil
}

// BenchmarkServerPong measures the pings a Server answers a second (in
// process, budgets off).
func BenchmarkServerPong(b *testing.B) {
	s := &Server{Handler: NewStaticHandler(testStatus()), RateLimit: -1, GlobalLimit: -1}
	ping, _ := Ping{Time: 7}.AppendBinary(nil)
	var n counter
	b.ReportAllocs()
	for b.Loop() {
		s.HandlePacket(&n, client1, ping)
	}
	if n == 0 {
		b.Fatal("no pongs")
	}
}
