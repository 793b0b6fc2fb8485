package wire

import (
	"errors"
	"testing"
)

func TestReaderRoundTrip(t *testing.T) {
	var b []byte
	b = append(b, 7)
	b = AppendUint16(b, 0xBEEF)
	b = AppendInt32(b, -2)
	b = AppendUint64(b, 1<<60|5)
	b = AppendFloat32(b, -1.5)
	b = AppendString(b, "hi")
	r := NewReader(b)
	if v, _ := r.Uint8(); v != 7 {
		t.Fatalf("u8 = %d", v)
	}
	if v, _ := r.Uint16(); v != 0xBEEF {
		t.Fatalf("u16 = %x", v)
	}
	if v, _ := r.Int32(); v != -2 {
		t.Fatalf("i32 = %d", v)
	}
	if v, _ := r.Uint64(); v != 1<<60|5 {
		t.Fatalf("u64 = %d", v)
	}
	if v, _ := r.Float32(); v != -1.5 {
		t.Fatalf("f32 = %v", v)
	}
	if s, err := r.CString(); err != nil || string(s) != "hi" {
		t.Fatalf("cstring = %q, %v", s, err)
	}
	if r.Len() != 0 || r.Offset() != len(b) {
		t.Fatalf("len %d off %d", r.Len(), r.Offset())
	}
}

func TestReaderShortLeavesOffset(t *testing.T) {
	r := NewReader([]byte{1, 2, 3})
	checks := []func() error{
		func() error { _, err := r.Uint32(); return err },
		func() error { _, err := r.Uint64(); return err },
		func() error { _, err := r.Bytes(4); return err },
		func() error { _, err := r.Bytes(-1); return err },
		func() error { return r.Skip(4) },
	}
	for i, c := range checks {
		if err := c(); !errors.Is(err, ErrShort) {
			t.Errorf("check %d: err = %v, want ErrShort", i, err)
		}
		if r.Offset() != 0 {
			t.Fatalf("check %d moved the offset to %d", i, r.Offset())
		}
	}
	if _, err := r.CString(); !errors.Is(err, ErrNoTerminator) {
		t.Errorf("cstring err = %v", err)
	}
}
