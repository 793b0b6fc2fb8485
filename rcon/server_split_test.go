package rcon

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// splitAll feeds out to a Splitter in writes of the given sizes (cycled)
// and returns the bodies.
func splitAll(t testing.TB, d Dialect, size int, out []byte, writes []int) [][]byte {
	t.Helper()
	var got [][]byte
	s := NewSplitter(d, size, func(b []byte) error {
		got = append(got, bytes.Clone(b))
		return nil
	})
	for i := 0; len(out) > 0; i++ {
		n := len(out)
		if len(writes) > 0 {
			n = min(max(writes[i%len(writes)], 1), len(out))
		}
		if k, err := s.Write(out[:n]); err != nil || k != n {
			t.Fatalf("Write = %d, %v", k, err)
		}
		out = out[n:]
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if s.Bodies() != len(got) {
		t.Fatalf("Bodies() = %d, emitted %d", s.Bodies(), len(got))
	}
	return got
}

// checkSplit verifies the Splitter's contract for one output.
func checkSplit(t testing.TB, d Dialect, size int, out []byte, bodies [][]byte) {
	t.Helper()
	if len(bodies) == 0 {
		t.Fatal("no body emitted")
	}
	if got := bytes.Join(bodies, nil); !bytes.Equal(got, out) {
		t.Fatalf("joined bodies differ from the output (%d vs %d bytes)", len(got), len(out))
	}
	units := d == DialectMinecraft
	for i, b := range bodies {
		last := i == len(bodies)-1
		if len(b) == 0 && !(last && len(bodies) == 1) {
			t.Fatalf("empty body %d of %d", i, len(bodies))
		}
		if units {
			n := len(utf16.Encode([]rune(string(b))))
			if !last && n < size {
				t.Fatalf("body %d has %d units, fewer than %d but is not the last", i, n, size)
			}
			if n > size+1 {
				t.Fatalf("body %d has %d units, limit %d", i, n, size)
			}
			continue
		}
		if len(b) > size {
			t.Fatalf("body %d has %d bytes, limit %d", i, len(b), size)
		}
		if !last && len(b) <= size-utf8.UTFMax {
			t.Fatalf("body %d has %d bytes, cut too early (limit %d)", i, len(b), size)
		}
	}
	// No cut inside a valid rune: a body boundary never falls between
	// the bytes of a rune that is valid in the whole output.
	off := 0
	for _, b := range bodies[:len(bodies)-1] {
		off += len(b)
		if off < len(out) && !utf8.RuneStart(out[off]) {
			for j := off - 1; j >= 0 && j >= off-utf8.UTFMax; j-- {
				if utf8.RuneStart(out[j]) {
					if r, n := utf8.DecodeRune(out[j:]); (r != utf8.RuneError || n > 1) && j+n > off {
						t.Fatalf("cut at byte %d splits rune %q", off, r)
					}
					break
				}
			}
		}
	}
}

func TestSplitter(t *testing.T) {
	t.Parallel()
	big := []byte(strings.Repeat("aé€😀", 3000))
	tests := []struct {
		name    string
		dialect Dialect
		size    int
		out     []byte
		want    int // bodies
	}{
		{"empty", DialectSource, 0, nil, 1},
		{"short", DialectSource, 0, []byte("hello"), 1},
		{"exact multiple has no empty tail", DialectSource, 10, []byte("0123456789abcdefghij"), 2},
		{"one over", DialectSource, 10, []byte("0123456789a"), 2},
		{"rune at the boundary moves whole", DialectSource, 10, []byte("012345678€x"), 2},
		{"mixed widths", DialectSource, 0, big, 8},
		{"cs2 keeps one packet", DialectCS2, 0, big, 1},
		{"invalid bytes cut anywhere", DialectSource, 4, []byte{0xff, 0xfe, 0xfd, 0xfc, 0xfb}, 2},
		{"minecraft ascii exact multiple", DialectMinecraft, 4, []byte("abcdefgh"), 2},
		{"minecraft surrogate overshoot", DialectMinecraft, 4, []byte("abc😀d"), 2},
		{"minecraft default", DialectMinecraft, 0, big, 4},
		{"size below a rune is raised", DialectSource, 1, []byte("😀😀"), 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := tt.size
			if size == 0 {
				size = map[Dialect]int{DialectSource: DefaultSourceSplitSize, DialectCS2: DefaultCS2SplitSize, DialectMinecraft: MinecraftFragmentUnits}[tt.dialect]
			}
			size = max(size, map[Dialect]int{DialectSource: minSplitBytes, DialectCS2: minSplitBytes, DialectMinecraft: minSplitUnits}[tt.dialect])
			for _, writes := range [][]int{nil, {1}, {3, 7}, {4096}} {
				got := splitAll(t, tt.dialect, tt.size, tt.out, writes)
				if len(got) != tt.want {
					t.Fatalf("writes %v: %d bodies, want %d", writes, len(got), tt.want)
				}
				checkSplit(t, tt.dialect, size, tt.out, got)
			}
		})
	}
}

func TestSplitterErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	calls := 0
	s := NewSplitter(DialectSource, 4, func([]byte) error {
		calls++
		return boom
	})
	if _, err := s.WriteString("0123456789"); !errors.Is(err, boom) {
		t.Fatalf("Write = %v, want the emit error", err)
	}
	if _, err := s.Write([]byte("x")); !errors.Is(err, boom) {
		t.Fatalf("second Write = %v", err)
	}
	if err := s.Close(); !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Close = %v after %d emits", err, calls)
	}
	ok := NewSplitter(DialectSource, 0, func([]byte) error { return nil })
	_ = ok.Close()
	if _, err := ok.Write([]byte("late")); err == nil {
		t.Fatal("Write after Close succeeded")
	}
}

// TestSplitterMemoryBounded checks that a large write is not buffered
// whole: the buffer never exceeds about one fragment.
func TestSplitterMemoryBounded(t *testing.T) {
	t.Parallel()
	for _, d := range []Dialect{DialectSource, DialectMinecraft} {
		s := NewSplitter(d, 0, func([]byte) error { return nil })
		if _, err := s.Write(bytes.Repeat([]byte("€"), 1<<20)); err != nil {
			t.Fatal(err)
		}
		if cap(s.buf) > 2*s.maxBuf {
			t.Errorf("%v: buffer grew to %d bytes for a %d-byte fragment limit", d, cap(s.buf), s.maxBuf)
		}
	}
}

func TestSplitterAllocs(t *testing.T) {
	s := NewSplitter(DialectSource, 0, func([]byte) error { return nil })
	chunk := bytes.Repeat([]byte("x"), 1000)
	_, _ = s.Write(bytes.Repeat(chunk, 10)) // grow the buffer once
	if n := testing.AllocsPerRun(100, func() { _, _ = s.Write(chunk) }); n != 0 {
		t.Errorf("Write allocates %v times per call", n)
	}
}

func FuzzSplitter(f *testing.F) {
	f.Add([]byte("hello"), uint16(0), uint8(0), uint8(1))
	f.Add([]byte("012345678€x"), uint16(10), uint8(0), uint8(3))
	f.Add([]byte("abc😀d"), uint16(4), uint8(2), uint8(1))
	f.Add([]byte{0xf0, 0x9f, 0x98, 0xff, 0xe2, 0x82}, uint16(4), uint8(0), uint8(2))
	f.Add([]byte(strings.Repeat("é😀", 50)), uint16(7), uint8(2), uint8(5))
	f.Add([]byte{}, uint16(1), uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, out []byte, size uint16, dialect uint8, write uint8) {
		d := Dialect(dialect % 3)
		limit := int(size%512) + 1
		got := splitAll(t, d, limit, out, []int{int(write) + 1})
		if d == DialectMinecraft {
			limit = max(limit, minSplitUnits)
		} else {
			limit = max(limit, minSplitBytes)
		}
		checkSplit(t, d, limit, out, got)
	})
}
