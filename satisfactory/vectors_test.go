package satisfactory

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// gamedigPoll is the field notes' vector (section 8): gamedig's poll,
// cookie 05×8.
const gamedigPoll = "D5F6 00 01 0505050505050505 01"

// aReply is a reply to gamedig's poll, field by field: playing, build
// 416835 (0x65C43), no flags, two sub-states, the name "gsq".
const aReply = "D5F6 01 01 0505050505050505 03 435C0600 0000000000000000 02 00 0C00 01 0300 0300 677371 01"

func TestPollVector(t *testing.T) {
	t.Parallel()
	want := testutil.Unhex(t, gamedigPoll)
	got, _ := Poll{Cookie: 0x0505050505050505}.AppendBinary(nil)
	if !bytes.Equal(got, want) || len(got) != PollLen {
		t.Fatalf("AppendBinary = %x, want %x", got, want)
	}
	p, err := ParsePoll(want)
	if err != nil || p.Cookie != 0x0505050505050505 {
		t.Errorf("ParsePoll = %+v, %v", p, err)
	}
}

func TestReplyVector(t *testing.T) {
	t.Parallel()
	b := testutil.Unhex(t, aReply)
	s, err := ParseServerState(b)
	if err != nil {
		t.Fatal(err)
	}
	want := &ServerState{Cookie: 0x0505050505050505, State: StatePlaying, NetCL: 416835,
		SubStates: []SubState{{0, 12}, {1, 3}}, Name: Text("gsq")}
	if s.Cookie != want.Cookie || s.State != want.State || s.NetCL != want.NetCL || s.Flags != 0 ||
		!slices.Equal(s.SubStates, want.SubStates) || s.Name.String() != "gsq" || s.NoTerminator {
		t.Errorf("ParseServerState = %+v", s)
	}
	again, err := want.AppendBinary(nil)
	if err != nil || !bytes.Equal(again, b) || want.Len() != len(b) {
		t.Errorf("AppendBinary = %x (Len %d), %v; want %x", again, want.Len(), err, b)
	}
	if c, ok := ReplyCookie(b); !ok || c != want.Cookie {
		t.Errorf("ReplyCookie = %x, %v", c, ok)
	}
	// Without the terminator it reads, and says so; with bytes after the
	// terminator too.
	bare, err := ParseServerState(b[:len(b)-1])
	if err != nil || !bare.NoTerminator || bare.Name.String() != "gsq" {
		t.Errorf("no terminator: %+v, %v", bare, err)
	}
	if out, _ := bare.AppendBinary(nil); !bytes.Equal(out, b[:len(b)-1]) || bare.Len() != len(out) {
		t.Errorf("no terminator, encoded: %x", out)
	}
	if _, err := ParseServerState(append(slices.Clone(b), 9, 9)); err != nil {
		t.Errorf("bytes after the terminator: %v", err)
	}
	if StatePlaying.String() != "playing" || State(9).String() != "State(9)" || StateLoading.String() != "loading" {
		t.Error("State.String")
	}
}

// Every prefix of a reply that cuts a field is an error saying where,
// never a panic; every malformed header says what is wrong.
func TestReplyErrors(t *testing.T) {
	t.Parallel()
	b := testutil.Unhex(t, aReply)
	for i := range len(b) - 1 {
		_, err := ParseServerState(b[:i])
		var pe *ParseError
		if !errors.As(err, &pe) || pe.Packet != "reply" || pe.Offset > i {
			t.Errorf("reply[:%d]: %v", i, err)
		}
	}
	bad := func(i int, v byte) []byte {
		c := slices.Clone(b)
		c[i] = v
		return c
	}
	for _, tc := range []struct {
		name string
		b    []byte
		err  error
		off  int
	}{
		{"magic", bad(0, 0xFF), ErrBadMagic, 0},
		{"a poll", testutil.Unhex(t, gamedigPoll), ErrUnexpectedType, 2},
		{"version 2", bad(3, 2), ErrVersion, 3},
		{"not the terminator", bad(len(b)-1, 0), ErrMalformed, len(b) - 1},
		{"name longer than the datagram", bad(len(b)-6, 0xFF), ErrTruncated, len(b) - 6},
		{"sub-states beyond it", bad(25, 200), ErrTruncated, len(b)},
	} {
		_, err := ParseServerState(tc.b)
		var pe *ParseError
		if !errors.Is(err, tc.err) || !errors.As(err, &pe) || pe.Offset != tc.off {
			t.Errorf("%s: %v, want %v at offset %d", tc.name, err, tc.err, tc.off)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "satisfactory: parse reply at offset ") || strings.Count(msg, "satisfactory: ") != 1 {
			t.Errorf("%s: message %q", tc.name, msg)
		}
	}
	for _, p := range [][]byte{nil, testutil.Unhex(t, "D5F6 00 01 05"), testutil.Unhex(t, "D5F6 00 01 0505050505050505 02"), b} {
		if _, err := ParsePoll(p); err == nil {
			t.Errorf("ParsePoll(%x) read", p)
		}
	}
	if _, err := (&ServerState{Name: make(Text, 70000)}).AppendBinary(nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a 70,000-byte name: %v", err)
	}
}

func TestDescribe(t *testing.T) {
	t.Parallel()
	for b, want := range map[string]string{
		gamedigPoll:                      "poll, cookie 0x505050505050505",
		aReply:                           "reply, playing, cookie 0x505050505050505",
		"D5F6 01 01 0505050505050505 03": "malformed reply",
		"FFFFFFFF 54":                    "not a Lightweight Query datagram",
	} {
		if got := Describe(testutil.Unhex(t, b)); got != want {
			t.Errorf("Describe(%s) = %q, want %q", b, got, want)
		}
	}
}
