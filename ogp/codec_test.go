package ogp

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// Vectors worked out by hand from the v0.91 type definitions (spec 3.4)
// and, for V1, from the SDK layout in the package doc.
func TestVarUintVectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v        uint32
		v091, v1 string
	}{
		{0, "00", "00"}, {127, "7F", "7F"}, {253, "FD", "FD"},
		{254, "FE", "FE FE 00"},
		{255, "FF FF 00", "FE FF 00"},
		{300, "FF 2C 01", "FE 2C 01"},
		{65534, "FF FE FF", "FE FE FF"},
		{65535, "FF FF FF FF FF 00 00", "FF FF FF 00 00"},
		{70000, "FF FF FF 70 11 01 00", "FF 70 11 01 00"},
		{4294967295, "FF FF FF FF FF FF FF", "FF FF FF FF FF"},
	}
	for _, c := range cases {
		for _, dc := range []struct {
			d    Dialect
			want string
		}{{V091, c.v091}, {V1, c.v1}} {
			want := testutil.Unhex(t, dc.want)
			got := AppendVarUint(nil, c.v, dc.d)
			if !bytes.Equal(got, want) {
				t.Errorf("%v: AppendVarUint(%d) = % X, want % X", dc.d, c.v, got, want)
			}
			if n := varUintLen(c.v, dc.d); n != len(want) {
				t.Errorf("%v: varUintLen(%d) = %d, want %d", dc.d, c.v, n, len(want))
			}
			v, n, err := ParseVarUint(append(want, 0xAA), dc.d)
			if err != nil || v != c.v || n != len(want) {
				t.Errorf("%v: ParseVarUint(% X) = %d, %d, %v", dc.d, want, v, n, err)
			}
			for i := range want {
				if _, _, err := ParseVarUint(want[:i], dc.d); !errors.Is(err, ErrTruncated) {
					t.Errorf("%v: ParseVarUint(% X) err = %v, want ErrTruncated", dc.d, want[:i], err)
				}
			}
		}
	}
	// Non-minimal forms decode.
	for _, c := range []struct {
		d  Dialect
		in string
		v  uint32
	}{{V091, "FF 05 00", 5}, {V091, "FF FF FF 05 00 00 00", 5}, {V1, "FE 05 00", 5}, {V1, "FF 05 00 00 00", 5}} {
		if v, _, err := ParseVarUint(testutil.Unhex(t, c.in), c.d); err != nil || v != c.v {
			t.Errorf("%v: ParseVarUint(%s) = %d, %v; want %d", c.d, c.in, v, err, c.v)
		}
	}
}

func TestVarSintVectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		v        int32
		v091, v1 string
	}{
		{5, "05", "05"}, {-3, "FD", "FD"}, {127, "7F", "7F"}, {-126, "82", "82"},
		{-127, "81", "80 81 FF"},
		{-128, "80 80 FF", "80 80 FF"},
		{128, "80 80 00", "80 80 00"},
		{-300, "80 D4 FE", "80 D4 FE"},
		{-32767, "80 01 80", "80 01 80"},
		{-32768, "80 00 80 00 80 FF FF", "81 00 80 FF FF"},
		{40000, "80 00 80 40 9C 00 00", "81 40 9C 00 00"},
		{-40000, "80 00 80 C0 63 FF FF", "81 C0 63 FF FF"},
	}
	for _, c := range cases {
		for _, dc := range []struct {
			d    Dialect
			want string
		}{{V091, c.v091}, {V1, c.v1}} {
			want := testutil.Unhex(t, dc.want)
			got := AppendVarSint(nil, c.v, dc.d)
			if !bytes.Equal(got, want) {
				t.Errorf("%v: AppendVarSint(%d) = % X, want % X", dc.d, c.v, got, want)
			}
			v, n, err := ParseVarSint(want, dc.d)
			if err != nil || v != c.v || n != len(want) {
				t.Errorf("%v: ParseVarSint(% X) = %d, %d, %v", dc.d, want, v, n, err)
			}
			for i := range want {
				if _, _, err := ParseVarSint(want[:i], dc.d); !errors.Is(err, ErrTruncated) {
					t.Errorf("%v: ParseVarSint(% X) err = %v", dc.d, want[:i], err)
				}
			}
		}
	}
}

func TestBitArray(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    uint64
		wire string
	}{
		{0, "00"}, {1, "01"}, {0x7F, "7F"}, {0x80, "80 01"},
		{uint64(InfoAll), "8F 9F 0F"},
		{uint64(PlayerName | PlayerScore | PlayerPing | PlayerTime), "84 81 24"},
		{1 << 62, "80 80 80 80 80 80 80 80 40"},
	} {
		want := testutil.Unhex(t, c.wire)
		if got := AppendBitArray(nil, c.v); !bytes.Equal(got, want) {
			t.Errorf("AppendBitArray(%#x) = % X, want % X", c.v, got, want)
		}
		if n := bitArrayLen(c.v); n != len(want) {
			t.Errorf("bitArrayLen(%#x) = %d, want %d", c.v, n, len(want))
		}
		v, n, err := ParseBitArray(want)
		if err != nil || v != c.v || n != len(want) {
			t.Errorf("ParseBitArray(% X) = %#x, %d, %v", want, v, n, err)
		}
		for i := range want {
			if _, _, err := ParseBitArray(want[:i]); !errors.Is(err, ErrTruncated) {
				t.Errorf("ParseBitArray(% X) err = %v", want[:i], err)
			}
		}
	}
	// Non-minimal: trailing zero bytes are accepted.
	if v, n, err := ParseBitArray(testutil.Unhex(t, "81 80 00")); err != nil || v != 1 || n != 3 {
		t.Errorf("non-minimal = %#x, %d, %v", v, n, err)
	}
	// Longer than 16 bytes, or a data bit beyond bit 62: rejected.
	long := append(bytes.Repeat([]byte{0x80}, 16), 0)
	if _, _, err := ParseBitArray(long); !errors.Is(err, ErrBitArrayTooLong) {
		t.Errorf("17 bytes: err = %v", err)
	}
	if _, _, err := ParseBitArray(testutil.Unhex(t, "80 80 80 80 80 80 80 80 80 01")); !errors.Is(err, ErrBitArrayTooLong) {
		t.Errorf("bit 63: err = %v", err)
	}
	// Zero padding up to 16 bytes is fine.
	pad := append(bytes.Repeat([]byte{0x80}, 15), 0)
	if v, _, err := ParseBitArray(pad); err != nil || v != 0 {
		t.Errorf("16-byte zero array = %#x, %v", v, err)
	}
}

func TestHeaderVectors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		h    Header
		wire string
	}{
		{"ping", Header{Type: TypePing}, "FF FF FF FF 4F 47 50 00 03 00 00"},
		{"ping challenge 0", Header{Type: TypePing, Flags: FlagChallenge}, "FF FF FF FF 4F 47 50 00 07 00 02 00 00 00 00"},
		{"default query", Header{Type: TypeDefault, Flags: FlagChallenge | FlagRequestID, RequestID: 0x01020304},
			"FF FF FF FF 4F 47 50 00 0B 01 06 00 00 00 00 04 03 02 01"},
		{"query split", Header{Type: TypeDefault, Flags: FlagRequestID | FlagSplit, RequestID: 7, MaxBytesPerPacket: 1400},
			"FF FF FF FF 4F 47 50 00 09 01 0C 07 00 00 00 78 05"},
		{"answer", Header{Type: TypeDefault, Flags: FlagAnswer | FlagChallenge | FlagRequestID, Challenge: 0xDEADBEEF, RequestID: 0x01020304},
			"FF FF FF FF 4F 47 50 00 0B 01 07 EF BE AD DE 04 03 02 01"},
		{"fragment 0", Header{Type: TypeDefault, Flags: FlagAnswer | FlagChallenge | FlagRequestID | FlagSplit, Challenge: 0xDEADBEEF, RequestID: 0x01020304, SplitCount: 2},
			"FF FF FF FF 4F 47 50 00 0D 01 0F EF BE AD DE 04 03 02 01 02 00"},
		{"fragment 1", Header{Type: TypeDefault, Flags: FlagAnswer | FlagRequestID | FlagSplit, RequestID: 0x01020304, SplitCount: 2, SplitNo: 1},
			"FF FF FF FF 4F 47 50 00 09 01 0D 04 03 02 01 02 01"},
		{"error", Header{Type: TypeError, Flags: FlagAnswer | FlagChallenge | FlagRequestID, Challenge: 0xDEADBEEF, RequestID: 0x01020304},
			"FF FF FF FF 4F 47 50 00 0B FF 07 EF BE AD DE 04 03 02 01"},
		{"v1 utf8", Header{Type: TypeDefault, Flags: FlagUTF8 | FlagChallenge, Challenge: 1},
			"FF FF FF FF 4F 47 50 00 07 01 12 01 00 00 00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := testutil.Unhex(t, c.wire)
			got, err := c.h.AppendBinary(nil)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("AppendBinary = % X, %v\nwant          % X", got, err, want)
			}
			if c.h.Len() != len(want) {
				t.Errorf("Len = %d, want %d", c.h.Len(), len(want))
			}
			h, body, err := ParseHeader(append(want, 0xAB))
			if err != nil || h != c.h || !bytes.Equal(body, []byte{0xAB}) {
				t.Fatalf("ParseHeader = %+v, % X, %v", h, body, err)
			}
			for i := range want {
				if _, _, err := ParseHeader(want[:i]); err == nil {
					t.Errorf("ParseHeader(prefix %d) succeeded", i)
				}
			}
		})
	}
}

func TestHeaderSkipsExtraBytes(t *testing.T) {
	t.Parallel()
	// HeadSize 5 for a ping header of 3 bytes: two unknown bytes follow.
	b := testutil.Unhex(t, "FF FF FF FF 4F 47 50 00 05 00 00 EE EE 01")
	h, body, err := ParseHeader(b)
	if err != nil || h.Type != TypePing || !bytes.Equal(body, []byte{1}) {
		t.Fatalf("ParseHeader = %+v, % X, %v", h, body, err)
	}
	for _, bad := range []string{
		"FF FF FF FF 4F 47 50 00 02 00 00",             // HeadSize < 3
		"FF FF FF FF 4F 47 50 00 04 00 00",             // past the end
		"FF FF FF FF 4F 47 50 00 03 00 02 00 00 00 00", // flags announce a challenge HeadSize does not cover
		"FF FF FF FF 4F 47 51 00 03 00 00",             // not OGP
		"FE FF FF FF 4F 47 50 00 03 00 00",             // A2S split prefix
	} {
		if _, _, err := ParseHeader(testutil.Unhex(t, bad)); err == nil {
			t.Errorf("ParseHeader(%s) succeeded", bad)
		}
	}
	if !Is(b) || Is(b[:7]) || Is(testutil.Unhex(t, "FF FF FF FF 54 53 6F 75")) {
		t.Error("Is misclassifies")
	}
}

func TestQueryVector(t *testing.T) {
	t.Parallel()
	// RequestFlags 0D; ServerInfoFields 8F 9F 0F; PlayerFields 84 81 24.
	q := Query{
		Request: RequestServerInfo | RequestPlayers | RequestRules,
		Info:    InfoAll,
		Player:  PlayerName | PlayerScore | PlayerPing | PlayerTime,
	}
	h := Header{Type: TypeDefault, Flags: FlagChallenge | FlagRequestID, RequestID: 0x01020304}
	b, _ := h.AppendBinary(nil)
	b, err := q.Append(b, V091)
	want := testutil.Unhex(t, `FF FF FF FF 4F 47 50 00 | 0B | 01 | 06 | 00 00 00 00 | 04 03 02 01 |
		0D | 8F 9F 0F | 84 81 24`)
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("query = % X, %v\nwant    % X", b, err, want)
	}
	_, body, _ := ParseHeader(b)
	got, err := ParseQuery(body, V091)
	if err != nil || got != q {
		t.Fatalf("ParseQuery = %+v, %v", got, err)
	}
	for i := range body {
		if _, err := ParseQuery(body[:i], V091); !errors.Is(err, ErrTruncated) {
			t.Errorf("ParseQuery(prefix %d) err = %v", i, err)
		}
	}
}

func TestQueryV1Layout(t *testing.T) {
	t.Parallel()
	q := Query{
		Request: RequestServerInfo | RequestTeams | RequestAddOns,
		Info:    InfoHostName | InfoMod | InfoMap | InfoPlayerCount,
		Mod:     ModVersion,
		Map:     MapFileName | MapFileMD5,
		Team:    TeamName,
		AddOn:   AddOnShortName,
	}
	b, err := q.Append(nil, V1)
	// RequestFlags 13; info V1 bits 0.2 (HostName), 1.0 (Mod), 1.3 (Map),
	// 2.0 (PlayerCount) = 84 89 01; ModFields 04; MapFields 05; TeamFields 01; AddOnFields 02.
	want := testutil.Unhex(t, "13 84 89 01 04 05 01 02")
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("V1 query = % X, %v; want % X", b, err, want)
	}
	got, err := ParseQuery(b, V1)
	if err != nil || got != q {
		t.Fatalf("ParseQuery = %+v, %v", got, err)
	}
	// The same request in V091 has no Mod/Map masks and other bits.
	b, _ = q.Append(nil, V091)
	if want := testutil.Unhex(t, "13 84 83 01 01 02"); !bytes.Equal(b, want) {
		t.Fatalf("V091 query = % X, want % X", b, want)
	}
}

// answerVector is a v0.91 default answer built by hand from spec 3.4.
const answerVector = `FF FF FF FF 4F 47 50 00 0B 01 07 EF BE AD DE 04 03 02 01
00 00 0D 83 83 03 54 65 73 74 00 09 53 72 76 00 64 6D 31 00 00 02 10
02 84 81 24 41 00 05 32 00 78 00 42 00 FD 2C 01 10 0E
01 73 76 5F 78 00 31 00`

func answerVectorWant() *Answer {
	return &Answer{
		Request: RequestServerInfo | RequestPlayers | RequestRules,
		Info: ServerInfo{
			Fields:      InfoGameName | InfoServerFlags | InfoHostName | InfoMap | InfoPlayerCount | InfoSlotMax,
			GameName:    Text("Test"),
			Flags:       ServerFlags{Dedicated: true, OS: OSLinux},
			HostName:    Text("Srv"),
			Map:         MapInfo{Name: Text("dm1"), File: Text("")},
			PlayerCount: 2,
			SlotMax:     16,
		},
		Players: PlayerList{Count: 2, Fields: PlayerName | PlayerScore | PlayerPing | PlayerTime, Players: []Player{
			{Name: Text("A"), Score: 5, Ping: 50, Time: 120},
			{Name: Text("B"), Score: -3, Ping: 300, Time: 3600},
		}},
		Rules: []Rule{{Key: Text("sv_x"), Value: Text("1")}},
	}
}

func TestAnswerVector(t *testing.T) {
	t.Parallel()
	b := testutil.Unhex(t, answerVector)
	h, body, err := ParseHeader(b)
	if err != nil || h.Challenge != 0xDEADBEEF || h.RequestID != 0x01020304 || h.Flags != FlagAnswer|FlagChallenge|FlagRequestID {
		t.Fatalf("header = %+v, %v", h, err)
	}
	a, err := ParseAnswer(body, V091)
	if err != nil {
		t.Fatal(err)
	}
	want := answerVectorWant()
	if !reflect.DeepEqual(a, want) {
		t.Fatalf("ParseAnswer =\n%+v\nwant\n%+v", a, want)
	}
	enc, err := want.Append(nil, V091)
	if err != nil || !bytes.Equal(enc, body) {
		t.Fatalf("Append = % X, %v\nwant     % X", enc, err, body)
	}
	for i := range body {
		if _, err := ParseAnswer(body[:i], V091); !errors.Is(err, ErrTruncated) {
			t.Errorf("ParseAnswer(prefix %d) err = %v, want ErrTruncated", i, err)
		}
	}
}

func TestError3Vector(t *testing.T) {
	t.Parallel()
	b := testutil.Unhex(t, `FF FF FF FF 4F 47 50 00 0B FF 07 EF BE AD DE 04 03 02 01 | 03 |
FF FF FF FF 4F 47 50 00 0B 01 06 EF BE AD DE 04 03 02 01 0D 8F 9F 0F 84 81 24`)
	h, body, err := ParseHeader(b)
	if err != nil || h.Type != TypeError || h.Challenge != 0xDEADBEEF {
		t.Fatalf("header = %+v, %v", h, err)
	}
	e, err := ParseErrorAnswer(body)
	if err != nil || e.Code != ErrorInvalidChallenge {
		t.Fatalf("ParseErrorAnswer = %+v, %v", e, err)
	}
	if c, ok := e.Challenge(); !ok || c != 0xDEADBEEF {
		t.Fatalf("Challenge = %#x, %v", c, ok)
	}
	ch, qbody, err := ParseHeader(e.Request)
	if err != nil || ch.Flags&FlagAnswer != 0 || ch.RequestID != 0x01020304 {
		t.Fatalf("copy header = %+v, %v", ch, err)
	}
	if q, err := ParseQuery(qbody, V091); err != nil || q.Info != InfoAll {
		t.Fatalf("copy query = %+v, %v", q, err)
	}
	enc, _ := e.AppendBinary(nil)
	if !bytes.Equal(enc, body) {
		t.Fatalf("AppendBinary = % X", enc)
	}
	if _, err := ParseErrorAnswer(nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("empty error body: %v", err)
	}
	for code := ErrorBanned; code <= ErrorInvalidQuery; code++ {
		e := ErrorAnswer{Code: code}
		b, _ := e.AppendBinary(nil)
		got, err := ParseErrorAnswer(b)
		if err != nil || got.Code != code || len(b) != 1 {
			t.Errorf("code %d: % X -> %+v, %v", code, b, got, err)
		}
		if _, ok := got.Challenge(); ok {
			t.Errorf("code %d: Challenge ok without a copy", code)
		}
	}
}

func TestMasterUplink(t *testing.T) {
	t.Parallel()
	m := MasterUplink{GameID: 0x1234}
	b, _ := m.AppendBinary(nil)
	if !bytes.Equal(b, []byte{0x34, 0x12}) {
		t.Fatalf("% X", b)
	}
	got, err := ParseMasterUplink(b)
	if err != nil || got != m {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ParseMasterUplink(b[:1]); !errors.Is(err, ErrTruncated) {
		t.Fatalf("short: %v", err)
	}
}
