package rcon

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func fuzzSeeds(f *testing.F) {
	f.Add(raw(le(10), le(1), le(2), []byte{0, 0}))
	f.Add(raw(le(15), le(5), le(0), []byte("hello\x00\x00")))
	f.Add(raw(le(18), le(9), le(0), []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0}))
	f.Add(raw(le(10), le(9), le(0), []byte{0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0}))
	f.Add(raw(le(9), le(1), le(0)))
	f.Add(raw(le(-1)))
	f.Add(raw(le(1<<30), le(1), le(0)))
	f.Add(raw(le(11), le(1), le(0), []byte("ab\x00"), le(10), le(2), le(2), []byte{0, 0}))
}

// FuzzParsePacket: never panics, reports consistent lengths, and a parsed
// packet survives an encode/parse round trip.
func FuzzParsePacket(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, n, err := ParsePacket(b, 1<<16)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if n < 14 || n > len(b) || len(p.Body) > n-12 {
			t.Fatalf("n=%d body=%d for %d input bytes", n, len(p.Body), len(b))
		}
		enc, err := p.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		q, m, err := ParsePacket(enc, 1<<16+2)
		if err != nil || m != len(enc) || q.ID != p.ID || q.Type != p.Type || !bytes.Equal(q.Body, p.Body) {
			t.Fatalf("round trip: %+v -> %+v (n=%d err=%v)", p, q, m, err)
		}
	})
}

// FuzzReader: the stream Reader, fed one byte at a time, agrees with
// ParsePacket applied to the whole buffer.
func FuzzReader(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 1 << 16
		rd := NewReader(iotest.OneByteReader(bytes.NewReader(b)), max)
		rest := b
		for {
			got, rerr := rd.ReadPacket()
			want, n, perr := ParsePacket(rest, max)
			if perr != nil {
				switch {
				case len(rest) == 0 && rerr == io.EOF:
				case errors.Is(perr, ErrTruncated) && errors.Is(rerr, ErrTruncated):
				case errors.Is(perr, ErrPacketTooLarge) && errors.Is(rerr, ErrPacketTooLarge):
				case errors.Is(perr, ErrPacketTooSmall) && errors.Is(rerr, ErrPacketTooSmall):
				default:
					t.Fatalf("ParsePacket err %v, Reader err %v", perr, rerr)
				}
				return
			}
			if rerr != nil {
				t.Fatalf("Reader err %v where ParsePacket read %+v", rerr, want)
			}
			if got.ID != want.ID || got.Type != want.Type || !bytes.Equal(got.Body, want.Body) {
				t.Fatalf("Reader %+v, ParsePacket %+v", got, want)
			}
			rest = rest[n:]
		}
	})
}
