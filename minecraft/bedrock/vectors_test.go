package bedrock

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The 33-byte ping of the field notes' §6.
func TestPingVector(t *testing.T) {
	t.Parallel()
	want := testutil.Unhex(t, "01 0000000000000000 00FFFF00FEFEFEFEFDFDFDFD12345678 0000000000000000")
	got, _ := Ping{}.AppendBinary(nil)
	if !bytes.Equal(got, want) || len(got) != PingLen {
		t.Fatalf("% X", got)
	}
	p, err := ParsePing(want)
	if err != nil || p != (Ping{}) {
		t.Errorf("%+v %v", p, err)
	}
	bad := bytes.Clone(want)
	bad[10] = 0
	if _, err := ParsePing(bad); !errors.Is(err, ErrBadMagic) {
		t.Errorf("bad magic: %v", err)
	}
	for i := range PingLen {
		if _, err := ParsePing(want[:i]); err == nil {
			t.Errorf("ping cut at %d: no error", i)
		}
	}
}

// A pong with an empty version, a portV6 of -1 and § codes, in the manner
// of mcstatus' test_bedrock_client fixture; and GameQ's MCPE fields.
func TestPongStatus(t *testing.T) {
	t.Parallel()
	status := "MCPE;§r§4G§r§6a§r§ey§r§2B§r§1o§r§9w§r§ds§r§4e§r§6r;422;;1;69;3767071975391053022;;Default;1;19132;-1;"
	b, err := Pong{Time: 42, ServerGUID: -305653527360353208, Status: Text(status)}.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePong(b)
	if err != nil || p.Time != 42 || p.ServerGUID != -305653527360353208 || string(p.Status) != status {
		t.Fatalf("%+v %v", p, err)
	}
	s := ParseStatus(p.Status)
	if string(s.Edition) != "MCPE" || s.Version != nil || *s.Protocol != 422 || *s.Online != 1 || *s.Max != 69 ||
		string(s.ServerID) != "3767071975391053022" || s.LevelName != nil || string(s.GameMode) != "Default" ||
		*s.GameModeID != 1 || *s.PortV4 != 19132 || *s.PortV6 != -1 {
		t.Errorf("%+v", s)
	}
	back, err := s.AppendStatus(nil)
	if err != nil || string(back) != status {
		t.Errorf("AppendStatus = %q, %v", back, err)
	}
	for i := range len(b) - len(status) + 1 {
		if _, err := ParsePong(b[:i]); err == nil {
			t.Errorf("pong cut at %d: no error", i)
		}
	}
	// Short and empty statuses, negative ids, Education Edition.
	for _, tc := range []struct{ in, edition string }{{"", ""}, {"MCEE;Class;", "MCEE"}, {"MCPE;x;1;1.0;2;3;-9", "MCPE"}} {
		s := ParseStatus([]byte(tc.in))
		if string(s.Edition) != tc.edition {
			t.Errorf("%q: %+v", tc.in, s)
		}
	}
	if s := ParseStatus([]byte("MCPE;x;1;1.0;2;3;-9")); string(s.ServerID) != "-9" || *s.Max != 3 || s.LevelName != nil {
		t.Errorf("%+v", s)
	}
	// A pong of 64 KiB is refused by its length, before it is read.
	huge := append(b[:pongHeaderLen-2:pongHeaderLen-2], 0xFF, 0xFF)
	huge = append(huge, make([]byte, 0xFFFF)...)
	if _, err := ParsePong(huge); !errors.Is(err, ErrTooLarge) {
		t.Errorf("64 KiB pong: %v", err)
	}
}
