package a2s

import (
	"bytes"
	"errors"
	"hash/crc32"
	"os"
	"testing"
)

// The bzip2 fixtures in testdata were made with the bzip2 command-line tool:
//
//	bzip2 -k -9 testdata/rules-payload.bin  # -> rules-payload.bin.bz2 (a 5677-byte A2S_RULES reply)
//	bzip2 -1 -c testdata/rules-payload.bin > testdata/rules-payload-1.bz2  # the same, 100k blocks (fuzz seed)
//	bzip2 -9 testdata/bomb.bin              # -> bomb.bin.bz2: FFFFFFFF 'E' then 8 MiB of zeros, 56 bytes compressed
//	head -c 45000000 /dev/zero | bzip2 -9 > testdata/zeros-45m.bz2  # one full 900k block in 50 bytes
//	bzip2 -9 < pattern > testdata/ratio-limit.bz2  # 135 copies of 40 random bytes: 5400 bytes in 174, ratio 31
//	bzip2 -9 -k testdata/players-255-blank.bin  # A2S_PLAYER, 255 nameless players scoring 0: 2556 bytes in 49
//
// rules-payload.bin itself was written by a few lines of Python: 150 rules
// "rule_NNN" = "value N value N value N ".

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rulesPayload returns the uncompressed fixture reply.
func rulesPayload(t testing.TB) []byte { return readFixture(t, "rules-payload.bin") }

// split cuts payload with w and fails the test on error.
func split(t testing.TB, w SplitWriter, id uint32, payload []byte) [][]byte {
	t.Helper()
	dgs, err := w.AppendFragments(nil, id, payload)
	if err != nil {
		t.Fatalf("AppendFragments: %v", err)
	}
	return dgs
}

// feed parses and adds datagrams in order, returning the first completed
// reply (and failing if any completes early or errors).
func feed(t testing.TB, r *Reassembler, dgs [][]byte) []byte {
	t.Helper()
	var out []byte
	for i, dg := range dgs {
		f, err := ParseFragment(dg)
		if err != nil {
			t.Fatalf("ParseFragment(datagram %d): %v", i, err)
		}
		p, done, err := r.Add(f)
		if err != nil {
			t.Fatalf("Add(datagram %d): %v", i, err)
		}
		if done {
			if out != nil {
				t.Fatalf("second completion at datagram %d", i)
			}
			out = p
		}
	}
	return out
}

// orders returns the datagrams in several arrival orders, with duplicates.
func orders(dgs [][]byte) map[string][][]byte {
	n := len(dgs)
	rev := make([][]byte, n)
	for i := range dgs {
		rev[i] = dgs[n-1-i]
	}
	rot := append(append([][]byte{}, dgs[1:]...), dgs[0])
	// Every fragment twice, the copy arriving before the original's
	// neighbour, and the last fragment first.
	dup := [][]byte{dgs[n-1]}
	for _, d := range dgs {
		dup = append(dup, d, d)
	}
	m := map[string][][]byte{"in-order": dgs, "reversed": rev, "first-last": rot}
	if n > 1 { // a duplicate of a one-fragment reply is a second reply
		m["duplicated"] = dup
	}
	return m
}

func TestSplitRoundTrip(t *testing.T) {
	t.Parallel()
	payload := rulesPayload(t)
	for _, tt := range []struct {
		name   string
		w      SplitWriter
		header int
		total  int
	}{
		{"source-1248", SplitWriter{}, 12, 5},
		{"source-1188", SplitWriter{Size: 1188}, 12, 5},
		{"source-nosize", SplitWriter{Format: SplitSourceNoSize, Size: 1000}, 10, 6},
		{"goldsource", SplitWriter{Format: SplitGoldSource}, 9, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dgs := split(t, tt.w, 0x157, payload)
			if len(dgs) != tt.total {
				t.Fatalf("%d fragments, want %d", len(dgs), tt.total)
			}
			size := tt.w.Size
			if size == 0 {
				size = DefaultSplitSize
				if tt.w.Format == SplitGoldSource {
					size = DefaultSplitSizeGold
				}
			}
			for i, dg := range dgs {
				f, err := ParseFragment(dg)
				if err != nil {
					t.Fatal(err)
				}
				if f.Format != tt.w.Format || f.ID != 0x157 || int(f.Total) != tt.total || int(f.Number) != i || f.Compressed {
					t.Errorf("fragment %d: format %v id %#x number %d of %d compressed %v", i, f.Format, f.ID, f.Number, f.Total, f.Compressed)
				}
				if tt.w.Format == SplitSource && int(f.Size) != size {
					t.Errorf("Size = %d, want %d", f.Size, size)
				}
				if i < tt.total-1 && len(dg) != size+tt.header {
					t.Errorf("datagram %d is %d bytes, want %d", i, len(dg), size+tt.header)
				}
				if !bytes.Equal(f.Payload, dg[tt.header:]) {
					t.Errorf("fragment %d payload offset wrong", i)
				}
			}
			if tt.w.Format == SplitGoldSource && dgs[2][8] != 2<<4|5 {
				t.Errorf("goldsource packet byte = %#x, want 0x25", dgs[2][8])
			}
			for name, order := range orders(dgs) {
				var r Reassembler
				if got := feed(t, &r, order); !bytes.Equal(got, payload) {
					t.Errorf("%s: reassembled %d bytes, want the %d-byte payload", name, len(got), len(payload))
				}
				if name != "duplicated" && len(r.pending) != 0 {
					t.Errorf("%s: %d replies still pending", name, len(r.pending))
				}
			}
		})
	}
}

func TestSplitSmallPayloadUnsplit(t *testing.T) {
	t.Parallel()
	p := []byte("\xFF\xFF\xFF\xFFj\x00")
	dgs := split(t, SplitWriter{}, 1, p)
	if len(dgs) != 1 || !bytes.Equal(dgs[0], p) {
		t.Errorf("small payload = %q", dgs)
	}
}

func TestSplitWithoutNestedHeader(t *testing.T) {
	t.Parallel()
	// Some servers leave the nested 0xFFFFFFFF out: the first payload byte
	// is the reply type. The reassembled reply gets the header back.
	payload := rulesPayload(t)
	for _, format := range []SplitFormat{SplitSource, SplitSourceNoSize, SplitGoldSource} {
		t.Run(format.String(), func(t *testing.T) {
			dgs := split(t, SplitWriter{Format: format, Size: 1200}, 9, payload[4:])
			f, err := ParseFragment(dgs[0])
			if err != nil || f.Format != format || !f.sure {
				t.Fatalf("fragment 0 detected as %v (sure %v), %v", f.Format, f.sure, err)
			}
			for name, order := range orders(dgs) {
				var r Reassembler
				if got := feed(t, &r, order); !bytes.Equal(got, payload) {
					t.Errorf("%s: got % X...", name, got[:min(len(got), 8)])
				}
			}
		})
	}
}

func TestSplitLaterFragmentMisdetected(t *testing.T) {
	t.Parallel()
	// Source without Size: fragment 1's first payload bytes (00 04) read
	// as a plausible Size field, so on its own it looks like SplitSource.
	// Fragment 0, arriving last, settles the format.
	payload := append([]byte("\xFF\xFF\xFF\xFFE\x02\x00a\x00b\x00c\x00"), make([]byte, 100)...)
	chunk := 70
	payload[chunk], payload[chunk+1] = 0x00, 0x04
	dgs := split(t, SplitWriter{Format: SplitSourceNoSize, Size: chunk}, 77, payload)
	if f, _ := ParseFragment(dgs[1]); f.Format != SplitSource || f.sure {
		t.Fatalf("fragment 1 detected as %v (sure %v); the test needs a wrong guess", f.Format, f.sure)
	}
	var r Reassembler
	if got := feed(t, &r, [][]byte{dgs[1], dgs[0]}); !bytes.Equal(got, payload) {
		t.Errorf("got %d bytes, want %d", len(got), len(payload))
	}
}

func TestSplitInterleavedIDs(t *testing.T) {
	t.Parallel()
	a := rulesPayload(t)
	b := bytes.Clone(a)
	b[len(b)-2] = 'X'
	da := split(t, SplitWriter{}, 1, a)
	db := split(t, SplitWriter{}, 2, b)
	var r Reassembler
	var got [][]byte
	for i := range da {
		for _, dg := range [][]byte{db[len(db)-1-i], da[i]} {
			f, err := ParseFragment(dg)
			if err != nil {
				t.Fatal(err)
			}
			p, done, err := r.Add(f)
			if err != nil {
				t.Fatal(err)
			}
			if done {
				got = append(got, p)
			}
		}
	}
	if len(got) != 2 || !bytes.Equal(got[0], b) || !bytes.Equal(got[1], a) {
		t.Errorf("completed %d replies, want b then a", len(got))
	}
}

func TestSplitEvictsOldest(t *testing.T) {
	t.Parallel()
	payload := rulesPayload(t)
	r := Reassembler{MaxPending: 2}
	byID := map[uint32][][]byte{}
	for id := uint32(1); id <= 3; id++ {
		byID[id] = split(t, SplitWriter{}, id, payload)
		if got := feed(t, &r, byID[id][:len(byID[id])-1]); got != nil {
			t.Fatal("completed early")
		}
	}
	// Reply 1 was evicted by reply 3: its last fragment alone is not enough.
	if got := feed(t, &r, byID[1][len(byID[1])-1:]); got != nil {
		t.Error("evicted reply 1 completed")
	}
	// Adding reply 1's fragment evicted reply 2; reply 3 is intact.
	if got := feed(t, &r, byID[3][len(byID[3])-1:]); !bytes.Equal(got, payload) {
		t.Error("reply 3 did not complete")
	}
	r.Reset()
	if len(r.pending) != 0 {
		t.Error("Reset kept state")
	}
}

// compressedSplit builds the datagrams of a bzip2-compressed reply.
func compressedSplit(t testing.TB, format SplitFormat, id uint32, data []byte, size, crc uint32, chunk int) [][]byte {
	t.Helper()
	total := (len(data) + chunk - 1) / chunk
	var dgs [][]byte
	for i := range total {
		f := Fragment{ID: id, Total: uint8(total), Number: uint8(i), Size: uint16(chunk), Compressed: true,
			DecompressedSize: size, CRC: crc, Payload: data[i*chunk : min(len(data), (i+1)*chunk)], Format: format}
		dgs = append(dgs, mustAppend(t, f))
	}
	return dgs
}

func TestSplitBzip2(t *testing.T) {
	t.Parallel()
	payload := rulesPayload(t)
	bz := readFixture(t, "rules-payload.bin.bz2")
	size, crc := uint32(len(payload)), crc32.ChecksumIEEE(payload)
	for _, tt := range []struct {
		name   string
		format SplitFormat
		chunk  int
	}{
		{"nosize-one-fragment", SplitSourceNoSize, 1248}, // Fortress Forever: total 1
		{"nosize-3", SplitSourceNoSize, 300},
		{"size-3", SplitSource, 300},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dgs := compressedSplit(t, tt.format, 0x33C, bz, size, crc, tt.chunk)
			f0, err := ParseFragment(dgs[0])
			if err != nil || f0.Format != tt.format || !f0.Compressed || f0.DecompressedSize != size || f0.CRC != crc || f0.ID != 0x8000033C {
				t.Fatalf("fragment 0: format %v compressed %v size %d crc %#x id %#x, %v", f0.Format, f0.Compressed, f0.DecompressedSize, f0.CRC, f0.ID, err)
			}
			for name, order := range orders(dgs) {
				var r Reassembler
				if got := feed(t, &r, order); !bytes.Equal(got, payload) {
					t.Errorf("%s: got %d bytes, want %d", name, len(got), len(payload))
				}
			}
		})
	}
}

// TestSplitBzip2SmallRepliesExempt: a small reply may shrink more than
// MaxDecompressionRatio allows (here 52 times); the ratio guards against
// large expansions only.
func TestSplitBzip2SmallRepliesExempt(t *testing.T) {
	t.Parallel()
	payload := readFixture(t, "players-255-blank.bin")
	bz := readFixture(t, "players-255-blank.bin.bz2")
	if len(payload) <= DefaultMaxDecompressionRatio*len(bz) || len(payload) > MinDecompressedAllowance {
		t.Fatalf("fixture of %d bytes in %d does not exercise the allowance", len(payload), len(bz))
	}
	var r Reassembler
	dgs := compressedSplit(t, SplitSourceNoSize, 7, bz, uint32(len(payload)), crc32.ChecksumIEEE(payload), 1248)
	if got := feed(t, &r, dgs); !bytes.Equal(got, payload) {
		t.Errorf("got %d bytes, want %d", len(got), len(payload))
	}
}

// addAll adds datagrams and returns the first error.
func addAll(r *Reassembler, dgs [][]byte) error {
	for _, dg := range dgs {
		f, err := ParseFragment(dg)
		if err != nil {
			return err
		}
		if _, _, err := r.Add(f); err != nil {
			return err
		}
	}
	return nil
}

func TestSplitBzip2Errors(t *testing.T) {
	t.Parallel()
	payload := rulesPayload(t)
	bz := readFixture(t, "rules-payload.bin.bz2")
	bomb := readFixture(t, "bomb.bin.bz2")
	zeros := readFixture(t, "zeros-45m.bz2")
	size, crc := uint32(len(payload)), crc32.ChecksumIEEE(payload)
	corrupt := bytes.Clone(bz)
	corrupt[len(corrupt)/2] ^= 0x55
	for _, tt := range []struct {
		name string
		r    Reassembler
		dgs  [][]byte
		want error
	}{
		{"bad-crc", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, bz, size, crc^1, 1000), ErrChecksum},
		{"bomb-lying-size", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, bomb, 1000, 0, 1000), ErrDecompressedTooLarge},
		{"bomb-honest-size", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, bomb, 8<<20+5, 0, 1000), ErrDecompressedTooLarge},
		{"over-custom-limit", Reassembler{MaxDecompressed: 4096}, compressedSplit(t, SplitSource, 1, bz, size, crc, 1000), ErrDecompressedTooLarge},
		{"shorter-than-announced", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, bz, size+10, crc, 1000), ErrDecompress},
		{"corrupt-stream", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, corrupt, size, crc, 1000), ErrDecompress},
		// 45 MB of zeros in 50 bytes: the 1 MiB it may announce is far
		// beyond 32 times 50, and what it may announce is exceeded in
		// the first block.
		{"bomb-announces-limit", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, zeros, DefaultMaxDecompressed, 0, 1000), ErrDecompressedTooLarge},
		{"bomb-within-ratio", Reassembler{}, compressedSplit(t, SplitSourceNoSize, 1, zeros, 50*DefaultMaxDecompressionRatio, 0, 1000), ErrDecompressedTooLarge},
		{"over-ratio", Reassembler{MaxDecompressionRatio: 4}, compressedSplit(t, SplitSource, 1, bz, size, crc, 300), ErrDecompressedTooLarge},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := addAll(&tt.r, tt.dgs)
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
			if len(tt.r.pending) != 0 {
				t.Error("failed reply still pending")
			}
		})
	}
}

func TestSplitLimits(t *testing.T) {
	t.Parallel()
	payload := rulesPayload(t)
	// Too many fragments announced.
	// Too many fragments announced: a later fragment waits for fragment 0
	// to confirm its format, fragment 0 says it for sure.
	big := mustAppend(t, Fragment{ID: 5, Total: 200, Number: 3, Size: 10, Payload: []byte("x"), Format: SplitSource})
	big0 := mustAppend(t, Fragment{ID: 5, Total: 200, Number: 0, Size: 10, Payload: []byte("\xFF\xFF\xFF\xFFE"), Format: SplitSource})
	var r Reassembler
	if err := addAll(&r, [][]byte{big}); err != nil {
		t.Errorf("total 200, fragment 3: %v", err)
	}
	if err := addAll(&r, [][]byte{big0}); !errors.Is(err, ErrTooManyFragments) {
		t.Errorf("total 200, fragment 0: %v", err)
	}
	if len(r.pending) != 0 {
		t.Errorf("%d replies pending after the error", len(r.pending))
	}
	// A later fragment guessed from its own bytes does not trip the limit
	// until fragment 0 confirms the format: a GoldSource fragment 2 of 5
	// whose payload starts like a Size field reads as Source total 0x25.
	gold := mustAppend(t, Fragment{ID: 6, Total: 5, Number: 2, Payload: []byte{0x00, 0x01, 0x00, 0x00}, Format: SplitGoldSource})
	if f, _ := ParseFragment(gold); f.Format != SplitSource || f.Total != 0x25 {
		t.Fatalf("guessed %v total %d; the test needs a wrong Source guess", f.Format, f.Total)
	}
	if err := addAll(&r, [][]byte{gold}); err != nil {
		t.Errorf("guessed total 0x25: %v", err)
	}
	small := Reassembler{MaxFragments: 4}
	if err := addAll(&small, split(t, SplitWriter{}, 1, payload)); !errors.Is(err, ErrTooManyFragments) {
		t.Errorf("5 fragments, limit 4: %v", err)
	}
	// Oversized fragment datagram.
	huge := split(t, SplitWriter{Size: 5000}, 1, append(bytes.Clone(payload), make([]byte, 5000)...))
	if err := addAll(&r, huge); !errors.Is(err, ErrFragmentTooLarge) {
		t.Errorf("5012-byte fragment: %v", err)
	}
	if err := addAll(&Reassembler{MaxFragmentSize: 20000}, huge); err != nil {
		t.Errorf("5012-byte fragment, limit 20000: %v", err)
	}
	// Writers refuse what their format cannot number.
	if _, err := (SplitWriter{Format: SplitGoldSource, Size: 100}).AppendFragments(nil, 1, payload); !errors.Is(err, ErrTooLarge) {
		t.Errorf("goldsource 57 fragments: %v", err)
	}
	if _, err := (SplitWriter{Size: 10}).AppendFragments(nil, 1, payload); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size 10: %v", err)
	}
	if _, err := (SplitWriter{}).AppendFragments(nil, 0x80000001, payload); !errors.Is(err, ErrBadFragment) {
		t.Errorf("compressed id: %v", err)
	}
}

func TestSplitInconsistentTotal(t *testing.T) {
	t.Parallel()
	dgs := split(t, SplitWriter{}, 1, rulesPayload(t))
	dgs[2][8] = 9 // fragment 2 now says 9 fragments
	var r Reassembler
	if err := addAll(&r, dgs); !errors.Is(err, ErrBadFragment) {
		t.Errorf("err = %v, want ErrBadFragment", err)
	}
}

func TestParseFragmentErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		b    string
		want error
	}{
		{"short", "\xFE\xFF\xFF", ErrTruncated},
		{"simple-header", "\xFF\xFF\xFF\xFFI", ErrBadHeader},
		{"no-id", "\xFE\xFF\xFF\xFF\x01\x00", ErrTruncated},
		{"total-0", "\xFE\xFF\xFF\xFF\x01\x00\x00\x00\x00\x00\xE0\x04\xFF\xFF\xFF\xFFE", ErrBadFragment},
		{"number-past-total", "\xFE\xFF\xFF\xFF\x01\x00\x00\x00\x02\x02\xE0\x04xx", ErrBadFragment},
		{"compressed-no-crc", "\xFE\xFF\xFF\xFF\x01\x00\x00\x80\x02\x00\xE0\x04\x00\x10", ErrTruncated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := ParseFragment([]byte(tt.b)); !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSplitHandBuiltFragments(t *testing.T) {
	t.Parallel()
	// Fragments built by hand (no datagram) are taken at their word.
	payload := rulesPayload(t)
	var r Reassembler
	var got []byte
	for i := 2; i >= 0; i-- {
		chunk := payload[i*2000 : min(len(payload), (i+1)*2000)]
		p, done, err := r.Add(Fragment{ID: 3, Total: 3, Number: uint8(i), Payload: chunk, Format: SplitGoldSource})
		if err != nil {
			t.Fatal(err)
		}
		if done {
			got = p
		}
	}
	if !bytes.Equal(got, payload) {
		t.Error("hand-built fragments did not reassemble")
	}
}

// BenchmarkReassembleBzip2 measures the CPU one compressed split datagram
// costs the Reassembler. The hostile ones carry a wrong CRC: a 50-byte
// stream holding one full 900k block (45 MB of zeros) that announces the
// size limit or 1000 bytes, and a 192-byte datagram that really expands 31
// times, just within the ratio (the most work one datagram can buy). For
// scale, an honest 5677-byte reply in 801 compressed bytes.
func BenchmarkReassembleBzip2(b *testing.B) {
	zeros := readFixture(b, "zeros-45m.bz2")
	ratio := readFixture(b, "ratio-limit.bz2")
	payload := rulesPayload(b)
	rules := readFixture(b, "rules-payload.bin.bz2")
	for _, bc := range []struct {
		name      string
		data      []byte
		size, crc uint32
		wantErr   bool
	}{
		{"hostile-announces-1MiB", zeros, DefaultMaxDecompressed, 0, true},
		{"hostile-announces-1000", zeros, 1000, 0, true},
		{"hostile-at-ratio-limit", ratio, 5400, 0, true},
		{"honest-rules", rules, uint32(len(payload)), crc32.ChecksumIEEE(payload), false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dgs := compressedSplit(b, SplitSourceNoSize, 1, bc.data, bc.size, bc.crc, 1248)
			if len(dgs) != 1 {
				b.Fatalf("%d datagrams, want 1", len(dgs))
			}
			var r Reassembler
			b.ReportAllocs()
			b.SetBytes(int64(len(dgs[0])))
			for b.Loop() {
				f, err := ParseFragment(dgs[0])
				if err != nil {
					b.Fatal(err)
				}
				_, done, err := r.Add(f)
				if (err != nil) != bc.wantErr || done == bc.wantErr {
					b.Fatalf("done %v, err %v", done, err)
				}
			}
		})
	}
}
