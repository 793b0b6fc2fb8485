package a2s

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// goldSourceInfo is an 'm' reply with its mod section.
func goldSourceInfo() *Info {
	return &Info{Format: 'm', Address: Text("10.0.0.1:27015"), Name: Text("hlds"), Map: Text("crossfire"),
		Folder: Text("valve"), Game: Text("Half-Life"), Players: 2, MaxPlayers: 16, Protocol: 47, ServerType: 'd',
		Environment: 'l', Visibility: 1, IsMod: true,
		Mod: &ModInfo{Link: Text("http://mod"), DownloadLink: Text("http://dl"), Version: 7, Size: 123456, Type: 1, DLL: 1},
		VAC: 1, Bots: 1}
}

func shipInfo() *Info {
	return &Info{Format: 'I', Protocol: 7, Name: Text("Ship"), ShortAppID: AppIDTheShip, Ship: &ShipInfo{Mode: 4, Witnesses: 1, Duration: 9},
		Version: Text("1.0.0.4"), EDF: EDFPort, Port: 27015}
}

func samplePlayers() *Players {
	return &Players{Count: 3, List: []Player{
		{Index: 0, Name: Text("alice"), Score: 10, Duration: 12.5},
		{Index: 1, Name: Text(""), Score: -2, Duration: -1},
		{Index: 2, Name: Text("\x01\x01bob\xff"), Score: 1 << 30, Duration: 3600},
	}}
}

func sampleRules() *Rules {
	return &Rules{Count: 3, List: []Rule{
		{Name: Text("mp_timelimit"), Value: Text("30")},
		{Name: Text("\x01\x02"), Value: Text("\xff\xfe")},
		{Name: Text("mp_timelimit"), Value: Text("")},
	}}
}

func TestRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		name  string
		msg   appender
		parse func([]byte) (any, error)
	}{
		{"info-source-edf", dayz(), func(b []byte) (any, error) { return ParseInfo(b) }},
		{"info-ship", shipInfo(), func(b []byte) (any, error) { return ParseInfo(b) }},
		{"info-goldsource-mod", goldSourceInfo(), func(b []byte) (any, error) { return ParseInfo(b) }},
		{"players", samplePlayers(), func(b []byte) (any, error) { return ParsePlayers(b) }},
		{"rules", sampleRules(), func(b []byte) (any, error) { return ParseRules(b) }},
		{"ping", Ping{Payload: Text(SourcePingPayload)}, func(b []byte) (any, error) { return ParsePing(b) }},
		{"request-info", Request{Type: 'T', Challenge: 7, HasChallenge: true}, func(b []byte) (any, error) { return ParseRequest(b) }},
		{"request-players", Request{Type: 'U', Challenge: 0xDEADBEEF, HasChallenge: true, Padding: 3}, func(b []byte) (any, error) { return ParseRequest(b) }},
		{"request-rules-ask", Request{Type: 'V'}, func(b []byte) (any, error) { return ParseRequest(b) }},
		{"request-legacy", Request{Type: 'W'}, func(b []byte) (any, error) { return ParseRequest(b) }},
		{"fragment-source", Fragment{ID: 9, Total: 3, Number: 0, Size: 1248, Payload: []byte("\xFF\xFF\xFF\xFFEabc"), Format: SplitSource},
			func(b []byte) (any, error) { return ParseFragment(b) }},
		{"fragment-goldsource", Fragment{ID: 9, Total: 3, Number: 0, Payload: []byte("\xFF\xFF\xFF\xFFDabc"), Format: SplitGoldSource},
			func(b []byte) (any, error) { return ParseFragment(b) }},
		{"fragment-compressed", Fragment{ID: 9, Total: 2, Number: 0, Compressed: true, DecompressedSize: 100, CRC: 5, Payload: []byte("BZh9xyz"), Format: SplitSourceNoSize},
			func(b []byte) (any, error) { return ParseFragment(b) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := mustAppend(t, tt.msg)
			got, err := tt.parse(b)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			again := mustAppend(t, asAppender(got))
			if !bytes.Equal(again, b) {
				t.Errorf("re-encoded\n% X\nwant\n% X", again, b)
			}
			// The decoded value matches what was encoded.
			switch want := tt.msg.(type) {
			case *Info:
				if !infoEqual(got.(*Info), want) {
					t.Errorf("decoded %+v, want %+v", got, want)
				}
			case Fragment:
				f := got.(Fragment)
				f.raw, f.sure, f.ID = nil, false, f.ID&^compressedBit
				if !reflect.DeepEqual(f, want) {
					t.Errorf("decoded %+v, want %+v", f, want)
				}
			case *Rules:
				r := got.(*Rules)
				if r.Count != want.Count || len(r.List) != len(want.List) {
					t.Errorf("decoded %+v, want %+v", r, want)
				}
			default:
				if g := reflect.ValueOf(got); g.Kind() == reflect.Pointer {
					got = g.Elem().Interface()
				}
				w := any(want)
				if v := reflect.ValueOf(want); v.Kind() == reflect.Pointer {
					w = v.Elem().Interface()
				}
				if !reflect.DeepEqual(got, w) {
					t.Errorf("decoded %+v, want %+v", got, w)
				}
			}
		})
	}
}

// asAppender turns a parse result back into something encodable.
func asAppender(v any) appender {
	switch m := v.(type) {
	case Request:
		return m
	case Ping:
		return m
	case Fragment:
		return m
	}
	return v.(appender)
}

// TestTruncatedPrefixes cuts every message at every length: each prefix
// must give an error, or a value that encodes back to exactly that prefix
// (an optional tail such as the EDF block, or whole player entries, was
// cut off), and never panic.
func TestTruncatedPrefixes(t *testing.T) {
	type parser func([]byte) (appender, error)
	info := func(b []byte) (appender, error) { return ParseInfo(b) }
	players := func(b []byte) (appender, error) { return ParsePlayers(b) }
	rules := func(b []byte) (appender, error) {
		r, err := ParseRules(b)
		if err != nil {
			if r != nil && !errors.Is(err, ErrTruncated) {
				t.Errorf("partial rules with a non-truncation error: %v", err)
			}
			return nil, err
		}
		return r, nil
	}
	fragment := func(b []byte) (appender, error) { return ParseFragment(b) }
	for _, tt := range []struct {
		name string
		b    []byte
		p    parser
	}{
		{"info-css", testutil.Unhex(t, specInfoCSS), info},
		{"info-ship", testutil.Unhex(t, specInfoShip), info},
		{"info-goldsource", testutil.Unhex(t, specInfoGoldSource), info},
		{"info-edf", mustAppend(t, dayz()), info},
		{"info-goldsource-mod", mustAppend(t, goldSourceInfo()), info},
		{"players", testutil.Unhex(t, specPlayers), players},
		{"players-ship", testutil.Unhex(t, specPlayersShip), players},
		{"rules", mustAppend(t, sampleRules()), rules},
		{"fragment-source", mustAppend(t, Fragment{ID: 1, Total: 2, Size: 1248, Payload: []byte("\xFF\xFF\xFF\xFFE"), Format: SplitSource}), fragment},
		{"fragment-compressed", mustAppend(t, Fragment{ID: 1, Total: 2, Compressed: true, DecompressedSize: 10, CRC: 1, Payload: []byte("BZh9"), Format: SplitSource}), fragment},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := tt.p(tt.b); err != nil {
				t.Fatalf("whole message: %v", err)
			}
			accepted := 0
			for i := range len(tt.b) {
				m, err := tt.p(tt.b[:i])
				if err != nil {
					var pe *ParseError
					if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > i {
						t.Errorf("prefix %d: error %v is not a *ParseError within the prefix", i, err)
					}
					continue
				}
				accepted++
				if enc := mustAppend(t, m); !bytes.Equal(enc, tt.b[:i]) {
					t.Errorf("prefix %d accepted but encodes to % X", i, enc)
				}
			}
			t.Logf("%d of %d prefixes parse as shorter valid messages", accepted, len(tt.b))
		})
	}
	// Requests, pings and challenges: no panic; a short challenge is an error.
	for _, b := range [][]byte{testutil.Unhex(t, specInfoRequestChallenge), testutil.Unhex(t, specPlayerRequest), testutil.Unhex(t, specPingReplySource), testutil.Unhex(t, specChallengeReply)} {
		for i := range len(b) {
			ParseRequest(b[:i])
			ParsePing(b[:i])
			if _, err := ParseChallenge(b[:i]); err == nil {
				t.Errorf("ParseChallenge(% X) accepted a short challenge", b[:i])
			}
		}
	}
}

func TestParseInfoAllocs(t *testing.T) {
	b := mustAppend(t, dayz())
	gs := testutil.Unhex(t, specInfoGoldSource)
	// One copy of the packet backs every Text; the Info, ShipInfo and
	// ModInfo come in one block. 7 string fields, budget 2.
	for name, pkt := range map[string][]byte{"source-edf": b, "goldsource-mod": gs, "ship": testutil.Unhex(t, specInfoShip)} {
		if n := testing.AllocsPerRun(100, func() { ParseInfo(pkt) }); n > 2 {
			t.Errorf("ParseInfo(%s) allocates %v times, want at most 2", name, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { ParsePlayers(testutil.Unhex(t, specPlayersShip)) }); n > 5 {
		// unhex itself allocates; measure ParsePlayers alone below.
		_ = n
	}
	pp := testutil.Unhex(t, specPlayersShip)
	if n := testing.AllocsPerRun(100, func() { ParsePlayers(pp) }); n > 3 {
		t.Errorf("ParsePlayers allocates %v times, want at most 3", n)
	}
	rb := rulesPayload(t)
	if n := testing.AllocsPerRun(100, func() { ParseRules(rb) }); n > 3 {
		t.Errorf("ParseRules allocates %v times, want at most 3", n)
	}
}

func TestEncodeAllocs(t *testing.T) {
	buf := make([]byte, 0, 8192)
	in, gs, p, r := dayz(), goldSourceInfo(), samplePlayers(), sampleRules()
	p.Ship = true
	req := Request{Type: 'T', Challenge: 1, HasChallenge: true, Padding: 100}
	frag := Fragment{ID: 1, Total: 2, Payload: []byte("abc")}
	for name, m := range map[string]appender{"info": in, "info-goldsource": gs, "players": p, "rules": r,
		"request": req, "ping": Ping{Payload: Text(SourcePingPayload)}, "fragment": frag} {
		if n := testing.AllocsPerRun(100, func() { m.AppendBinary(buf) }); n != 0 {
			t.Errorf("%s AppendBinary allocates %v times with capacity, want 0", name, n)
		}
	}
	if n := testing.AllocsPerRun(100, func() { AppendChallenge(buf, 5) }); n != 0 {
		t.Errorf("AppendChallenge allocates %v times", n)
	}
	// SplitWriter reuses dst's spare datagrams.
	payload := rulesPayload(t)
	dst := make([][]byte, 8)
	for i := range dst {
		dst[i] = make([]byte, 0, 1400)
	}
	if n := testing.AllocsPerRun(100, func() { SplitWriter{}.AppendFragments(dst[:0], 1, payload) }); n != 0 {
		t.Errorf("AppendFragments allocates %v times with reusable dst, want 0", n)
	}
}
