package scan

import (
	"context"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/protocol"
)

// BenchmarkScanFleet scans an in-process fleet of 1000 servers (info,
// players and a 3-fragment rules split each over A2S; the whole default
// query over OGP) per op; the fleet's work counts too. Per target, divide
// by 1000. bench/scan/compare.sh measures the gsq binary on its own.
func BenchmarkScanFleet(b *testing.B) {
	f, err := sim.StartFleetAnywhere(sim.FleetConfig{N: 1000, Challenge: true, Host: "127.0.0.1"})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var list strings.Builder
	for i := range f.Len() {
		list.WriteString(f.Addr(i).String() + "\n")
	}
	for _, tc := range []struct {
		name  string
		query protocol.Query
	}{{"a2s", nil}, {"ogp", ogpQuery(ogp.V091)}} {
		b.Run(tc.name, func(b *testing.B) {
			s := &Scanner{Query: tc.query, Rate: -1}
			b.ReportAllocs()
			answered, resent := 0, int64(0)
			for b.Loop() {
				sum, err := s.Scan(context.Background(), strings.NewReader(list.String()), func(*Outcome) {})
				if err != nil {
					b.Fatal(err)
				}
				answered, resent = answered+sum.Answered, resent+sum.Resent
			}
			// A loaded machine delays the fleet's answers: resends, and
			// late ones time out. Those say how the figures were taken.
			b.ReportMetric(float64(answered)/float64(b.N*f.Len())*100, "%answered")
			b.ReportMetric(float64(resent)/float64(b.N), "resent/op")
		})
	}
}
