package slp

// VarInt and String are the base types of the Java protocol (wiki.vg,
// "Data types"): a VarInt is LEB128 over the unsigned 32-bit value, seven
// bits a byte, least significant group first, so it takes 1 to 5 bytes
// and every negative number takes 5 (-1 is FF FF FF FF 0F). A String is a
// VarInt byte length and that many bytes of UTF-8.

// MaxVarIntLen is the most bytes a VarInt takes.
const MaxVarIntLen = 5

// AppendVarInt appends v as a VarInt.
func AppendVarInt(b []byte, v int32) []byte {
	u := uint32(v)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// VarIntLen is the number of bytes AppendVarInt writes for v.
func VarIntLen(v int32) int {
	n := 1
	for u := uint32(v); u >= 0x80; u >>= 7 {
		n++
	}
	return n
}

// ConsumeVarInt reads the VarInt at the start of b and returns it and the
// bytes it took. It fails with ErrTruncated when b ends inside it (more
// bytes may complete it) and with ErrVarIntTooLong when its fifth byte
// still has the continuation bit. Bits beyond the 32nd in the fifth byte
// are ignored, as the vanilla reader does.
func ConsumeVarInt(b []byte) (v int32, n int, err error) {
	var u uint32
	for i := range MaxVarIntLen {
		if i >= len(b) {
			return 0, 0, ErrTruncated
		}
		c := b[i]
		u |= uint32(c&0x7F) << (7 * i)
		if c < 0x80 {
			return int32(u), i + 1, nil
		}
	}
	return 0, 0, ErrVarIntTooLong
}

// AppendString appends s as a String.
func AppendString(b []byte, s string) []byte {
	b = AppendVarInt(b, int32(len(s)))
	return append(b, s...)
}

// consumeString reads a String of at most limit bytes at the start of b,
// returning its bytes (aliasing b) and the bytes it took.
func consumeString(b []byte, limit int) (s []byte, n int, err error) {
	l, n, err := ConsumeVarInt(b)
	if err != nil {
		return nil, 0, err
	}
	if l < 0 || int(l) > limit {
		return nil, 0, detail(ErrTooLarge, "a string of %d bytes (the limit is %d)", l, limit)
	}
	if len(b)-n < int(l) {
		return nil, 0, ErrTruncated
	}
	return b[n : n+int(l) : n+int(l)], n + int(l), nil
}
