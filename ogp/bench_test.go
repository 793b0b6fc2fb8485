package ogp_test

import (
	"net/netip"
	"testing"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func BenchmarkAnswerAppend(b *testing.B) {
	a := ogptest.SampleAnswer(ogp.V091, 16)
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = a.Append(buf[:0], ogp.V091); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkParseAnswer(b *testing.B) {
	a := ogptest.SampleAnswer(ogp.V091, 16)
	body, _ := a.Append(nil, ogp.V091)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ogp.ParseAnswer(body, ogp.V091); err != nil {
			b.Fatal(err)
		}
	}
}

// discard is a PacketWriter that counts datagrams.
type discard struct{ n int }

func (d *discard) WriteToUDPAddrPort(p []byte, _ netip.AddrPort) (int, error) {
	d.n++
	return len(p), nil
}

// BenchmarkServerAnswers measures HandlePacket on a proven Default Query
// for everything (16 players), without sockets.
func BenchmarkServerAnswers(b *testing.B) {
	a := ogptest.SampleAnswer(ogp.V091, 16)
	s := &ogp.Server{NoChallenge: true, RateLimit: -1,
		Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) { return a, nil })}
	q := ogp.QueryAll(ogp.V091)
	h := ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagRequestID | ogp.FlagSplit, RequestID: 1, MaxBytesPerPacket: 1400}
	pkt, _ := h.AppendBinary(nil)
	pkt, _ = q.Append(pkt, ogp.V091)
	from := netip.MustParseAddrPort("127.0.0.1:5000")
	var w discard
	b.ReportAllocs()
	for b.Loop() {
		s.HandlePacket(&w, from, pkt)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "answers/s")
	if w.n < b.N {
		b.Fatalf("%d datagrams for %d queries", w.n, b.N)
	}
}

// BenchmarkClientQuery is a full loopback round trip.
func BenchmarkClientQuery(b *testing.B) {
	p, _ := ogptest.LookupProfile("v0.91")
	srv := ogptest.NewServer(p)
	defer srv.Close()
	c := &ogp.Client{}
	defer c.Close()
	q := ogp.QueryAll(ogp.V091)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Query(b.Context(), srv.Addr(), &q); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "queries/s")
}

// BenchmarkServerChallenge measures HandlePacket on an unproven Default
// Query, the path a flood of spoofed queries takes: error 3 with the copy
// of the request.
func BenchmarkServerChallenge(b *testing.B) {
	s := sampleServer(ogp.V091, 16)
	q := ogp.QueryAll(ogp.V091)
	pkt := packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID | ogp.FlagSplit, RequestID: 1, MaxBytesPerPacket: 1400})
	pkt, _ = q.Append(pkt, ogp.V091)
	from := netip.MustParseAddrPort("127.0.0.1:5000")
	var w discard
	b.ReportAllocs()
	for b.Loop() {
		s.HandlePacket(&w, from, pkt)
	}
	if w.n < b.N {
		b.Fatalf("%d datagrams for %d queries", w.n, b.N)
	}
}
