package a2s

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

// dayz is a modern Source-format reply: AppID field 0, real AppID in the
// GameID, every EDF field set.
func dayz() *Info {
	return &Info{
		Format: 'I', Protocol: 17, Name: Text("DayZ server"), Map: Text("chernarusplus"), Folder: Text("dayz"),
		Game: Text("DayZ"), Players: 40, MaxPlayers: 60, ServerType: 'd', Environment: 'w', VAC: 1,
		Version: Text("1.28.161464"), EDF: EDFPort | EDFSteamID | EDFSpectator | EDFKeywords | EDFGameID,
		Port: 2302, SteamID: 90212345678901234, SpectatorPort: 27020, SpectatorName: Text("STV"),
		Keywords: Text("battleye,no3rd,external,lqs0,etm4.000000,entm6.000000,mod,12:34"), GameID: 221100,
	}
}

func TestInfoAppIDFromGameID(t *testing.T) {
	got, err := ParseInfo(mustAppend(t, dayz()))
	if err != nil {
		t.Fatal(err)
	}
	if !infoEqual(got, dayz()) {
		t.Errorf("round trip =\n%+v\nwant\n%+v", *got, *dayz())
	}
	if got.ShortAppID != 0 || got.AppID() != 221100 {
		t.Errorf("ShortAppID %d AppID %d, want 0 and 221100", got.ShortAppID, got.AppID())
	}
	// A mod's GameID has type and mod bits above the AppID.
	in := dayz()
	in.GameID = 0xD5A2B40100000000 | 215
	in.ShortAppID = 215
	if got := in.AppID(); got != 215 {
		t.Errorf("mod AppID = %d, want 215", got)
	}
	// No GameID: the 16-bit field.
	in.EDF &^= EDFGameID
	in.ShortAppID = 440
	if got := in.AppID(); got != 440 {
		t.Errorf("AppID without GameID = %d, want 440", got)
	}
}

func TestInfoShipByGameID(t *testing.T) {
	in := &Info{Format: 'I', Name: Text("ship"), Ship: &ShipInfo{Mode: 3, Witnesses: 2, Duration: 5},
		Version: Text("1.0.0.4"), EDF: EDFGameID, GameID: AppIDTheShip}
	got, err := ParseInfo(mustAppend(t, in))
	if err != nil {
		t.Fatal(err)
	}
	if got.Ship == nil || *got.Ship != *in.Ship || got.Version.String() != "1.0.0.4" {
		t.Errorf("Ship = %+v, version %q; want %+v, 1.0.0.4", got.Ship, got.Version, in.Ship)
	}
	// Mode 0 makes the version look empty without the Ship fields: the
	// GameID still tells.
	in.Ship.Mode = 0
	got, err = ParseInfo(mustAppend(t, in))
	if err != nil || got.Ship == nil || *got.Ship != *in.Ship {
		t.Errorf("Ship mode 0: %+v, %v", got, err)
	}
	// Same bytes with another AppID: no Ship fields.
	other := *dayz()
	got, _ = ParseInfo(mustAppend(t, &other))
	if got.Ship != nil {
		t.Errorf("Ship = %+v for AppID %d", got.Ship, got.AppID())
	}
}

func TestInfoPlayerCountsRust(t *testing.T) {
	in := &Info{Players: 293 & 0xFF, MaxPlayers: 300 & 0xFF, EDF: EDFKeywords,
		Keywords: Text("oxide,modded,mp300,cp293,v1344,born1700000000")}
	if p, m := in.PlayerCounts(); p != 293 || m != 300 {
		t.Errorf("PlayerCounts = %d, %d; want 293, 300", p, m)
	}
	for _, kw := range []string{"", "mp,cp", "mpx12,cp-3", "cp99999999999999", "vcp12", "cp+5,mp 9", "Cp12,MP12", "cp1_0"} {
		in.Keywords = Text(kw)
		if p, m := in.PlayerCounts(); p != 293&0xFF || m != 300&0xFF {
			t.Errorf("keywords %q: PlayerCounts = %d, %d; want the bytes", kw, p, m)
		}
	}
	in.Keywords = Text("cp999999999,mp0")
	if p, m := in.PlayerCounts(); p != 999999999 || m != 0 {
		t.Errorf("nine digits: PlayerCounts = %d, %d", p, m)
	}
	if n := testing.AllocsPerRun(10, func() { in.PlayerCounts() }); n != 0 {
		t.Errorf("PlayerCounts allocates %v times", n)
	}
	// Without the keywords bit the keywords are ignored.
	in.Keywords, in.EDF = Text("cp1,mp2"), 0
	if p, m := in.PlayerCounts(); p != 293&0xFF || m != 300&0xFF {
		t.Errorf("no EDF: PlayerCounts = %d, %d", p, m)
	}
}

func TestInfoMissingVAC(t *testing.T) {
	// A DayZ server seen leaving the VAC byte out: it is missing, so the
	// version's first digit lands in it.
	in := dayz()
	in.EDF, in.VAC = 0, 0
	b := mustAppend(t, in)
	vacOff := bytes.Index(b, []byte("1.28.")) - 1
	b = append(b[:vacOff:vacOff], b[vacOff+1:]...)
	_, err := ParseInfo(b)
	var pe *ParseError
	if !errors.Is(err, ErrMalformed) || !errors.As(err, &pe) || pe.Offset != vacOff {
		t.Fatalf("ParseInfo(missing VAC) err = %v, want ErrMalformed at %d", err, vacOff)
	}
}

func TestInfoTruncatedEDF(t *testing.T) {
	b := mustAppend(t, dayz())
	// Cut inside the GameID: the EDF promised it.
	_, err := ParseInfo(b[:len(b)-3])
	var pe *ParseError
	if !errors.Is(err, ErrTruncated) || !errors.As(err, &pe) || pe.Offset != len(b)-8 || pe.Packet != "info" {
		t.Fatalf("err = %v, want ErrTruncated at offset %d", err, len(b)-8)
	}
	want := fmt.Sprintf("a2s: parse info at offset %d: truncated packet", len(b)-8)
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
}

func TestInfoGoldSourceModSectionMissing(t *testing.T) {
	// Sven Co-op style: Mod byte 1, no mod section, then VAC and bots.
	in := &Info{Format: 'm', Address: Text("1.2.3.4:27015"), Name: Text("sven"), Map: Text("svencoop1"),
		Folder: Text("svencoop"), Game: Text("Sven Co-op"), Players: 3, MaxPlayers: 12, Protocol: 48,
		ServerType: 'd', Environment: 'w', IsMod: true, VAC: 0, Bots: 2}
	b := mustAppend(t, in)
	if b[len(b)-3] != 1 {
		t.Fatalf("mod byte not where expected: % X", b)
	}
	got, err := ParseInfo(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.IsMod || got.Mod != nil || got.Bots != 2 || got.VAC != 0 {
		t.Errorf("got IsMod %v Mod %+v Bots %d VAC %d", got.IsMod, got.Mod, got.Bots, got.VAC)
	}
	if enc := mustAppend(t, got); !bytes.Equal(enc, b) {
		t.Errorf("re-encoded % X, want % X", enc, b)
	}
	// Upper-case letters, as the spec's table lists them, are normalised.
	b[len(b)-6], b[len(b)-5] = 'D', 'W'
	if got, err := ParseInfo(b); err != nil || got.ServerType != ServerDedicated || got.Environment != EnvironmentWindows {
		t.Errorf("upper case: %v %v, %v", got.ServerType, got.Environment, err)
	}
}

func TestTextQuirks(t *testing.T) {
	// libssq's TF2 capture: 24 0x01 bytes then UTF-8.
	skial := Text(strings.Repeat("\x01", 24) + "█ Skial")
	in := dayz()
	in.Name = skial
	got, err := ParseInfo(mustAppend(t, in))
	if err != nil || !bytes.Equal(got.Name, skial) || !got.Name.IsUTF8() || got.Name.UTF8() != string(skial) {
		t.Errorf("0x01-prefixed name = %q, %v", got.Name, err)
	}

	bad := Text("\x99ab\xff\xfec")
	p := &Players{List: []Player{{Name: bad, Score: -3, Duration: -1}}}
	gp, err := ParsePlayers(mustAppend(t, p))
	if err != nil {
		t.Fatal(err)
	}
	n := gp.List[0].Name
	// Bytes outside UTF-8 read as Latin-1, as ogp and rcon read them.
	if n.IsUTF8() || n.String() != string(bad) || n.UTF8() != "\u0099abÿþc" {
		t.Errorf("invalid UTF-8 name: IsUTF8 %v String %q UTF8 %q", n.IsUTF8(), n.String(), n.UTF8())
	}
	if gp.List[0].Score != -3 || gp.List[0].Duration != -1 {
		t.Errorf("score/duration = %d, %v; want -3, -1", gp.List[0].Score, gp.List[0].Duration)
	}
}

func TestPlayersCountNotTrusted(t *testing.T) {
	list := make([]Player, 300)
	for i := range list {
		list[i] = Player{Name: Text(fmt.Sprintf("p%d", i)), Score: int32(i)}
	}
	for _, count := range []uint8{0, 1, 44, 255} {
		b := mustAppend(t, &Players{Count: count, List: list})
		if count == 0 {
			b[5] = 0 // AppendBinary writes len(List) for 0; send a real 0
		}
		got, err := ParsePlayers(b)
		if err != nil {
			t.Fatal(err)
		}
		if got.Count != count || len(got.List) != 300 || got.List[299].Name.String() != "p299" || got.Ship {
			t.Errorf("count %d: got Count %d, %d entries, Ship %v", count, got.Count, len(got.List), got.Ship)
		}
	}
	// Count 3, one entry: the entry, no error.
	b := mustAppend(t, &Players{Count: 3, List: list[:1]})
	if got, err := ParsePlayers(b); err != nil || len(got.List) != 1 {
		t.Errorf("count 3 one entry: %+v, %v", got, err)
	}
	// An empty reply.
	if got, err := ParsePlayers([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'D', 0}); err != nil || len(got.List) != 0 || got.Ship {
		t.Errorf("empty: %+v, %v", got, err)
	}
}

func TestPlayersShipBlock(t *testing.T) {
	p := &Players{Count: 2, Ship: true, List: []Player{
		{Index: 0, Name: Text("a"), Score: 1, Duration: 2, Deaths: 3, Money: -4},
		{Index: 1, Name: Text("bb"), Score: 5, Duration: 6, Deaths: 7, Money: 8},
	}}
	b := mustAppend(t, p)
	got, err := ParsePlayers(b)
	if err != nil || !got.Ship || got.List[0].Money != -4 || got.List[1].Deaths != 7 {
		t.Fatalf("ParsePlayers = %+v, %v", got, err)
	}
	// A trailing block of the wrong length is a truncated entry, not Ship.
	if _, err := ParsePlayers(b[:len(b)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("short ship block: err = %v, want ErrTruncated", err)
	}
}

func TestRulesBinaryAndDuplicates(t *testing.T) {
	// Arma 3 style: 2-byte binary names, escaped binary values, and a
	// duplicate name.
	rs := &Rules{List: []Rule{
		{Name: Text("\x01\x02"), Value: Text("\x01\x01\x03\xFF\x80\x7F")},
		{Name: Text("\x02\x02"), Value: Text("\xC3\x28")},
		{Name: Text("sv_cheats"), Value: Text("0")},
		{Name: Text("sv_cheats"), Value: Text("1")},
		{Name: Text(""), Value: Text("")},
	}}
	b := mustAppend(t, rs)
	got, err := ParseRules(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Count != 5 || len(got.List) != 5 {
		t.Fatalf("Count %d, %d entries; want 5, 5", got.Count, len(got.List))
	}
	for i, r := range rs.List {
		if !bytes.Equal(got.List[i].Name, r.Name) || !bytes.Equal(got.List[i].Value, r.Value) {
			t.Errorf("rule %d = %q=%q, want %q=%q", i, got.List[i].Name, got.List[i].Value, r.Name, r.Value)
		}
	}
	if v, ok := got.Get("sv_cheats"); !ok || v.String() != "0" {
		t.Errorf("Get(sv_cheats) = %q, %v; want the first, 0", v, ok)
	}
	if _, ok := got.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}
	if !bytes.Equal(got.Raw, b[7:]) {
		t.Errorf("Raw = % X, want % X", got.Raw, b[7:])
	}
	if got.List[1].Value.IsUTF8() {
		t.Error("binary value reported as UTF-8")
	}
}

func TestRulesTruncatedPartial(t *testing.T) {
	rs := &Rules{Count: 3, List: []Rule{{Name: Text("a"), Value: Text("1")}, {Name: Text("bb"), Value: Text("22")}, {Name: Text("c"), Value: Text("3")}}}
	b := mustAppend(t, rs)
	cut := bytes.Index(b, []byte("bb")) + 4 // inside the second value
	got, err := ParseRules(b[:cut])
	var pe *ParseError
	if !errors.Is(err, ErrTruncated) || !errors.As(err, &pe) || pe.Offset != cut-1 {
		t.Fatalf("err = %v, want ErrTruncated at %d", err, cut-1)
	}
	if got == nil || len(got.List) != 1 || got.List[0].Name.String() != "a" || got.Count != 3 {
		t.Errorf("partial = %+v, want the first rule", got)
	}
	// Cut at an entry boundary: no error, fewer entries than Count.
	got, err = ParseRules(b[:bytes.Index(b, []byte("c"))])
	if err != nil || len(got.List) != 2 || got.Count != 3 {
		t.Errorf("boundary cut = %+v, %v", got, err)
	}
}

func TestLargeUnsplitDatagram(t *testing.T) {
	// DayZ-style 2500-byte rules and a Rust-style ~60 KiB player list.
	rs := &Rules{}
	for i := range 100 {
		rs.List = append(rs.List, Rule{Name: Text(fmt.Sprintf("rule%03d", i)), Value: Text(strings.Repeat("v", 16))})
	}
	b := mustAppend(t, rs)
	if len(b) < 2500 {
		t.Fatalf("only %d bytes", len(b))
	}
	if got, err := ParseRules(b); err != nil || len(got.List) != 100 {
		t.Errorf("rules: %d, %v", len(got.List), err)
	}
	p := &Players{}
	for i := range 2000 {
		p.List = append(p.List, Player{Name: Text(fmt.Sprintf("player-%05d-name", i))})
	}
	b = mustAppend(t, p)
	if len(b) < 50000 || len(b) > MaxPacketSize {
		t.Fatalf("players packet is %d bytes", len(b))
	}
	if got, err := ParsePlayers(b); err != nil || len(got.List) != 2000 {
		t.Errorf("players: %v", err)
	}
}

func TestRequestQuirks(t *testing.T) {
	// Padded to 1200 bytes after the challenge (Valve's RFC proposal).
	req := Request{Type: TypeInfoRequest, Challenge: 0x01020304, HasChallenge: true, Padding: 1200 - 29}
	b := mustAppend(t, req)
	if len(b) != 1200 {
		t.Fatalf("padded request is %d bytes", len(b))
	}
	if got, err := ParseRequest(b); err != nil || got != req {
		t.Errorf("padded: %+v, %v; want %+v", got, err, req)
	}
	// PadTo sizes every request type exactly, with or without challenge.
	for _, r := range []Request{
		{Type: TypeInfoRequest}, {Type: TypeInfoRequest, Challenge: 7, HasChallenge: true},
		{Type: TypePlayerRequest}, {Type: TypeRulesRequest, Challenge: 7, HasChallenge: true},
		{Type: TypePingRequest}, {Type: TypeChallengeRequestLegacy},
	} {
		if b := mustAppend(t, r.PadTo(PaddedInfoSize)); len(b) != PaddedInfoSize {
			t.Errorf("%c (challenge %v) padded to %d bytes, want %d", r.Type, r.HasChallenge, len(b), PaddedInfoSize)
		}
		if bare := mustAppend(t, r); len(mustAppend(t, r.PadTo(3))) != len(bare) {
			t.Errorf("%c: PadTo below the bare size changed the request", r.Type)
		}
	}
	// Padding without challenge: AskChallenge holds the challenge's
	// place, so the padding reads back as padding, not as challenge 0.
	b = mustAppend(t, Request{Type: TypeInfoRequest, Padding: 10})
	if got, err := ParseRequest(b); err != nil || got.HasChallenge || got.Padding != 10 || len(b) != 25+4+10 {
		t.Errorf("padding only: %d bytes parse as %+v, %v", len(b), got, err)
	}
	// The NUL may be missing at the very end.
	if got, err := ParseRequest([]byte("\xFF\xFF\xFF\xFFTSource Engine Query")); err != nil || got.Type != 'T' || got.HasChallenge {
		t.Errorf("no NUL: %+v, %v", got, err)
	}
	// Extra data after player/ping/legacy requests.
	if got, err := ParseRequest([]byte("\xFF\xFF\xFF\xFFU\x01\x00\x00\x00xyz")); err != nil || got.Challenge != 1 || got.Padding != 3 {
		t.Errorf("player + data: %+v, %v", got, err)
	}
	if got, err := ParseRequest([]byte("\xFF\xFF\xFF\xFFi\x00")); err != nil || got.Padding != 1 {
		t.Errorf("ping + data: %+v, %v", got, err)
	}
	// A player request without its challenge (pre-2020 client).
	if got, err := ParseRequest([]byte("\xFF\xFF\xFF\xFFU")); err != nil || got.HasChallenge {
		t.Errorf("bare U: %+v, %v", got, err)
	}
	for _, bad := range []string{
		"\xFF\xFF\xFF\xFFTSource Engine Quer",
		"\xFF\xFF\xFF\xFFTSource Engine QueryX",
		"\xFF\xFF\xFF\xFFTGarbage\x00",
	} {
		if _, err := ParseRequest([]byte(bad)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseRequest(%q) err = %v, want ErrMalformed", bad, err)
		}
	}
	if _, err := ParseRequest([]byte("\xFF\xFF\xFF\xFFI")); !errors.Is(err, ErrUnexpectedType) {
		t.Errorf("reply as request: %v", err)
	}
	if _, err := (Request{Type: 'X'}).AppendBinary(nil); !errors.Is(err, ErrUnexpectedType) {
		t.Errorf("encode type X: %v", err)
	}
	if _, err := (Request{Type: 'T', Padding: -1}).AppendBinary(nil); !errors.Is(err, ErrTooLarge) {
		t.Errorf("encode padding -1: %v", err)
	}
}

func TestHeaderErrors(t *testing.T) {
	b := mustAppend(t, dayz())
	b[0] = 0xFE
	if _, err := ParseInfo(b); !errors.Is(err, ErrBadHeader) {
		t.Errorf("split header to ParseInfo: %v", err)
	}
	for _, typ := range []byte{'A', 'D', 'E', 'j', 'l'} {
		b := []byte{0xFF, 0xFF, 0xFF, 0xFF, typ, 0, 0, 0, 0}
		if _, err := ParseInfo(b); !errors.Is(err, ErrUnexpectedType) {
			t.Errorf("type %c to ParseInfo: %v", typ, err)
		}
	}
	if h, typ, err := ParseHeader([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A', 1, 2, 3, 4}); err != nil || h != HeaderSimple || typ != 'A' {
		t.Errorf("ParseHeader(simple) = %#x %c %v", h, typ, err)
	}
	if h, _, err := ParseHeader([]byte{0xFE, 0xFF, 0xFF, 0xFF, 1}); err != nil || h != HeaderSplit {
		t.Errorf("ParseHeader(split) = %#x %v", h, err)
	}
	if _, _, err := ParseHeader([]byte{1, 2, 3, 4, 5}); !errors.Is(err, ErrBadHeader) {
		t.Errorf("ParseHeader(garbage) = %v", err)
	}
}

func TestEncodeRejectsNUL(t *testing.T) {
	in := dayz()
	in.Map = Text("de\x00dust")
	buf := make([]byte, 3, 64)
	got, err := in.AppendBinary(buf)
	if !errors.Is(err, ErrNULInText) || len(got) != 3 {
		t.Errorf("AppendBinary = %d bytes, %v; want the input back and ErrNULInText", len(got), err)
	}
	if _, err := (&Rules{List: []Rule{{Name: Text("a\x00")}}}).AppendBinary(nil); !errors.Is(err, ErrNULInText) {
		t.Errorf("rules: %v", err)
	}
	if _, err := (&Players{List: []Player{{Name: Text("\x00")}}}).AppendBinary(nil); !errors.Is(err, ErrNULInText) {
		t.Errorf("players: %v", err)
	}
	if _, err := (Ping{Payload: Text("\x00")}).AppendBinary(nil); !errors.Is(err, ErrNULInText) {
		t.Errorf("ping: %v", err)
	}
	if _, err := (&Info{Format: 'x'}).AppendBinary(nil); !errors.Is(err, ErrUnexpectedType) {
		t.Errorf("info format x: %v", err)
	}
}

func TestErrTimeout(t *testing.T) {
	if !errors.Is(ErrTimeout, os.ErrDeadlineExceeded) || !errors.Is(ErrTimeout, ErrTimeout) {
		t.Error("ErrTimeout does not match os.ErrDeadlineExceeded")
	}
	if errors.Is(ErrTruncated, os.ErrDeadlineExceeded) {
		t.Error("ErrTruncated matches os.ErrDeadlineExceeded")
	}
	var te interface{ Timeout() bool }
	if !errors.As(ErrTimeout, &te) || !te.Timeout() {
		t.Error("ErrTimeout has no Timeout() true")
	}
}

func TestStrings(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{ServerProxy.String(), "proxy"}, {ServerType('x').String(), "unknown"},
		{EnvironmentMac.String(), "mac"}, {EnvironmentMacOld.String(), "mac"}, {Environment(0).String(), "unknown"},
		{SplitSource.String(), "source"}, {SplitSourceNoSize.String(), "source-nosize"},
		{SplitGoldSource.String(), "goldsource"}, {SplitFormat(9).String(), "SplitFormat(9)"},
	} {
		if tt.got != tt.want {
			t.Errorf("String() = %q, want %q", tt.got, tt.want)
		}
	}
}

func TestPlayersShipAmbiguity(t *testing.T) {
	// Three entries where the third is exactly 16 bytes: after two entries
	// 8 bytes per entry remain, but they read as an entry, so no Ship.
	p := samplePlayers()
	if n := len(mustAppend(t, &Players{List: p.List[2:]})) - 6; n != 16 {
		t.Fatalf("third entry is %d bytes, the test needs 16", n)
	}
	got, err := ParsePlayers(mustAppend(t, p))
	if err != nil || got.Ship || len(got.List) != 3 {
		t.Errorf("got %d entries, Ship %v, %v; want 3 entries, no Ship", len(got.List), got.Ship, err)
	}
}

func TestBannedReply(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"NUL-terminated", "\xFF\xFF\xFF\xFFlYou have been banned from this server.\n\x00", "You have been banned from this server."},
		{"no NUL", "\xFF\xFF\xFF\xFFlBanned by server\r\n", "Banned by server"},
		{"empty", "\xFF\xFF\xFF\xFFl", ""},
		{"text after the NUL ignored", "\xFF\xFF\xFF\xFFlgo away\x00junk", "go away"},
	}
	for _, tt := range tests {
		msg, err := ParseBanned([]byte(tt.in))
		if err != nil || string(msg) != tt.want {
			t.Errorf("%s: ParseBanned = %q, %v; want %q", tt.name, msg, err, tt.want)
		}
	}
	b, err := AppendBanned(nil, Text("nope"))
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := ParseBanned(b); err != nil || string(msg) != "nope" {
		t.Errorf("round trip: %q, %v", msg, err)
	}
	var pe *ParseError
	if _, err := ParseBanned([]byte("\xFF\xFF\xFF\xFFIxx")); !errors.As(err, &pe) || !errors.Is(err, ErrUnexpectedType) {
		t.Errorf("wrong type: %v", err)
	}
	be := &BannedError{Message: Text("You have been banned")}
	if !errors.Is(be, ErrBanned) || be.Error() != "a2s: banned by the server: You have been banned" {
		t.Errorf("BannedError = %q, Is(ErrBanned) %v", be.Error(), errors.Is(be, ErrBanned))
	}
}

// Non-Steam GoldSource servers may end the 'm' reply before the Bots
// byte (WoozyMasta/a2s issue #6): the reply still parses,
// says so, and re-encodes to the same bytes.
func TestInfoGoldSourceNoBots(t *testing.T) {
	for _, withMod := range []bool{true, false} {
		in := goldSourceInfo()
		if !withMod {
			in.IsMod, in.Mod = false, nil
		}
		full := mustAppend(t, in)
		cut := full[:len(full)-1]
		got, err := ParseInfo(cut)
		if err != nil {
			t.Fatalf("mod %v: %v", withMod, err)
		}
		if !got.NoBots || got.Bots != 0 || got.VAC != in.VAC || (got.Mod != nil) != withMod || string(got.Game) != string(in.Game) {
			t.Errorf("mod %v: NoBots %v Bots %d VAC %d Mod %+v", withMod, got.NoBots, got.Bots, got.VAC, got.Mod)
		}
		if enc := mustAppend(t, got); !bytes.Equal(enc, cut) {
			t.Errorf("mod %v: re-encoded % X, want % X", withMod, enc, cut)
		}
		if whole, err := ParseInfo(full); err != nil || whole.NoBots || whole.Bots != in.Bots {
			t.Errorf("mod %v: whole reply NoBots %v Bots %d, %v", withMod, whole.NoBots, whole.Bots, err)
		}
	}
}
