package battleye_test

import (
	"context"
	"testing"

	"github.com/gsq-project/gsq/battleye"
	"github.com/gsq-project/gsq/battleye/betest"
)

func BenchmarkParsePacket(b *testing.B) {
	pkt, _ := battleye.Packet{Type: battleye.TypeCommand, Seq: 7, Total: 3, Index: 1, Data: make([]byte, 1024)}.AppendBinary(nil)
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if _, err := battleye.ParsePacket(pkt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExec is one command and its answer over loopback UDP to the
// fake, round trip included.
func BenchmarkExec(b *testing.B) {
	s := betest.NewServer(betest.DayZ, "pw", nil)
	defer s.Close()
	c, err := battleye.Dial(context.Background(), s.Addr().String(), "pw", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Exec(context.Background(), "version"); err != nil {
			b.Fatal(err)
		}
	}
}
