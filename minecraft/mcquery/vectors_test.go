package mcquery

import (
	"bytes"
	"errors"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The requests of the field notes' §6 (wiki.vg's examples).
func TestRequestVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r   Request
		hex string
	}{
		{Request{Type: TypeHandshake, SessionID: 1}, "FEFD0900000001"},
		{Request{Type: TypeStat, SessionID: 1, Token: 9513307}, "FEFD00000000010091295B"},
		{Request{Type: TypeStat, SessionID: 1, Token: 9513307, Full: true}, "FEFD00000000010091295B00000000"},
		{Request{Type: TypeStat, SessionID: 0x10203040, Token: -5, Full: true}, "FEFD0010203040FFFFFFFB00000000"},
	} {
		want := testutil.Unhex(t, tc.hex)
		got, err := tc.r.AppendBinary(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: % X, %v; want % X", tc.r, got, err, want)
		}
		if back, err := ParseRequest(want); err != nil || back != tc.r {
			t.Errorf("ParseRequest(% X) = %+v, %v", want, back, err)
		}
	}
	// The vanilla server's rule: full only at exactly 15 bytes.
	r, err := ParseRequest(testutil.Unhex(t, "FEFD00000000010091295B0000000000"))
	if err != nil || r.Full {
		t.Errorf("16-byte stat: %+v %v; want a basic stat", r, err)
	}
}

func TestHandshakeReplyVectors(t *testing.T) {
	t.Parallel()
	sid, tok, err := ParseHandshakeReply(testutil.Unhex(t, "09000000013935313333303700"))
	if err != nil || sid != 1 || tok != 9513307 {
		t.Errorf("%d %d %v", sid, tok, err)
	}
	// mcstatus' handshake fixture.
	if _, tok, err = ParseHandshakeReply(testutil.Unhex(t, "090000000035373033353037373800")); err != nil || tok != 570350778 {
		t.Errorf("%d %v", tok, err)
	}
	// PocketMine's negative tokens, and the unsigned spelling of one.
	for _, s := range []string{"-123456789", "4171510507"} {
		b := append(append([]byte{9, 0, 0, 0, 1}, s...), 0)
		if _, tok, err := ParseHandshakeReply(b); err != nil || tok != -123456789 {
			t.Errorf("%s: %d %v", s, tok, err)
		}
	}
	if got := AppendHandshakeReply(nil, 1, -7); !bytes.Equal(got, []byte("\x09\x00\x00\x00\x01-7\x00")) {
		t.Errorf("% X", got)
	}
	for _, bad := range []string{"09000000013935", "0900000001393A00", "0900000001393535353535353535353500"} {
		if _, _, err := ParseHandshakeReply(testutil.Unhex(t, bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// A vanilla 1.8 full stat, as in mcstatus' test_query_client, with the
// player names and the little-endian port of the basic stat.
func TestStatRoundTrip(t *testing.T) {
	t.Parallel()
	full := &FullStat{Players: []Text{Text("Dinnerbone"), Text("Djinnibone"), Text("Steve")}}
	for _, kv := range [][2]string{{"hostname", "A Minecraft Server"}, {"gametype", "SMP"}, {"game_id", "MINECRAFT"},
		{"version", "1.8"}, {"plugins", ""}, {"map", "world"}, {"numplayers", "3"}, {"maxplayers", "20"},
		{"hostport", "25565"}, {"hostip", "192.168.56.1"}} {
		full.Set(kv[0], Text(kv[1]))
	}
	b, err := full.AppendReply(nil, 0x10203040)
	if err != nil {
		t.Fatal(err)
	}
	sid, back, err := ParseFullStat(b)
	if err != nil || sid != 0x10203040 || len(back.KV) != 10 || len(back.Players) != 3 ||
		back.MOTD().String() != "A Minecraft Server" || back.NumPlayers() != 3 || back.MaxPlayers() != 20 {
		t.Fatalf("%+v %v", back, err)
	}
	basic, err := full.Basic().AppendReply(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(basic, []byte{0xDD, 0x63}) {
		t.Errorf("host port not little-endian: % X", basic)
	}
	_, bs, err := ParseBasicStat(basic)
	if err != nil || bs.HostPort != 25565 || bs.MOTD.String() != "A Minecraft Server" || bs.NumPlayers != 3 || bs.Map.String() != "world" || bs.HostIP.String() != "192.168.56.1" {
		t.Errorf("%+v %v", bs, err)
	}
	for i := 5; i < len(b); i++ {
		if _, _, err := ParseFullStat(b[:i]); err == nil {
			t.Errorf("full stat cut at %d: no error", i)
		}
	}
	for i := range len(basic) {
		if _, _, err := ParseBasicStat(basic[:i]); err == nil {
			t.Errorf("basic stat cut at %d: no error", i)
		}
	}
}

// Geyser's key order, NULs and raw bytes in the MOTD (mcstatus'
// test_query_handles_unorderd_map_response and
// test_query_handles_unicode_motd_with_nulls).
func TestFullStatQuirks(t *testing.T) {
	t.Parallel()
	motd := Text("\x00\xe4\xbd\xa0\x00 A \xa7\x00 Server\x00")
	full := &FullStat{}
	for _, k := range []string{"gametype", "numplayers", "hostname", "maxplayers", "map", "hostport", "game_id", "version", "hostip", "plugins"} {
		full.Set(k, Text("x"))
	}
	full.Set("hostname", motd)
	full.Set("numplayers", Text("1"))
	b, err := full.AppendReply(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, back, err := ParseFullStat(b)
	if err != nil || !bytes.Equal(back.MOTD(), motd) || back.NumPlayers() != 1 || string(back.KV[0].Key) != "gametype" {
		t.Fatalf("%+v %v", back, err)
	}
	basic := &BasicStat{MOTD: Text("a\x00b\x00c"), GameType: Text("SMP"), Map: Text("world"), NumPlayers: 2, MaxPlayers: 9, HostPort: 0x6400, HostIP: Text("127.0.0.1")}
	bb, _ := basic.AppendReply(nil, 1)
	if _, bs, err := ParseBasicStat(bb); err != nil || !bytes.Equal(bs.MOTD, basic.MOTD) || bs.HostPort != 0x6400 || bs.MaxPlayers != 9 {
		t.Errorf("%+v %v", bs, err)
	}
	// A key list that never ends.
	endless := append([]byte{0, 0, 0, 0, 1}, fullStatPadding...)
	endless = append(endless, "hostname\x00x\x00gametype\x00SMP\x00"...)
	if _, _, err := ParseFullStat(endless); !errors.Is(err, ErrTruncated) {
		t.Errorf("endless key list: %v", err)
	}
}
