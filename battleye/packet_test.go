package battleye

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The vectors of console-field-notes.md §7: a login captured from a real
// server (thegamecracks/berconpy#8) and the computed answers.
var vectors = []struct {
	name string
	hex  string
	p    Packet
}{
	{"login captured", "4245B4AD62E8FF00 54657462766B634D4138554A", Packet{Type: TypeLogin, Data: []byte("TetbvkcMA8UJ")}},
	{"login ok", "424569DDDE36FF0001", Packet{Type: TypeLogin, Data: []byte{1}}},
	{"login failed", "4245FFEDD941FF0000", Packet{Type: TypeLogin, Data: []byte{0}}},
	{"keep-alive seq 0", "4245BEDCC258FF0100", Packet{Type: TypeCommand, Seq: 0}},
	{"ack message 0", "42457D8FEF73FF0200", Packet{Type: TypeMessage, Seq: 0}},
}

func TestVectors(t *testing.T) {
	t.Parallel()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			b := testutil.Unhex(t, v.hex)
			p, err := ParsePacket(b)
			if err != nil {
				t.Fatal(err)
			}
			if p.Type != v.p.Type || p.Seq != v.p.Seq || !bytes.Equal(p.Data, v.p.Data) {
				t.Errorf("ParsePacket = %+v, want %+v", p, v.p)
			}
			enc, err := v.p.AppendBinary(nil)
			if err != nil || !bytes.Equal(enc, b) {
				t.Errorf("AppendBinary = %x, %v; want %x", enc, err, b)
			}
			if v.p.Len() != len(b) {
				t.Errorf("Len = %d, want %d", v.p.Len(), len(b))
			}
			// Every prefix fails, none panics.
			for i := range b {
				if _, err := ParsePacket(b[:i]); err == nil {
					t.Errorf("prefix of %d bytes parsed", i)
				}
			}
		})
	}
}

func TestMultiPartHeader(t *testing.T) {
	t.Parallel()
	p := Packet{Type: TypeCommand, Seq: 7, Total: 3, Index: 2, Data: []byte("tail")}
	b, err := p.AppendBinary(nil)
	if err != nil || len(b) != p.Len() {
		t.Fatalf("AppendBinary: %x, %v", b, err)
	}
	got, err := ParsePacket(b)
	if err != nil || got.Total != 3 || got.Index != 2 || string(got.Data) != "tail" || got.Seq != 7 {
		t.Fatalf("ParsePacket = %+v, %v", got, err)
	}
	// A zero-length answer is "01 seq" alone; a NUL and fewer than three
	// bytes cannot be a header.
	for _, bad := range []Packet{{Type: TypeCommand, Total: 2, Index: 2}, {Type: TypeMessage, Total: 1}} {
		if _, err := bad.AppendBinary(nil); !errors.Is(err, ErrBadPart) {
			t.Errorf("AppendBinary(%+v) = %v, want ErrBadPart", bad, err)
		}
	}
	raw, _ := Packet{Type: TypeCommand, Seq: 1, Data: []byte{0, 2, 5}}.AppendBinary(nil)
	if _, err := ParsePacket(raw); !errors.Is(err, ErrBadPart) {
		t.Errorf("part 5 of 2: %v, want ErrBadPart", err)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	good := testutil.Unhex(t, "424569DDDE36FF0001")
	bad := bytes.Clone(good)
	bad[len(bad)-1] = 1 ^ bad[len(bad)-1]
	_, err := ParsePacket(bad)
	var ce *CRCError
	if !errors.Is(err, ErrBadCRC) || !errors.As(err, &ce) || ce.Want == ce.Got {
		t.Errorf("bad CRC: %v", err)
	}
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "battleye: parse packet at offset 2: ") || strings.Count(err.Error(), "battleye: ") != 1 {
		t.Errorf("message %q", err)
	}
	if _, err := ParsePacket([]byte("\xff\xff\xff\xffTSource Engine Query\x00")); !errors.Is(err, ErrNotBattlEye) {
		t.Errorf("A2S query: %v", err)
	}
	unknown, _ := Packet{Type: 7}.AppendBinary(nil)
	if _, err := ParsePacket(unknown); !errors.Is(err, ErrUnknownType) {
		t.Errorf("type 7: %v", err)
	}
	if !Is(good) || Is(good[:5]) || Is([]byte("BExxxxxxxx")) {
		t.Error("Is disagrees")
	}
}

func TestAppendAllocsNothingWithRoom(t *testing.T) {
	p := Packet{Type: TypeCommand, Seq: 9, Data: []byte("players")}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { _, _ = p.AppendBinary(buf[:0]) }); n != 0 {
		t.Errorf("AppendBinary allocates %.0f times", n)
	}
}

func TestReassembler(t *testing.T) {
	t.Parallel()
	r := NewReassembler(10)
	part := func(i, total byte, s string) Packet {
		return Packet{Type: TypeCommand, Total: total, Index: i, Data: []byte(s)}
	}
	for _, step := range []struct {
		p    Packet
		done bool
	}{
		{part(2, 3, "ef"), false},
		{part(2, 3, "ef"), false}, // duplicate
		{part(0, 3, "ab"), false},
		{part(1, 3, "cd"), true},
	} {
		done, err := r.Add(step.p)
		if err != nil || done != step.done {
			t.Fatalf("Add(%d) = %v, %v", step.p.Index, done, err)
		}
	}
	if got := string(r.Bytes()); got != "abcdef" {
		t.Errorf("Bytes = %q", got)
	}
	if _, err := r.Add(part(0, 4, "x")); !errors.Is(err, ErrBadPart) {
		t.Errorf("count changed: %v", err)
	}
	big := NewReassembler(3)
	big.Add(part(0, 2, "ab"))
	if _, err := big.Add(part(1, 2, "cd")); !errors.Is(err, ErrResponseTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}
