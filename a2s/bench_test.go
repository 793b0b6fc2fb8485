package a2s

import (
	"testing"
)

func BenchmarkParseInfo(b *testing.B) {
	pkt := mustAppend(b, dayz())
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if _, err := ParseInfo(pkt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParsePlayers(b *testing.B) {
	p := &Players{}
	for i := range 64 {
		p.List = append(p.List, Player{Index: uint8(i), Name: Text("some player name"), Score: int32(i), Duration: 1234.5})
	}
	pkt := mustAppend(b, p)
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if _, err := ParsePlayers(pkt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseRules(b *testing.B) {
	pkt := rulesPayload(b) // 150 rules, 5677 bytes
	b.ReportAllocs()
	b.SetBytes(int64(len(pkt)))
	for b.Loop() {
		if _, err := ParseRules(pkt); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendInfo(b *testing.B) {
	in := dayz()
	buf := make([]byte, 0, 1400)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.AppendBinary(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReassemble(b *testing.B) {
	payload := rulesPayload(b)
	dgs, err := SplitWriter{}.AppendFragments(nil, 1, payload)
	if err != nil {
		b.Fatal(err)
	}
	var r Reassembler
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		// Reverse order, the worst case for the format probe.
		for i := len(dgs) - 1; i >= 0; i-- {
			f, err := ParseFragment(dgs[i])
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := r.Add(f); err != nil {
				b.Fatal(err)
			}
		}
	}
}
