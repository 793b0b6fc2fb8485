package bzip2

import (
	"bytes"
	stdbzip2 "compress/bzip2"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// inputs are the shapes a bzip2 encoder gets wrong: nothing, one byte,
// runs at and around the run-length limits, periodic blocks (equal
// rotations), every byte value, and more than one block.
func inputs() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 3000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	var text bytes.Buffer
	for i := range 120 {
		text.WriteString("sv_fleet_var_")
		text.WriteByte(byte('0' + i%10))
		text.WriteString("\x00" + strings.Repeat("v", i%7) + "\x00")
	}
	big := bytes.Repeat(random[:1000], 150) // two blocks
	big = append(big, bytes.Repeat([]byte{7}, 5000)...)
	return map[string][]byte{
		"empty":      nil,
		"one":        {42},
		"two":        {1, 2},
		"run3":       bytes.Repeat([]byte{'a'}, 3),
		"run4":       bytes.Repeat([]byte{'a'}, 4),
		"run255":     bytes.Repeat([]byte{'a'}, 255),
		"run256":     bytes.Repeat([]byte{'a'}, 256),
		"run1000":    bytes.Repeat([]byte{0}, 1000),
		"periodic":   bytes.Repeat([]byte("abc"), 1000),
		"pairs":      bytes.Repeat([]byte("ab"), 7),
		"all bytes":  all,
		"random":     random,
		"rules-like": text.Bytes(),
		"two blocks": big,
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for name, in := range inputs() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			z := Compress(nil, in)
			out, err := io.ReadAll(stdbzip2.NewReader(bytes.NewReader(z)))
			if err != nil {
				t.Fatalf("compress/bzip2 rejects the stream: %v", err)
			}
			if !bytes.Equal(out, in) {
				t.Fatalf("round trip changed %d bytes into %d", len(in), len(out))
			}
			// The bounded decoder gsq reads replies with, written apart.
			dst := make([]byte, len(in))
			if n, err := Decode(dst, z); err != nil || n != len(in) || !bytes.Equal(dst, in) {
				t.Fatalf("internal/bzip2: %d bytes, %v", n, err)
			}
		})
	}
}

func TestCompresses(t *testing.T) {
	t.Parallel()
	// Not a contest with bzip2, but the stages must do their job: text
	// with repeats shrinks a lot, and a prefix stays in dst.
	in := inputs()["rules-like"]
	z := Compress([]byte("prefix"), in)
	if !bytes.HasPrefix(z, []byte("prefixBZh1")) {
		t.Fatalf("stream starts %q", z[:10])
	}
	if len(z) > len(in)/3 {
		t.Errorf("%d bytes compressed to %d", len(in), len(z))
	}
}

func TestChecksum(t *testing.T) {
	t.Parallel()
	// The CRC-32/BZIP2 check value of "123456789".
	if got := crc([]byte("123456789")); got != 0xFC891918 {
		t.Errorf("checksum = %#x, want 0xfc891918", got)
	}
}

func TestCodeLengthsBounded(t *testing.T) {
	t.Parallel()
	// Fibonacci frequencies make the deepest Huffman trees.
	freq := make([]int, 40)
	a, b := 1, 1
	for i := range freq {
		freq[i] = a
		a, b = b, a+b
	}
	lengths := codeLengths(freq)
	kraft := 0.0
	for _, l := range lengths {
		if l < 1 || l > maxEncodeLen {
			t.Fatalf("code length %d", l)
		}
		kraft += 1 / float64(uint64(1)<<l)
	}
	if kraft != 1 {
		t.Errorf("the code is not complete: Kraft sum %v", kraft)
	}
}

func FuzzCompress(f *testing.F) {
	for _, in := range inputs() {
		if len(in) < 4096 {
			f.Add(in)
		}
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		z := Compress(nil, in)
		out, err := io.ReadAll(stdbzip2.NewReader(bytes.NewReader(z)))
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("round trip of %q: %v, %q", in, err, out)
		}
	})
}

func BenchmarkCompress(b *testing.B) {
	in := inputs()["rules-like"]
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		Compress(nil, in)
	}
}
