package bzip2

import (
	"bytes"
	stdbzip2 "compress/bzip2"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	dsnet "github.com/dsnet/compress/bzip2"
)

// compress returns data compressed by an independent encoder.
func compress(t testing.TB, data []byte, level int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := dsnet.NewWriter(&buf, &dsnet.WriterConfig{Level: level})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// samples are inputs that exercise every stage: empty, single bytes, runs
// of each length around the run-length stage's 4 and 4+255, text, random
// bytes, and data spanning several blocks.
func samples() map[string][]byte {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 300_000)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var runs []byte
	for n := range 270 {
		runs = append(runs, bytes.Repeat([]byte{byte(n)}, n)...)
	}
	return map[string][]byte{
		"empty":      {},
		"one":        {'x'},
		"four":       []byte("aaaa"),
		"five":       []byte("aaaaa"),
		"259+1":      append(bytes.Repeat([]byte{'a'}, 260), 'b'),
		"263":        bytes.Repeat([]byte{'a'}, 263),
		"runs":       runs,
		"text":       []byte(strings.Repeat("sv_cheats 0\x00mp_timelimit 30\x00grüße\x00", 500)),
		"random":     random,
		"zeros-2.5M": make([]byte, 2_500_000), // several 100k blocks at level 1
	}
}

func TestDecodeMatchesOtherDecoders(t *testing.T) {
	t.Parallel()
	for name, data := range samples() {
		for _, level := range []int{1, 9} {
			src := compress(t, data, level)
			dst := make([]byte, len(data))
			n, err := Decode(dst, src)
			if err != nil || !bytes.Equal(dst[:n], data) {
				t.Errorf("%s level %d: %d bytes, %v; want the %d bytes compressed", name, level, n, err, len(data))
			}
			// The standard library agrees on the same stream.
			std, err := io.ReadAll(stdbzip2.NewReader(bytes.NewReader(src)))
			if err != nil || !bytes.Equal(std, data) {
				t.Errorf("%s level %d: compress/bzip2 disagrees: %v", name, level, err)
			}
		}
	}
}

// TestDecodeBzip2Tool decodes files written by the bzip2 command-line
// tool (see the testdata of package a2s for how they were made).
func TestDecodeBzip2Tool(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("../../a2s/testdata/rules-payload.bin")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"rules-payload.bin.bz2", "rules-payload-1.bz2"} {
		src, err := os.ReadFile("../../a2s/testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, len(want))
		if n, err := Decode(dst, src); err != nil || !bytes.Equal(dst[:n], want) {
			t.Errorf("%s: %d bytes, %v", name, n, err)
		}
		// Trailing bytes after the end of the stream are ignored.
		if n, err := Decode(dst, append(bytes.Clone(src), "trailing"...)); err != nil || n != len(want) {
			t.Errorf("%s with trailing bytes: %d bytes, %v", name, n, err)
		}
	}
}

func TestDecodeOutputBound(t *testing.T) {
	t.Parallel()
	data := samples()["text"]
	src := compress(t, data, 9)
	// Exactly the right size, one byte short, far too short.
	for _, size := range []int{len(data) + 1, len(data) - 1, 10, 0} {
		dst := make([]byte, size)
		n, err := Decode(dst, src)
		switch {
		case size > len(data):
			if err != nil || n != len(data) {
				t.Errorf("dst of %d: %d bytes, %v; want all %d", size, n, err, len(data))
			}
		case !errors.Is(err, ErrTooLarge):
			t.Errorf("dst of %d: %d bytes, %v; want ErrTooLarge", size, n, err)
		}
	}
}

// TestDecodeBombCostsItsOutput: one 50-byte stream holds a 900 kB block
// (45 MB of zeros). Decoding it into a small buffer must refuse the block
// before transforming it, allocating in proportion to the buffer, not to
// the block.
func TestDecodeBombCostsItsOutput(t *testing.T) {
	src, err := os.ReadFile("../../a2s/testdata/zeros-45m.bz2")
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, 4096)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = Decode(dst, src)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<10 {
		t.Errorf("decoding into 4 KiB allocated %d bytes; the bound is about 5 per output byte", got)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	good := compress(t, samples()["text"], 9)
	dst := make([]byte, 1<<20)
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x10; return b }
	for name, tt := range map[string]struct {
		src  []byte
		want error
	}{
		"empty":           {nil, ErrFormat},
		"not bzip2":       {[]byte("BZx9"), ErrFormat},
		"level 0":         {[]byte("BZh0"), ErrFormat},
		"header only":     {[]byte("BZh9"), ErrFormat},
		"truncated":       {good[:len(good)/2], ErrFormat},
		"no end marker":   {good[:len(good)-10], ErrFormat},
		"bad block magic": {flip(5), ErrFormat},
		"bad block crc":   {flip(11), ErrChecksum},
		"bad stream crc":  {flip(len(good) - 1), ErrChecksum},
	} {
		if _, err := Decode(dst, tt.src); !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", name, err, tt.want)
		}
	}
}

// incompleteCodes are streams whose Huffman tables are no complete code,
// found by FuzzDecode (their seeds are in testdata/fuzz/FuzzDecode), with
// what compress/bzip2 makes of them.
var incompleteCodes = []struct {
	name, src, std string
}{
	{"runs", "BZh11AY&SYD\xa40=\x00\x00\x02A\x00 \x00 \x00 \x00!\x17\xa8 S\x8b\xb9\"\x9c(H\"R\x18\x1e\x80", "aaaaa"},
	{"no word", "BZh11AY&SY\x9cE>\xd3\x00\x00\x03\x91\x00@\x04\x02D\xa0\x00aB\x8f \xc0!\x8a\xcf\x95\xc3\xc2\xeeH\xa7\n\x12\x13\x88\xa7\xdaa", "hello, hello, hello"},
}

// TestIncompleteCode: a table whose code lengths leave bit strings that
// are no code is read the reference bzip2's way, which refuses these
// streams (TestInteropIncompleteCode), not compress/bzip2's, which
// decodes them into something else.
func TestIncompleteCode(t *testing.T) {
	t.Parallel()
	for _, tc := range incompleteCodes {
		var d decoder
		n, err := d.decode(make([]byte, 1<<16), []byte(tc.src))
		if !errors.Is(err, ErrFormat) || !d.incomplete {
			t.Errorf("%s: %d bytes, %v, incomplete %v; want ErrFormat from an incomplete code", tc.name, n, err, d.incomplete)
		}
		std, err := io.ReadAll(stdbzip2.NewReader(strings.NewReader(tc.src)))
		if err != nil || string(std) != tc.std {
			t.Errorf("%s: compress/bzip2 gives %q, %v; want %q (if it changed, FuzzDecode may compare these again)", tc.name, std, err, tc.std)
		}
	}
	// Encoders write complete codes: dsnet's, ours, the bzip2 tool's.
	tool, err := os.ReadFile("../../a2s/testdata/rules-payload.bin.bz2")
	if err != nil {
		t.Fatal(err)
	}
	text := samples()["text"]
	for name, src := range map[string][]byte{"dsnet": compress(t, text, 9), "Compress": Compress(nil, text), "bzip2 tool": tool} {
		var d decoder
		if _, err := d.decode(make([]byte, 1<<20), src); err != nil || d.incomplete {
			t.Errorf("%s: %v, incomplete %v", name, err, d.incomplete)
		}
	}
}

// FuzzDecode checks Decode against compress/bzip2: whatever the standard
// library decodes within the buffer, Decode decodes the same; Decode never
// writes past its buffer or panics, and its memory stays within its bound
// (the block table at most 5/4 of the buffer).
//
// A table whose code lengths make no complete code is read two ways: by
// the reference bzip2 and Decode, which refuse a bit string that is no
// code, and by compress/bzip2, which numbers the codes from the other end
// and so reads other symbols (TestIncompleteCode). There the two are not
// compared.
func FuzzDecode(f *testing.F) {
	for _, name := range []string{"rules-payload-1.bz2", "zeros-45m.bz2", "bomb.bin.bz2"} {
		b, err := os.ReadFile("../../a2s/testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint16(8000))
	}
	for _, data := range [][]byte{{}, []byte("aaaaa"), []byte("hello, hello, hello")} {
		f.Add(compress(f, data, 1), uint16(len(data)))
	}
	f.Fuzz(func(t *testing.T, src []byte, size uint16) {
		dst := make([]byte, size)
		var d decoder
		n, err := d.decode(dst, src)
		if n > len(dst) {
			t.Fatalf("wrote %d bytes into %d", n, len(dst))
		}
		if limit := len(dst) + len(dst)/4 + 1; cap(d.tt) > limit || cap(d.sel) > 1<<15 {
			t.Fatalf("a buffer of %d bytes took a block table of %d and %d selectors", len(dst), cap(d.tt), cap(d.sel))
		}
		if d.incomplete {
			return
		}
		std, stdErr := io.ReadAll(io.LimitReader(stdbzip2.NewReader(bytes.NewReader(src)), int64(size)+1))
		if stdErr != nil || len(std) > int(size) {
			return // the standard library refuses it too, or it does not fit
		}
		if err != nil {
			t.Fatalf("compress/bzip2 decodes %d bytes; Decode: %v", len(std), err)
		}
		// compress/bzip2 goes on into a concatenated stream; Decode stops.
		if !bytes.HasPrefix(std, dst[:n]) || (n < len(std) && !bytes.Contains(src[4:], []byte("BZh"))) {
			t.Fatalf("Decode gives %q, compress/bzip2 %q", dst[:n], std)
		}
	})
}

func BenchmarkDecode(b *testing.B) {
	bomb, err := os.ReadFile("../../a2s/testdata/zeros-45m.bz2")
	if err != nil {
		b.Fatal(err)
	}
	text := samples()["text"]
	for _, bc := range []struct {
		name string
		src  []byte
		size int
	}{
		{"text-21k", compress(b, text, 9), len(text)},
		{"bomb-into-4k", bomb, 4096},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dst := make([]byte, bc.size)
			b.ReportAllocs()
			for b.Loop() {
				Decode(dst, bc.src)
			}
		})
	}
}
