package slp_test

import (
	"context"
	"net"
	"testing"

	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/minecraft/slp"
)

func benchmarkParseStatus(b *testing.B, profile string) {
	p, err := mctest.LookupProfile(profile)
	if err != nil {
		b.Fatal(err)
	}
	json := []byte(p.StatusJSON)
	if len(json) == 0 {
		json, _ = mctest.DefaultStatus().AppendJSON(nil)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(json)))
	for b.Loop() {
		if _, err := slp.ParseStatus(json, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseStatus parses the vanilla fake's status (1.3 KB, a small
// favicon) and the huge one's (110 KB: a 50 KB favicon and 1,000 Forge
// mods compressed in forgeData.d).
func BenchmarkParseStatus(b *testing.B) {
	b.Run("vanilla", func(b *testing.B) { benchmarkParseStatus(b, "vanilla") })
	b.Run("forge-100KB", func(b *testing.B) { benchmarkParseStatus(b, "huge") })
}

// BenchmarkServer measures the status exchanges a Server answers a
// second over loopback: connection, handshake and request, status, ping,
// pong.
func BenchmarkServer(b *testing.B) {
	h, err := slp.NewStaticHandler(mctest.DefaultStatus())
	if err != nil {
		b.Fatal(err)
	}
	srv := &slp.Server{Handler: h, MaxConnsPerSource: -1}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go srv.Serve(l)
	defer srv.Shutdown(context.Background())
	addr := l.Addr().(*net.TCPAddr).AddrPort()
	c := &slp.Client{}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Status(ctx, addr); err != nil {
			b.Fatal(err)
		}
	}
}
