package rcon

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// le builds a little-endian int32.
func le(v int32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

// raw concatenates byte slices.
func raw(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func TestAppendBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    Packet
		want []byte
	}{
		{"auth", Packet{ID: 7, Type: TypeAuth, Body: []byte("pw")},
			raw(le(12), le(7), le(3), []byte("pw\x00\x00"))},
		{"empty probe", Packet{ID: -2, Type: TypeResponseValue},
			raw(le(10), le(-2), le(0), []byte{0, 0})},
		{"exec with NUL kept", Packet{ID: 1, Type: TypeExecCommand, Body: []byte("a\x00b")},
			raw(le(13), le(1), le(2), []byte("a\x00b\x00\x00"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prefix := []byte("xyz")
			got, err := tt.p.AppendBinary(prefix)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:3], prefix) || !bytes.Equal(got[3:], tt.want) {
				t.Fatalf("AppendBinary = % x, want xyz + % x", got, tt.want)
			}
			if tt.p.Len() != len(tt.want) || tt.p.Size() != len(tt.want)-4 {
				t.Fatalf("Len/Size = %d/%d for %d wire bytes", tt.p.Len(), tt.p.Size(), len(tt.want))
			}
			m, err := tt.p.MarshalBinary()
			if err != nil || !bytes.Equal(m, tt.want) {
				t.Fatalf("MarshalBinary = % x, %v", m, err)
			}
		})
	}
}

func TestParsePacket(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      []byte
		max     int
		want    Packet
		n       int
		wantErr error
	}{
		{"response", raw(le(15), le(5), le(0), []byte("hello\x00\x00")), 0,
			Packet{ID: 5, Type: TypeResponseValue, Body: []byte("hello")}, 19, nil},
		{"trailing data left", raw(le(10), le(5), le(2), []byte{0, 0}, []byte("next")), 0,
			Packet{ID: 5, Type: TypeAuthResponse, Body: []byte{}}, 14, nil},
		{"auth failure id -1", raw(le(10), le(-1), le(2), []byte{0, 0}), 0,
			Packet{ID: -1, Type: TypeAuthResponse, Body: []byte{}}, 14, nil},
		{"NULs inside body kept (SRCDS mirror tail)", raw(le(18), le(9), le(0), []byte{0, 0, 0, 1, 0, 0, 0, 0}, []byte{0, 0}), 0,
			Packet{ID: 9, Type: 0, Body: []byte{0, 0, 0, 1, 0, 0, 0, 0}}, 22, nil},
		{"one padding NUL missing", raw(le(11), le(1), le(0), []byte("ab\x00")), 0,
			Packet{ID: 1, Body: []byte("ab")}, 15, nil},
		{"both padding NULs missing", raw(le(10), le(1), le(0), []byte("ab")), 0,
			Packet{ID: 1, Body: []byte("ab")}, 14, nil},
		{"garbage padding kept as body", raw(le(10), le(1), le(0), []byte{0, 1}), 0,
			Packet{ID: 1, Body: []byte{0, 1}}, 14, nil},
		{"extra padding NUL stays in body", raw(le(13), le(1), le(0), []byte("ab\x00\x00\x00")), 0,
			Packet{ID: 1, Body: []byte("ab\x00")}, 17, nil},
		{"size 9", raw(le(9), le(1), le(0), []byte{0}), 0, Packet{}, 0, ErrPacketTooSmall},
		{"size 0", raw(le(0)), 0, Packet{}, 0, ErrPacketTooSmall},
		{"negative size", raw(le(-10), le(1), le(0), []byte{0, 0}), 0, Packet{}, 0, ErrPacketTooSmall},
		{"above limit", raw(le(4097)), 4096, Packet{}, 0, ErrPacketTooLarge},
		{"above default limit", raw(le(DefaultMaxPacketSize + 1)), 0, Packet{}, 0, ErrPacketTooLarge},
		{"Minecraft 12 KiB fragment under default limit", raw(le(12288+10), le(3), le(0), bytes.Repeat([]byte{'a'}, 12288), []byte{0, 0}), 0,
			Packet{ID: 3, Body: bytes.Repeat([]byte{'a'}, 12288)}, 12288 + 14, nil},
		{"short size word", []byte{10, 0, 0}, 0, Packet{}, 0, ErrTruncated},
		{"short body", raw(le(15), le(5), le(0), []byte("hel")), 0, Packet{}, 0, ErrTruncated},
		{"empty input", nil, 0, Packet{}, 0, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, n, err := ParsePacket(tt.in, tt.max)
			if tt.wantErr != nil {
				var pe *ParseError
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &pe) {
					t.Fatalf("err = %v, want *ParseError wrapping %v", err, tt.wantErr)
				}
				if !strings.HasPrefix(err.Error(), "rcon: ") {
					t.Fatalf("error %q lacks the package prefix", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n != tt.n || got.ID != tt.want.ID || got.Type != tt.want.Type || !bytes.Equal(got.Body, tt.want.Body) {
				t.Fatalf("got %+v n=%d, want %+v n=%d", got, n, tt.want, tt.n)
			}
		})
	}
}

func TestSizeErrorFields(t *testing.T) {
	t.Parallel()
	_, _, err := ParsePacket(raw(le(5000)), 4096)
	var se *SizeError
	if !errors.As(err, &se) || se.Size != 5000 || se.Max != 4096 {
		t.Fatalf("err = %#v, want SizeError{5000, 4096}", err)
	}
}

// Every strict prefix of a valid packet is truncated, never a panic or a
// bogus packet.
func TestParsePacketPrefixes(t *testing.T) {
	t.Parallel()
	b, _ := Packet{ID: 3, Type: TypeResponseValue, Body: []byte("some output")}.AppendBinary(nil)
	for i := range len(b) {
		if _, _, err := ParsePacket(b[:i], 0); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix %d: err = %v, want ErrTruncated", i, err)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	bodies := [][]byte{nil, []byte("x"), []byte("a\x00b"), bytes.Repeat([]byte("Ж"), 3000)}
	for _, body := range bodies {
		p := Packet{ID: -77, Type: TypeExecCommand, Body: body}
		b, _ := p.AppendBinary(nil)
		got, n, err := ParsePacket(b, 0)
		if err != nil || n != len(b) || got.ID != p.ID || got.Type != p.Type || !bytes.Equal(got.Body, body) {
			t.Fatalf("round trip of %q: %+v n=%d err=%v", body, got, n, err)
		}
	}
}

// stream encodes packets back to back.
func stream(t testing.TB, pkts ...Packet) []byte {
	t.Helper()
	var b []byte
	for _, p := range pkts {
		var err error
		if b, err = p.AppendBinary(b); err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func TestReaderSegmentation(t *testing.T) {
	t.Parallel()
	pkts := []Packet{
		{ID: 1, Type: TypeResponseValue, Body: []byte{}},
		{ID: 1, Type: TypeAuthResponse, Body: []byte{}},
		{ID: 2, Type: TypeResponseValue, Body: bytes.Repeat([]byte("0123456789"), 500)},
		{ID: 3, Type: TypeResponseValue, Body: []byte("tail\x00with NUL")},
	}
	b := stream(t, pkts...)
	readers := map[string]io.Reader{
		"coalesced":   bytes.NewReader(b),
		"one byte":    iotest.OneByteReader(bytes.NewReader(b)),
		"half":        iotest.HalfReader(bytes.NewReader(b)),
		"data+EOF":    iotest.DataErrReader(bytes.NewReader(b)),
		"split sizes": &chunkReader{b: b, sizes: []int{2, 3, 1, 13, 4001, 7}},
	}
	for name, r := range readers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rd := NewReader(r, 0)
			for i, want := range pkts {
				got, err := rd.ReadPacket()
				if err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
				if got.ID != want.ID || got.Type != want.Type || !bytes.Equal(got.Body, want.Body) {
					t.Fatalf("packet %d = %+v, want %+v", i, got, want)
				}
			}
			if _, err := rd.ReadPacket(); err != io.EOF {
				t.Fatalf("after last packet: err = %v, want io.EOF", err)
			}
		})
	}
}

// chunkReader returns b in reads of the given sizes (cycling).
type chunkReader struct {
	b     []byte
	sizes []int
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := min(c.sizes[c.i%len(c.sizes)], len(p), len(c.b))
	c.i++
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

func TestReaderErrors(t *testing.T) {
	t.Parallel()
	full := stream(t, Packet{ID: 1, Body: []byte("hello")})
	tests := []struct {
		name    string
		in      []byte
		max     int
		wantErr error
	}{
		{"EOF in size word", full[:2], 0, ErrTruncated},
		{"EOF in body", full[:len(full)-1], 0, ErrTruncated},
		{"too large before allocating", raw(le(1 << 30)), 0, ErrPacketTooLarge},
		{"custom limit", full, 10, ErrPacketTooLarge},
		{"too small", raw(le(3), le(0)), 0, ErrPacketTooSmall},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewReader(bytes.NewReader(tt.in), tt.max).ReadPacket()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
	boom := errors.New("boom")
	if _, err := NewReader(iotest.ErrReader(boom), 0).ReadPacket(); !errors.Is(err, boom) {
		t.Fatalf("I/O error not passed through: %v", err)
	}
}

// A lying size field is rejected before anything is allocated for it.
func TestReaderHugeSizeNoAlloc(t *testing.T) {
	// Not parallel: it measures the process's allocations.
	in := raw(le(0x7fffffff))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 10 {
		if _, err := NewReader(bytes.NewReader(in), 0).ReadPacket(); !errors.Is(err, ErrPacketTooLarge) {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 1<<20 {
		t.Fatalf("allocated %d bytes for 10 rejected 2 GiB size fields", grown)
	}
}

func TestCodecAllocs(t *testing.T) {
	// Not parallel: testing.AllocsPerRun forbids it.
	p := Packet{ID: 42, Type: TypeExecCommand, Body: []byte("status")}
	buf := make([]byte, 0, 64)
	if a := testing.AllocsPerRun(100, func() { _, _ = p.AppendBinary(buf[:0]) }); a != 0 {
		t.Errorf("AppendBinary into a presized buffer: %v allocs, want 0", a)
	}
	b, _ := p.AppendBinary(nil)
	if a := testing.AllocsPerRun(100, func() { _, _, _ = ParsePacket(b, 0) }); a != 0 {
		t.Errorf("ParsePacket: %v allocs, want 0", a)
	}
}

func TestPacketTypeString(t *testing.T) {
	t.Parallel()
	for typ, want := range map[PacketType]string{
		TypeResponseValue: "SERVERDATA_RESPONSE_VALUE",
		TypeExecCommand:   "SERVERDATA_EXECCOMMAND/AUTH_RESPONSE",
		TypeAuth:          "SERVERDATA_AUTH",
		TypeChatValue:     "SERVERDATA_CHAT_VALUE",
		TypeRustConsole:   "RUST_CONSOLE",
		99:                "PacketType(99)",
	} {
		if got := typ.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int32(typ), got, want)
		}
	}
}

func BenchmarkAppendPacket(b *testing.B) {
	b.ReportAllocs()
	p := Packet{ID: 1234, Type: TypeExecCommand, Body: []byte("sv_cheats 0; status; users")}
	buf := make([]byte, 0, 128)
	for b.Loop() {
		buf, _ = p.AppendBinary(buf[:0])
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkParsePacket(b *testing.B) {
	b.ReportAllocs()
	in, _ := Packet{ID: 1234, Type: TypeResponseValue, Body: bytes.Repeat([]byte("x"), 4086)}.AppendBinary(nil)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := ParsePacket(in, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadPacket(b *testing.B) {
	b.ReportAllocs()
	one, _ := Packet{ID: 1234, Type: TypeResponseValue, Body: bytes.Repeat([]byte("x"), 4086)}.AppendBinary(nil)
	in := bytes.Repeat(one, 64)
	b.SetBytes(int64(len(one)))
	r := bytes.NewReader(in)
	rd := NewReader(r, 0)
	for i := 0; b.Loop(); i++ {
		if i%64 == 0 {
			r.Reset(in)
			rd = NewReader(r, 0)
		}
		if _, err := rd.ReadPacket(); err != nil {
			b.Fatal(err)
		}
	}
}

// stallReader returns b, failing with a timeout once at every offset in
// stalls, as a net.Conn does when its read deadline passes.
type stallReader struct {
	b      []byte
	off    int
	stalls map[int]bool
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func (s *stallReader) Read(p []byte) (int, error) {
	if s.stalls[s.off] {
		delete(s.stalls, s.off)
		return 0, timeoutError{}
	}
	if s.off == len(s.b) {
		return 0, io.EOF
	}
	end := len(s.b)
	for o := range s.stalls {
		if o > s.off && o < end {
			end = o
		}
	}
	n := copy(p, s.b[s.off:end])
	s.off += n
	return n, nil
}

// A read interrupted by a timeout anywhere in a packet, or in the stray
// prefix it was told to skip, resumes where it stopped.
func TestReaderResumesAfterTimeout(t *testing.T) {
	t.Parallel()
	want := Packet{ID: 7, Type: TypeResponseValue, Body: []byte("resumed body")}
	pkt := stream(t, want)
	for _, skip := range []bool{false, true} {
		b := pkt
		if skip {
			b = raw(squadTail, pkt)
		}
		for cut := 0; cut < len(b); cut++ {
			rd := NewReader(&stallReader{b: b, stalls: map[int]bool{cut: true}}, 0)
			if skip {
				rd.skipNext(squadTail)
			}
			_, err := rd.ReadPacket()
			if !isTimeoutErr(err) {
				t.Fatalf("skip=%v cut %d: first read err = %v, want a timeout", skip, cut, err)
			}
			got, err := rd.ReadPacket()
			if err != nil || got.ID != want.ID || got.Type != want.Type || !bytes.Equal(got.Body, want.Body) {
				t.Fatalf("skip=%v cut %d: resumed read = %+v, %v", skip, cut, got, err)
			}
			if _, err := rd.ReadPacket(); err != io.EOF {
				t.Fatalf("skip=%v cut %d: after the packet err = %v, want io.EOF", skip, cut, err)
			}
		}
	}
}

// The skipped prefix is discarded only when it is really there.
func TestReaderSkipOnlyMatchingPrefix(t *testing.T) {
	t.Parallel()
	want := Packet{ID: 9, Type: TypeResponseValue, Body: []byte("x")}
	rd := NewReader(bytes.NewReader(stream(t, want)), 0)
	rd.skipNext(squadTail)
	got, err := rd.ReadPacket()
	if err != nil || got.ID != want.ID || !bytes.Equal(got.Body, want.Body) {
		t.Fatalf("ReadPacket = %+v, %v", got, err)
	}
}
