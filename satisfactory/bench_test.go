package satisfactory

import (
	"net/netip"
	"testing"
)

// BenchmarkParseServerState parses a reply with four sub-states.
func BenchmarkParseServerState(b *testing.B) {
	s := &ServerState{State: StatePlaying, NetCL: 416835, SubStates: []SubState{{0, 1}, {1, 1}, {2, 1}, {3, 1}}, Name: Text("gsq Satisfactory server")}
	reply, _ := s.AppendBinary(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		if _, err := ParseServerState(reply); err != nil {
			b.Fatal(err)
		}
	}
}

type counter int

func (c *counter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	*c++
	return len(b), nil
}

// BenchmarkServerState measures the polls a Server answers a second (in
// process, budgets off).
func BenchmarkServerState(b *testing.B) {
	st := &ServerState{State: StatePlaying, Name: Text("gsq")}
	s := &Server{Handler: HandlerFunc(func(netip.AddrPort) *ServerState { return st }), RateLimit: -1, GlobalLimit: -1}
	poll, _ := Poll{Cookie: 5}.AppendBinary(nil)
	var n counter
	from := netip.MustParseAddrPort("192.0.2.1:1")
	b.ReportAllocs()
	for b.Loop() {
		s.HandlePacket(&n, from, poll)
	}
	if n == 0 {
		b.Fatal("no replies")
	}
}
