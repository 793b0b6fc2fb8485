package webrcon

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// The request of console-field-notes.md §7, byte for byte.
func TestRequestVector(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Request{Identifier: 1001, Message: "serverinfo", Name: "WebRcon"})
	if err != nil || string(b) != `{"Identifier":1001,"Message":"serverinfo","Name":"WebRcon"}` {
		t.Errorf("request = %s, %v", b, err)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1, 125, 126, 65535, 65536, 200000} {
		for _, masked := range []bool{false, true} {
			payload := bytes.Repeat([]byte("ab"), n)[:n]
			f := Frame{Fin: true, Op: OpText, Masked: masked, Key: [4]byte{1, 2, 3, 4}, Payload: payload}
			b, err := f.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadFrame(bytes.NewReader(b), 1<<20)
			if err != nil || !got.Fin || got.Op != OpText || got.Masked != masked || !bytes.Equal(got.Payload, payload) {
				t.Fatalf("n=%d masked=%v: %v, %v", n, masked, got.Op, err)
			}
			if masked && n > 0 && bytes.Contains(b, payload) {
				t.Errorf("n=%d: masked payload sent in the clear", n)
			}
			for i := 1; i < len(b) && i < 20; i++ {
				if _, err := ReadFrame(bytes.NewReader(b[:i]), 1<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("prefix %d of %d: %v, want io.ErrUnexpectedEOF", i, len(b), err)
				}
			}
		}
	}
}

func TestFrameLimitsBeforeAllocating(t *testing.T) {
	t.Parallel()
	// A header that claims 2^63 bytes is refused from its 10 bytes.
	huge := []byte{0x81, 127, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	if _, err := ReadFrame(bytes.NewReader(huge), 1<<20); !errors.Is(err, ErrFrameTooLarge) {
		t.Errorf("2^63-byte frame: %v", err)
	}
	for name, b := range map[string][]byte{
		"rsv":             {0xC1, 0},
		"opcode 3":        {0x83, 0},
		"fragmented ping": {0x09, 0},
		"long close":      {0x88, 126, 0, 200},
	} {
		if _, err := ReadFrame(bytes.NewReader(b), 1<<20); !errors.As(err, new(*FrameError)) {
			t.Errorf("%s: %v, want a FrameError", name, err)
		}
	}
	if _, err := (Frame{Op: OpPing, Fin: true, Payload: make([]byte, 126)}).AppendBinary(nil); !errors.Is(err, ErrBadControlFrame) {
		t.Errorf("long ping encoded: %v", err)
	}
	// Rust's answer to a wrong password reads as a close frame of code 1000.
	f, err := ReadFrame(bytes.NewReader(closeFrame), 125)
	if err != nil || f.Op != OpClose || !bytes.Equal(f.Payload, []byte{0x03, 0xE8}) {
		t.Errorf("close frame: %+v, %v", f, err)
	}
}

func TestMessagesBecomeTypedEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw                        string
		kind, text, player, id, ch string
	}{
		{`{"Message":"{\"Channel\":1,\"Message\":\"rush B\",\"UserId\":\"76561198000000001\",\"Username\":\"Ann\",\"Color\":\"#5af\",\"Time\":1700000000}","Identifier":0,"Type":"Chat"}`,
			"chat", "rush B", "Ann", "76561198000000001", "team"},
		{`{"Message":"{\"PlayerId\":\"7656119800000000\",\"PlayerName\":\"Bob\",\"TargetId\":\"1\",\"TargetName\":\"Eve\",\"Subject\":\"Cheating\",\"Message\":\"aimbot\",\"Type\":\"cheat\"}","Identifier":0,"Type":"Report"}`,
			"report", "Cheating (about Eve): aimbot", "Bob", "7656119800000000", ""},
		{`{"Message":"203.0.113.5:61234/76561198000000001/Ann Lee joined [windows/76561198000000001]","Identifier":0,"Type":"Generic"}`,
			"join", "203.0.113.5:61234/76561198000000001/Ann Lee joined [windows/76561198000000001]", "Ann Lee", "76561198000000001", ""},
		{`{"Message":"203.0.113.5:61234/76561198000000001/Ann disconnecting: closing","Identifier":-1,"Type":"Generic"}`,
			"leave", "203.0.113.5:61234/76561198000000001/Ann disconnecting: closing", "Ann", "76561198000000001", ""},
		{`{"Message":"{not json","Identifier":0,"Type":"Chat"}`, "log", "{not json", "", "", ""},
	} {
		var m Message
		if err := json.Unmarshal([]byte(tc.raw), &m); err != nil {
			t.Fatal(err)
		}
		e := m.Event([]byte(tc.raw))
		if string(e.Kind) != tc.kind || e.Text != tc.text || e.Player != tc.player || e.PlayerID != tc.id || e.Channel != tc.ch || string(e.Raw) != tc.raw {
			t.Errorf("%s:\n got %+v", tc.raw, e)
		}
	}
}

func TestPasswordRisk(t *testing.T) {
	t.Parallel()
	if got := PasswordRisk("pa$$w(rd)$"); got != "$()" {
		t.Errorf("PasswordRisk = %q", got)
	}
	if got := PasswordRisk("plain_Pass.123~"); got != "" {
		t.Errorf("PasswordRisk of a safe password = %q", got)
	}
	if strings.ContainsAny(RiskyPasswordChars, "abc") {
		t.Error("letters are risky")
	}
}

func TestIs(t *testing.T) {
	t.Parallel()
	for b, want := range map[string]bool{
		"\x88\x02\x03\xe8":             true,
		"HTTP/1.1 400 Bad Request\r\n": true,
		"\x0a\x00\x00\x00\x01\x00":     false, // a Source RCON packet
		"":                             false,
	} {
		if Is([]byte(b)) != want {
			t.Errorf("Is(%q) = %v", b, !want)
		}
	}
}
