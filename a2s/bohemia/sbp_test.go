package bohemia

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gsq-project/gsq/a2s"
)

// dayzVector is a version 2 message written out by hand, field by field:
// two DLC bits, so two hashes; a DLC mod with a 4-byte Workshop ID and a
// mod with a 5-byte one; one signature.
var dayzVector = []byte{
	2,    // version
	0,    // overflow flags
	0x03, // DLC bits 0 and 1
	0x00,
	0x11, 0x22, 0x33, 0x44, // hash of DLC bit 0
	0x55, 0x66, 0x77, 0x88, // hash of DLC bit 1
	2,                      // mods
	0xEF, 0xBE, 0xAD, 0xDE, // mod hash
	0x14,                   // DLC flag, 4-byte Workshop ID
	0x04, 0xB0, 0xEF, 0x5C, // 1559212036
	8, 'L', 'i', 'v', 'o', 'n', 'i', 'a', 0x01, // name with a 0x01 byte
	0x00, 0x00, 0x00, 0x00, // mod hash 0
	0x05,                         // 5-byte Workshop ID
	0x01, 0x00, 0x00, 0x00, 0x01, // 4294967297
	3, 'C', 'F', 0xFF, // name with a 0xFF byte
	1, // signatures
	4, 'd', 'a', 'y', 'z',
}

var dayzDecoded = &Browser{
	Version: 2, DLC: 3, DLCHashes: []uint32{0x44332211, 0x88776655},
	Mods: []Mod{
		{Hash: 0xDEADBEEF, DLC: true, WorkshopID: 1559212036, Name: a2s.Text("Livonia\x01")},
		{Hash: 0, WorkshopID: 4294967297, Name: a2s.Text("CF\xFF")},
	},
	Signatures: []a2s.Text{a2s.Text("dayz")},
}

func TestDecodeVector(t *testing.T) {
	t.Parallel()
	got, err := Decode(dayzVector)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, dayzDecoded) {
		t.Fatalf("Decode =\n%+v\nwant\n%+v", got, dayzDecoded)
	}
	enc, err := got.Append(nil)
	if err != nil || !bytes.Equal(enc, dayzVector) {
		t.Fatalf("Append = % X, %v\nwant % X", enc, err, dayzVector)
	}
}

func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	for n := range len(dayzVector) {
		_, err := Decode(dayzVector[:n])
		var de *DecodeError
		if !errors.As(err, &de) || !errors.Is(err, ErrTruncated) || de.Offset != n {
			t.Fatalf("prefix of %d bytes: err = %v, want ErrTruncated at %d", n, err, n)
		}
	}
	if _, err := Decode(append(bytes.Clone(dayzVector), 0)); !errors.Is(err, ErrTrailing) {
		t.Errorf("trailing byte: %v", err)
	}
	v3 := bytes.Clone(dayzVector)
	v3[0] = 3
	if _, err := Decode(v3); !errors.Is(err, ErrVersion) {
		t.Errorf("version 3: %v", err)
	}
	long := bytes.Clone(dayzVector)
	long[17] = 0x09 // a 9-byte Workshop ID
	if _, err := Decode(long); !errors.Is(err, ErrTooLong) {
		t.Errorf("9-byte Workshop ID: %v", err)
	}
}

func TestEscaping(t *testing.T) {
	t.Parallel()
	msg := []byte{0x00, 0x01, 0xFF, 'a', 0x01, 0x01, 0x02, 0x03}
	esc := AppendEscaped(nil, msg)
	want := []byte{0x01, 0x02, 0x01, 0x01, 0x01, 0x03, 'a', 0x01, 0x01, 0x01, 0x01, 0x02, 0x03}
	if !bytes.Equal(esc, want) {
		t.Fatalf("AppendEscaped = % X, want % X", esc, want)
	}
	if bytes.IndexByte(esc, 0) >= 0 {
		t.Fatal("escaped message holds a NUL")
	}
	if got, err := Unescape(esc); err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("Unescape = % X, %v", got, err)
	}
	for _, bad := range [][]byte{{0x01}, {'a', 0x01, 0x04}, {0x01, 0x00}} {
		if _, err := Unescape(bad); !errors.Is(err, ErrEscape) {
			t.Errorf("Unescape(% X) err = %v, want ErrEscape", bad, err)
		}
	}
}

func TestChunksRoundTrip(t *testing.T) {
	t.Parallel()
	escapes := bytes.Repeat([]byte{0x01, 'x', 0x00, 0xFF}, 200)
	for _, size := range []int{0, 1, ChunkSize - 1, ChunkSize, ChunkSize + 1, 1000} {
		for name, src := range map[string][]byte{"plain": bytes.Repeat([]byte{'m'}, size), "escapes": escapes[:min(size, len(escapes))]} {
			rules, err := Chunks(src)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rules {
				if len(r.Value) > ChunkSize {
					t.Fatalf("%s %d: chunk %d has %d bytes", name, size, i, len(r.Value))
				}
				if _, err := Unescape(r.Value); err != nil {
					t.Fatalf("%s %d: chunk %d cuts an escape pair: %v", name, size, i, err)
				}
			}
			got, rest, err := Message(rules)
			if err != nil || !bytes.Equal(got, src) || len(rest) != 0 {
				t.Fatalf("%s %d: Message = %d bytes, %d other rules, %v", name, size, len(got), len(rest), err)
			}
		}
	}
	if _, err := Chunks(make([]byte, 256*ChunkSize)); !errors.Is(err, ErrTooLong) {
		t.Errorf("256 chunks: %v", err)
	}
}

// The message survives the A2S codec: the chunks go out in a real
// A2S_RULES reply, mixed with text rules, and come back in another order.
func TestMessageThroughRulesReply(t *testing.T) {
	t.Parallel()
	chunks, err := Chunks(dayzVector)
	if err != nil {
		t.Fatal(err)
	}
	list := []a2s.Rule{{Name: a2s.Text("allowedBuild"), Value: a2s.Text("0")}}
	for i := len(chunks) - 1; i >= 0; i-- {
		list = append(list, chunks[i])
	}
	list = append(list, chunks[0], a2s.Rule{Name: a2s.Text("dedicated"), Value: a2s.Text("1")})
	b, err := (&a2s.Rules{Count: uint16(len(list)), List: list}).AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	rules, err := a2s.ParseRules(b)
	if err != nil {
		t.Fatal(err)
	}
	msg, rest, err := Message(rules.List)
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 2 || string(rest[0].Name) != "allowedBuild" || string(rest[1].Name) != "dedicated" {
		t.Errorf("other rules = %+v", rest)
	}
	got, err := Decode(msg)
	if err != nil || !reflect.DeepEqual(got, dayzDecoded) {
		t.Fatalf("Decode = %+v, %v", got, err)
	}
}

func TestMessageErrors(t *testing.T) {
	text := []a2s.Rule{{Name: a2s.Text("hostname"), Value: a2s.Text("x")}}
	if _, rest, err := Message(text); !errors.Is(err, ErrNoMessage) || len(rest) != 1 {
		t.Errorf("no chunks: %v, %d rules", err, len(rest))
	}
	// Scans meet rules without a message on nearly every server; that
	// answer must not copy them.
	if n := testing.AllocsPerRun(100, func() { Message(text) }); n != 0 {
		t.Errorf("no chunks: %v allocations, want 0", n)
	}
	chunks, _ := Chunks(bytes.Repeat([]byte{'m'}, 3*ChunkSize))
	if _, _, err := Message(chunks[1:]); !errors.Is(err, ErrIncomplete) {
		t.Errorf("chunk 1 missing: %v", err)
	}
	twice := append(bytes.Clone(chunks[0].Value), 'z')
	bad := append(append([]a2s.Rule(nil), chunks...), a2s.Rule{Name: chunks[0].Name, Value: a2s.Text(twice)})
	if _, _, err := Message(bad); !errors.Is(err, ErrIncomplete) {
		t.Errorf("chunk sent twice with different values: %v", err)
	}
	// A chunk of another count stays among the other rules.
	stray := a2s.Rule{Name: a2s.Text{1, 9}, Value: a2s.Text("?")}
	msg, rest, err := Message(append(append([]a2s.Rule(nil), chunks...), stray))
	if err != nil || len(msg) != 3*ChunkSize || len(rest) != 1 {
		t.Errorf("stray chunk: %d bytes, %d other rules, %v", len(msg), len(rest), err)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(dayzVector)
	f.Add([]byte{2, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, msg []byte) {
		br, err := Decode(msg)
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || de.Offset < 0 || de.Offset > len(msg) {
				t.Fatalf("error %v is not a DecodeError within the input", err)
			}
			return
		}
		enc, err := br.Append(nil)
		if err != nil {
			t.Fatalf("Append of a decoded message: %v", err)
		}
		again, err := Decode(enc)
		if err != nil || !reflect.DeepEqual(again, br) {
			t.Fatalf("round trip:\n%+v\n%+v, %v", br, again, err)
		}
	})
}

func FuzzMessage(f *testing.F) {
	chunks, _ := Chunks(dayzVector)
	var seed []byte
	for _, c := range chunks {
		seed = append(append(append(seed, c.Name...), byte(len(c.Value))), c.Value...)
	}
	f.Add(seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		// b is a list of rules: 2 name bytes, a length byte, the value.
		var rules []a2s.Rule
		for len(b) >= 3 {
			n := min(int(b[2]), len(b)-3)
			rules = append(rules, a2s.Rule{Name: a2s.Text(b[:2]), Value: a2s.Text(b[3 : 3+n])})
			b = b[3+n:]
		}
		msg, _, err := Message(rules)
		if err != nil {
			return
		}
		again, err := Chunks(msg)
		if err != nil {
			return // more than 255 chunks once re-cut
		}
		if got, _, err := Message(again); err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("re-chunked message differs: %v", err)
		}
	})
}
