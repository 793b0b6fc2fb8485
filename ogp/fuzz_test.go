package ogp

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// seedPackets are whole datagrams used to seed the fuzz targets.
func seedPackets(t testing.TB) [][]byte {
	return [][]byte{
		testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 03 00 00"),
		testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 07 00 02 00 00 00 00"),
		testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 0B 01 06 00 00 00 00 04 03 02 01 0D 8F 9F 0F 84 81 24"),
		testutil.Unhex(t, answerVector),
		testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 0B FF 07 EF BE AD DE 04 03 02 01 03 FF FF FF FF 4F 47 50 00 0B 01 06 EF BE AD DE 04 03 02 01 0D 8F 9F 0F 84 81 24"),
		testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 0D 01 0F EF BE AD DE 04 03 02 01 02 00 00 00 0D 83 83 03 54 65 73 74 00 09 53 72 76 00 64 6D 31 00 00 02 10 02"),
		testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 09 01 0D 04 03 02 01 02 01 84 81 24 41 00 05 32 00 78 00 42 00 FD 2C 01 10 0E 01 73 76 5F 78 00 31 00"),
	}
}

// seedBodies are answer and query bodies in both dialects.
func seedBodies(t testing.TB) [][]byte {
	var out [][]byte
	for _, p := range seedPackets(t) {
		if _, body, err := ParseHeader(p); err == nil {
			out = append(out, body)
		}
	}
	out = append(out, testutil.Unhex(t, v1InfoVector), testutil.Unhex(t, v1PlayerVector), coloredAnswer(t))
	return out
}

func FuzzParseHeader(f *testing.F) {
	for _, p := range seedPackets(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, body, err := ParseHeader(b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if !Is(b) || len(body) > len(b)-h.Len() {
			t.Fatalf("header %+v leaves body of %d bytes from %d", h, len(body), len(b))
		}
		enc, _ := h.AppendBinary(nil)
		h2, _, err := ParseHeader(enc)
		if err != nil || h2 != h {
			t.Fatalf("re-encoded header %+v -> %+v, %v", h, h2, err)
		}
	})
}

func FuzzParseQuery(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, dialect uint8) {
		d := Dialect(dialect & 1)
		q, err := ParseQuery(b, d)
		if err != nil {
			return
		}
		enc, err := q.Append(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		q2, err := ParseQuery(enc, d)
		if err != nil || q2 != q {
			t.Fatalf("query %+v re-parsed as %+v, %v", q, q2, err)
		}
	})
}

func FuzzParseAnswer(f *testing.F) {
	for _, b := range seedBodies(f) {
		f.Add(b, uint8(0))
		f.Add(b, uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, dialect uint8) {
		d := Dialect(dialect & 1)
		a, err := ParseAnswer(b, d)
		if err != nil {
			if a != nil && !errors.Is(err, ErrUnknownField) {
				t.Fatalf("partial answer with %v", err)
			}
			return
		}
		enc, err := a.Append(nil, d)
		if err != nil {
			t.Fatal(err)
		}
		a2, err := ParseAnswer(enc, d)
		if err != nil {
			t.Fatalf("re-encoded answer does not parse: %v", err)
		}
		if !reflect.DeepEqual(a, a2) {
			t.Fatalf("answer changed on re-encoding\n%+v\n%+v", a, a2)
		}
	})
}

func FuzzParseErrorAnswer(f *testing.F) {
	for _, p := range seedPackets(f) {
		f.Add(p)
	}
	f.Add([]byte{3})
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseErrorAnswer(b)
		if err != nil {
			return
		}
		e.Challenge()
		enc, _ := e.AppendBinary(nil)
		if e.Code == ErrorInvalidChallenge && !bytes.Equal(enc, b) {
			t.Fatalf("error 3 body changed: % X -> % X", b, enc)
		}
	})
}

func FuzzParseMasterUplink(f *testing.F) {
	f.Add([]byte{0x34, 0x12})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMasterUplink(b)
		if err != nil {
			return
		}
		enc, _ := m.AppendBinary(nil)
		if !bytes.Equal(enc, b[:2]) {
			t.Fatalf("% X -> % X", b, enc)
		}
	})
}

func FuzzElementary(f *testing.F) {
	for _, s := range []string{"00", "FE", "FF FF 00", "FF FF FF FF FF 00 00", "80 80 FF", "81 00 80 FF FF", "8F 9F 0F", "80 00"} {
		f.Add(testutil.Unhex(f, s), uint8(0))
		f.Add(testutil.Unhex(f, s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, b []byte, dialect uint8) {
		d := Dialect(dialect & 1)
		if v, n, err := ParseVarUint(b, d); err == nil {
			if n > len(b) {
				t.Fatalf("VarUINT took %d of %d bytes", n, len(b))
			}
			if w, _, err := ParseVarUint(AppendVarUint(nil, v, d), d); err != nil || w != v {
				t.Fatalf("VarUINT %d -> %d, %v", v, w, err)
			}
		}
		if v, _, err := ParseVarSint(b, d); err == nil {
			if w, _, err := ParseVarSint(AppendVarSint(nil, v, d), d); err != nil || w != v {
				t.Fatalf("VarSINT %d -> %d, %v", v, w, err)
			}
		}
		if v, _, err := ParseBitArray(b); err == nil {
			if w, _, err := ParseBitArray(AppendBitArray(nil, v)); err != nil || w != v {
				t.Fatalf("VarBitArray %#x -> %#x, %v", v, w, err)
			}
		}
	})
}

// FuzzReassembly feeds datagrams to the split reassembler the way the
// client does.
func FuzzReassembly(f *testing.F) {
	pk := seedPackets(f)
	f.Add(pk[5], pk[6], pk[5])
	f.Add(pk[6], pk[5], pk[6])
	f.Fuzz(func(t *testing.T, a, b, c []byte) {
		var r reassembly
		for _, p := range [][]byte{a, b, c} {
			h, body, err := ParseHeader(p)
			if err != nil || h.Flags&FlagSplit == 0 {
				continue
			}
			_, whole, err := r.add(h, body, 4096)
			if err != nil {
				return
			}
			if len(whole) > 4096 {
				t.Fatalf("reassembled %d bytes over the cap", len(whole))
			}
		}
	})
}

// FuzzRequestCopy checks the copy of a request that error 3 carries: it
// parses, holds the challenge, keeps every other header field and the
// body, grows by at most 4 bytes, and copying it again changes nothing.
func FuzzRequestCopy(f *testing.F) {
	for _, p := range seedPackets(f) {
		f.Add(p)
	}
	f.Add(testutil.Unhex(f, "FF FF FF FF 4F 47 50 00 05 01 00 AB CD 01"))                      // extra header bytes
	f.Add(testutil.Unhex(f, "FF FF FF FF 4F 47 50 00 05 01 80 00 00 01"))                      // padded flags
	f.Add(append(testutil.Unhex(f, "FF FF FF FF 4F 47 50 00 FD 01 00"), make([]byte, 260)...)) // no room for a challenge
	f.Fuzz(func(t *testing.T, b []byte) {
		const chal = 0xA1B2C3D4
		h, body, err := ParseHeader(b)
		if err != nil {
			return
		}
		c, err := appendRequestCopy([]byte{3}, b, chal)
		if err != nil {
			if h.Flags&FlagChallenge != 0 || int(b[PrefixLen])+4 <= 0xFF {
				t.Fatalf("no copy of % X: %v", b, err)
			}
			return
		}
		if c[0] != 3 {
			t.Fatalf("the copy overwrote the bytes before it")
		}
		c = c[1:]
		h2, body2, err := ParseHeader(c)
		want := h
		want.Flags |= FlagChallenge
		want.Challenge = chal
		if err != nil || h2 != want || !bytes.Equal(body2, body) || len(c) > len(b)+4 {
			t.Fatalf("copy of % X\n is % X: %+v, %v", b, c, h2, err)
		}
		again, err := appendRequestCopy(nil, c, chal)
		if err != nil || !bytes.Equal(again, c) {
			t.Fatalf("copying the copy % X gave % X, %v", c, again, err)
		}
	})
}
