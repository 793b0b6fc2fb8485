package ogp

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// v1InfoVector is a V1 (SDK layout) answer built by hand: SERVERINFO with
// GameName, HostName, Mod (with ModFields = version), Map (MapFields =
// file name and size) and PlayerCount 254, which is a literal in v0.91 but
// an escape in V1.
const v1InfoVector = `00 00 01 | 85 89 01 | 4D 42 00 | 53 72 76 00 |
4E 61 74 69 76 65 00 | 04 | 31 2E 31 00 |
03 | 50 6C 61 69 6E 73 00 | 70 6C 61 69 6E 73 00 | 00 10 00 00 |
FE FE 00`

// v1PlayerVector: one player with Name, Score -127 (V1: 80 81 FF) and a
// 4-byte PlayerAddress.
const v1PlayerVector = `00 00 04 | 01 | 84 81 80 01 | 41 00 | 80 81 FF | 04 7F 00 00 01`

func TestV1Vectors(t *testing.T) {
	t.Parallel()
	a, err := ParseAnswer(testutil.Unhex(t, v1InfoVector), V1)
	if err != nil {
		t.Fatal(err)
	}
	want := ServerInfo{
		Fields:      InfoGameName | InfoHostName | InfoMod | InfoMap | InfoPlayerCount,
		ModFields:   ModVersion,
		MapFields:   MapFileName | MapFileSize,
		GameName:    Text("MB"),
		HostName:    Text("Srv"),
		Mod:         ModInfo{Name: Text("Native"), Version: Text("1.1")},
		Map:         MapInfo{Name: Text("Plains"), File: Text("plains"), FileSize: 4096},
		PlayerCount: 254,
	}
	if a.Request != RequestServerInfo || !reflect.DeepEqual(a.Info, want) {
		t.Fatalf("V1 info =\n%+v\nwant\n%+v", a.Info, want)
	}
	enc, _ := a.Append(nil, V1)
	if !bytes.Equal(enc, testutil.Unhex(t, v1InfoVector)) {
		t.Fatalf("re-encoded % X", enc)
	}
	// The same bytes are not a valid v0.91 answer of the same meaning.
	if b, err := ParseAnswer(testutil.Unhex(t, v1InfoVector), V091); err == nil && reflect.DeepEqual(b.Info, want) {
		t.Fatal("v0.91 parse of a V1 answer matched")
	}

	a, err = ParseAnswer(testutil.Unhex(t, v1PlayerVector), V1)
	if err != nil {
		t.Fatal(err)
	}
	p := a.Players.Players[0]
	if a.Players.Count != 1 || string(p.Name) != "A" || p.Score != -127 || !bytes.Equal(p.Address, []byte{127, 0, 0, 1}) {
		t.Fatalf("V1 player = %+v", a.Players)
	}
	if addr, ok := p.Addr(); !ok || addr.String() != "127.0.0.1" {
		t.Fatalf("Addr = %v %v", addr, ok)
	}
	for _, vec := range []string{v1InfoVector, v1PlayerVector} {
		b := testutil.Unhex(t, vec)
		for i := range b {
			if _, err := ParseAnswer(b[:i], V1); err == nil {
				t.Errorf("ParseAnswer(V1 prefix %d of %d) succeeded", i, len(b))
			}
		}
	}
}

func TestServerFlagsDialects(t *testing.T) {
	t.Parallel()
	f := ServerFlags{Dedicated: true, Proxy: true, Password: true, OS: OSMac}
	if got := f.bits(V091); got != 0x01|0x02|3<<2 {
		t.Errorf("v0.91 bits %#x", got)
	}
	if got := f.bits(V1); got != 2|4|8|3<<4 {
		t.Errorf("v1 bits %#x", got)
	}
	if g := serverFlagsFromBits(0x01|0x02|3<<2, V091); g != (ServerFlags{Dedicated: true, Proxy: true, OS: OSMac}) {
		t.Errorf("v0.91 decode %+v", g)
	}
	if g := serverFlagsFromBits(2|4|8|3<<4, V1); g != f {
		t.Errorf("v1 decode %+v", g)
	}
	if OS(9).String() != "unknown(9)" || LimitType(7).String() != "unknown(7)" {
		t.Error("unknown enum names")
	}
}

func TestPlayerIPv4(t *testing.T) {
	t.Parallel()
	// 192.168.1.2 as a little-endian UINT32 is 02 01 A8 C0 on the wire.
	b := testutil.Unhex(t, "00 00 04 01 80 80 80 01 02 01 A8 C0")
	a, err := ParseAnswer(b, V091)
	if err != nil {
		t.Fatal(err)
	}
	p := a.Players.Players[0]
	if addr, ok := p.Addr(); !ok || addr.String() != "192.168.1.2" || p.IPv4 != 0xC0A80102 {
		t.Fatalf("Addr = %v %v (%#x)", addr, ok, p.IPv4)
	}
}

// coloredAnswer is a v0.91 answer with coloured host, team and player
// names.
func coloredAnswer(t testing.TB) []byte {
	a := &Answer{
		Request: RequestServerInfo | RequestTeams | RequestPlayers | RequestColoredNames,
		Info: ServerInfo{Fields: InfoHostName, HostName: Text("Red Srv"),
			HostNameColor: ColorInfo{{Value: 0x04}, {Delta: 3, Value: ColorResetText}, {Delta: 1, Value: ColorText16, RGB565: 0x07E0}, {Delta: 200, Value: 0x9F, RGB565: 1}}},
		Teams:   TeamList{Count: 1, Fields: TeamName, Teams: []Team{{Name: Text("T"), NameColor: ColorInfo{{Value: 0x2C}}}}},
		Players: PlayerList{Count: 1, Fields: PlayerName, Players: []Player{{Name: Text("P"), NameColor: ColorInfo{}}}},
	}
	b, err := a.Append(nil, V091)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestColorInfo(t *testing.T) {
	t.Parallel()
	b := coloredAnswer(t)
	// host name color: ColorSize 0C (12 bytes): 00 04 | 03 10 | 01 90 E0 07 | C8 9F 01 00
	if !bytes.Contains(b, testutil.Unhex(t, "52 65 64 20 53 72 76 00 0C 00 04 03 10 01 90 E0 07 C8 9F 01 00")) {
		t.Fatalf("host name colour encoding: % X", b)
	}
	a, err := ParseAnswer(b, V091)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Info.HostNameColor) != 4 || a.Info.HostNameColor[2].RGB565 != 0x07E0 || a.Teams.Teams[0].NameColor[0].Value != 0x2C {
		t.Fatalf("colours %+v %+v", a.Info.HostNameColor, a.Teams.Teams)
	}
	for i := range b {
		if _, err := ParseAnswer(b[:i], V091); err == nil {
			t.Errorf("prefix %d parsed", i)
		}
	}
	// An unknown colour code drops that string's colours only.
	bad := testutil.Unhex(t, "00 00 81 01 | 80 81 01 | 41 00 | 04 00 04 01 55 | 02")
	a, err = ParseAnswer(bad, V091)
	if err != nil || a.Info.HostName.String() != "A" || a.Info.HostNameColor != nil || a.Info.Fields != InfoHostName|InfoPlayerCount || a.Info.PlayerCount != 2 {
		t.Fatalf("bad colour: %+v, %v", a, err)
	}
	// A ColorSize past the end is truncation.
	if _, err := ParseAnswer(testutil.Unhex(t, "00 00 81 01 80 01 41 00 09 00 04"), V091); !errors.Is(err, ErrTruncated) {
		t.Fatalf("long ColorSize: %v", err)
	}
	if r, g, bb := RGB565(0xF800); r != 255 || g != 0 || bb != 0 {
		t.Errorf("RGB565 red = %d %d %d", r, g, bb)
	}
	if r, g, bb := RGB565(0x07E0); r != 0 || g != 255 || bb != 0 {
		t.Errorf("RGB565 green = %d %d %d", r, g, bb)
	}
}

func TestUnknownFieldKeepsEarlierSections(t *testing.T) {
	t.Parallel()
	// RULELIST is fine, then RequestFlags bit 0.6 (unknown) is set.
	b := testutil.Unhex(t, "00 00 48 | 01 6B 00 76 00 | 99")
	a, err := ParseAnswer(b, V091)
	if !errors.Is(err, ErrUnknownField) || a == nil || len(a.Rules) != 1 || a.Request != RequestRules {
		t.Fatalf("a=%+v err=%v", a, err)
	}
	// An unknown PlayerFields bit (3.1) after good server info.
	b = testutil.Unhex(t, "00 00 05 | 01 41 00 | 01 80 80 80 02")
	a, err = ParseAnswer(b, V091)
	if !errors.Is(err, ErrUnknownField) || a == nil || a.Request != RequestServerInfo || a.Info.GameName.String() != "A" {
		t.Fatalf("a=%+v err=%v", a, err)
	}
}

func TestListLimits(t *testing.T) {
	t.Parallel()
	// A player list with an empty mask keeps the count and builds nothing.
	a, err := ParseAnswer(testutil.Unhex(t, "00 00 04 FF E8 03 00"), V091)
	if err != nil || a.Players.Count != 1000 || a.Players.Players != nil {
		t.Fatalf("empty-mask list: %+v %v", a.Players, err)
	}
	// More than 65535 empty entries: too large.
	if _, err := ParseAnswer(testutil.Unhex(t, "00 00 04 FF FF FF 00 00 01 00 00"), V091); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("huge empty list: %v", err)
	}
	// A count larger than the bytes left: rejected before allocating.
	if _, err := ParseAnswer(testutil.Unhex(t, "00 00 04 FF FF FF FF FF FF 7F 04 41 00"), V091); !errors.Is(err, ErrTruncated) {
		t.Fatalf("lying count: %v", err)
	}
	if _, err := ParseAnswer(testutil.Unhex(t, "00 00 08 FF FF FF FF FF FF 7F"), V091); !errors.Is(err, ErrTruncated) {
		t.Fatalf("lying rule count: %v", err)
	}
	// Encoders refuse NUL in text and counts without entries.
	bad := Answer{Request: RequestRules, Rules: []Rule{{Key: Text("a\x00b")}}}
	if _, err := bad.Append(nil, V091); !errors.Is(err, ErrNULInText) {
		t.Fatalf("NUL: %v", err)
	}
	missing := Answer{Request: RequestPlayers, Players: PlayerList{Count: 3, Fields: PlayerName}}
	if _, err := missing.Append(nil, V091); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("count without entries: %v", err)
	}
}

func TestSplitAndReassemble(t *testing.T) {
	t.Parallel()
	body := bytes.Repeat([]byte("0123456789"), 300)
	h := Header{Type: TypeDefault, Flags: FlagAnswer | FlagChallenge | FlagRequestID, Challenge: 1, RequestID: 2}
	var frags [][]byte
	if _, err := appendFragments(nil, h, body, 500, func(p []byte) { frags = append(frags, append([]byte(nil), p...)) }); err != nil {
		t.Fatal(err)
	}
	if len(frags) != 7 {
		t.Fatalf("%d fragments", len(frags))
	}
	for i, f := range frags {
		fh, _, err := ParseHeader(f)
		if err != nil || len(f) > 500 || int(fh.SplitNo) != i || fh.SplitCount != 7 || (fh.Flags&FlagChallenge != 0) != (i == 0) {
			t.Fatalf("fragment %d: %+v len %d %v", i, fh, len(f), err)
		}
	}
	// Reverse order with duplicates reassembles; the header is fragment 0's.
	var r reassembly
	var whole []byte
	var first Header
	for _, i := range []int{6, 6, 5, 4, 3, 2, 1, 1, 0} {
		fh, fb, _ := ParseHeader(frags[i])
		var err error
		first, whole, err = r.add(fh, fb, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if whole != nil && i != 0 {
			t.Fatal("complete early")
		}
	}
	if !bytes.Equal(whole, body) || first.Challenge != 1 {
		t.Fatalf("reassembled %d bytes, header %+v", len(whole), first)
	}
	// Disagreeing counts, a number past the count, and the size cap.
	var r2 reassembly
	h0, b0, _ := ParseHeader(frags[0])
	r2.add(h0, b0, 1<<20)
	h0.SplitCount = 8
	if _, _, err := r2.add(h0, b0, 1<<20); !errors.Is(err, ErrBadFragment) {
		t.Errorf("count change: %v", err)
	}
	h0.SplitCount, h0.SplitNo = 2, 2
	if _, _, err := new(reassembly).add(h0, b0, 1<<20); !errors.Is(err, ErrBadFragment) {
		t.Errorf("no past count: %v", err)
	}
	h0.SplitCount, h0.SplitNo = 0, 0
	if _, _, err := new(reassembly).add(h0, b0, 1<<20); !errors.Is(err, ErrBadFragment) {
		t.Errorf("count 0: %v", err)
	}
	h0.SplitCount = 7
	if _, _, err := new(reassembly).add(h0, b0, 10); !errors.Is(err, ErrTooLarge) {
		t.Errorf("cap: %v", err)
	}
	// More than 255 fragments cannot be numbered.
	if _, err := appendFragments(nil, h, make([]byte, 300*500), 500, func([]byte) {}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too many fragments: %v", err)
	}
}

func TestMaskStrings(t *testing.T) {
	t.Parallel()
	for got, want := range map[string]string{
		(RequestServerInfo | RequestColoredNames).String(): "info|colors",
		(FlagAnswer | FlagSplit).String():                  "answer|split",
		InfoFields(0).String():                             "0",
		(PlayerName | 1<<40).String():                      "name|0x10000000000",
		TypeDefault.String():                               "default query",
		Type(0x42).String():                                "Type(0x42)",
		ErrorInvalidChallenge.String():                     "invalid challenge",
		V1.String():                                        "v1",
	} {
		if got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
	for _, s := range []string{"v0.91", "v1", "sdk"} {
		if _, err := ParseDialect(s); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseDialect("v2"); err == nil {
		t.Error("ParseDialect(v2) succeeded")
	}
}
