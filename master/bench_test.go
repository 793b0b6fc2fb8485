package master

import (
	"net/netip"
	"testing"
)

// BenchmarkParseReply parses a full page.
func BenchmarkParseReply(b *testing.B) {
	reply, _ := AppendReply(nil, fleetList(DefaultPageSize-1), true)
	dst := make([]netip.AddrPort, 0, DefaultPageSize)
	b.ReportAllocs()
	b.SetBytes(int64(len(reply)))
	for b.Loop() {
		var err error
		if dst, _, err = ParseReply(reply, dst[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkServerPage measures the pages a Server answers a second over a
// fleet of 10,000 (in process, budgets off): the filter evaluated over the
// fleet, and one page written.
func BenchmarkServerPage(b *testing.B) {
	s := &Server{Handler: FleetHandler(testFleet(10000)), RateLimit: -1, GlobalLimit: -1}
	query, _ := (&Query{Region: 0xFF, Filter: `\appid\10\empty\1`, Seed: netip.MustParseAddrPort("10.2.10.0:27015")}).AppendBinary(nil)
	var rec counter
	from := netip.MustParseAddrPort("192.0.2.1:5000")
	b.ReportAllocs()
	for b.Loop() {
		s.HandlePacket(&rec, from, query)
	}
	if rec == 0 {
		b.Fatal("no pages")
	}
}

type counter int

func (c *counter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	*c++
	return len(b), nil
}
