package slp

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The handshakes of the field notes' §6 (the first is mcstatus'
// test_handshake).
func TestHandshakeVectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		h   Handshake
		hex string
	}{
		{Handshake{Protocol: 44, Host: "localhost", Port: 25565, NextState: 1}, "0F002C096C6F63616C686F737463DD01"},
		{Handshake{Protocol: -1, Host: "localhost", Port: 25565, NextState: 1}, "1300FFFFFFFF0F096C6F63616C686F737463DD01"},
		{Handshake{Protocol: 767, Host: "localhost", Port: 25565, NextState: 1}, "1000FF05096C6F63616C686F737463DD01"},
	} {
		want := testutil.Unhex(t, tc.hex)
		got, err := tc.h.AppendBinary(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%+v: % X, %v; want % X", tc.h, got, err, want)
		}
		p, n, err := ParsePacket(want, 1024)
		if err != nil || n != len(want) || p.ID != IDHandshake {
			t.Fatalf("ParsePacket(% X) = %+v, %d, %v", want, p, n, err)
		}
		if h, err := ParseHandshake(p.Data); err != nil || h != tc.h {
			t.Errorf("ParseHandshake = %+v, %v; want %+v", h, err, tc.h)
		}
	}
}

func TestSmallPacketVectors(t *testing.T) {
	t.Parallel()
	if got := AppendStatusRequest(nil); !bytes.Equal(got, []byte{1, 0}) {
		t.Errorf("status request % X", got)
	}
	if got := AppendPing(nil, 0x0102030405060708); !bytes.Equal(got, testutil.Unhex(t, "09010102030405060708")) {
		t.Errorf("ping % X", got)
	}
	pong := testutil.Unhex(t, "09010000000000DD7D1C") // mcstatus' pong
	p, _, err := ParsePacket(pong, 16)
	if err != nil || p.ID != IDPong {
		t.Fatal(p, err)
	}
	if v, err := ParsePing(p.Data); err != nil || v != 14515484 {
		t.Errorf("pong payload %d, %v", v, err)
	}
}

func TestVarInt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		v   int32
		hex string
	}{
		{0, "00"}, {1, "01"}, {127, "7F"}, {128, "8001"}, {255, "FF01"}, {25565, "DDC701"},
		{2097151, "FFFF7F"}, {2147483647, "FFFFFFFF07"}, {-1, "FFFFFFFF0F"}, {-2147483648, "8080808008"},
	} {
		b := testutil.Unhex(t, tc.hex)
		if got := AppendVarInt(nil, tc.v); !bytes.Equal(got, b) || VarIntLen(tc.v) != len(b) {
			t.Errorf("AppendVarInt(%d) = % X (len %d), want % X", tc.v, got, VarIntLen(tc.v), b)
		}
		if v, n, err := ConsumeVarInt(b); v != tc.v || n != len(b) || err != nil {
			t.Errorf("ConsumeVarInt(% X) = %d, %d, %v", b, v, n, err)
		}
		for i := range len(b) {
			if _, _, err := ConsumeVarInt(b[:i]); err != ErrTruncated {
				t.Errorf("ConsumeVarInt(% X) = %v, want ErrTruncated", b[:i], err)
			}
		}
	}
	if _, _, err := ConsumeVarInt(testutil.Unhex(t, "FFFFFFFFFF01")); err != ErrVarIntTooLong {
		t.Errorf("6-byte VarInt: %v", err)
	}
}

// mcstatus' status-response fixture decodes to the 1.8-pre1 status.
func TestStatusResponseVector(t *testing.T) {
	t.Parallel()
	json := `{"description":"A Minecraft Server","players":{"max":20,"online":0},"version":{"name":"1.8-pre1","protocol":44}}`
	pkt := AppendStatusResponse(nil, []byte(json), nil)
	p, n, err := ParsePacket(pkt, 1<<20)
	if err != nil || n != len(pkt) {
		t.Fatal(err)
	}
	sr, err := ParseStatusResponse(p.Data, 1<<20)
	if err != nil || string(sr.JSON) != json || sr.Trailer != nil {
		t.Fatalf("%+v %v", sr, err)
	}
	s, err := ParseStatus(sr.JSON, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Description.Text() != "A Minecraft Server" || *s.Players.Max != 20 || *s.Players.Online != 0 ||
		s.Version.Name != "1.8-pre1" || *s.Version.Protocol != 44 {
		t.Errorf("%+v", s)
	}
}

// The 1.6 ping of §6, and the reply of a modern server.
func TestLegacyVectors(t *testing.T) {
	t.Parallel()
	want := testutil.Unhex(t, "FE01FA000B004D0043007C00500069006E00670048006F007300740019 4A 0009 006C006F00630061006C0068006F00730074 000063DD")
	p := LegacyPing{Variant: Legacy16, Protocol: 74, Host: "localhost", Port: 25565}
	got, err := p.AppendBinary(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("% X, %v\nwant % X", got, err, want)
	}
	back, n, err := ParseLegacyPing(want)
	if err != nil || n != len(want) || back != p {
		t.Errorf("ParseLegacyPing = %+v, %d, %v", back, n, err)
	}
	for i := 3; i < len(want); i++ {
		if _, _, err := ParseLegacyPing(want[:i]); !errors.Is(err, ErrTruncated) {
			t.Errorf("prefix of %d bytes: %v", i, err)
		}
	}
	proto := int32(127)
	reply, err := (&LegacyStatus{Protocol: &proto, Version: "1.21.1", MOTD: "§aHi", Online: 3, Max: 20}).AppendBinary(nil)
	if err != nil || !bytes.HasPrefix(reply, testutil.Unhex(t, "FF 0017 00A7 0031 0000 0031 0032 0037 0000")) { // 23 units
		t.Fatalf("% X %v", reply, err)
	}
	ls, err := ParseLegacyReply(reply)
	if err != nil || !ls.Modern() || ls.Version != "1.21.1" || ls.MOTD != "§aHi" || ls.Online != 3 || ls.Max != 20 {
		t.Errorf("%+v %v", ls, err)
	}
}

// mcstatus' test_legacy_client kick strings: beta 1.8 §-separated, 1.4.7
// §1 NUL-separated.
func TestLegacyReplies(t *testing.T) {
	t.Parallel()
	enc := func(s string) []byte {
		var b []byte
		b = append(b, 0xFF, 0, 0)
		n := 0
		for _, r := range s {
			b = append(b, byte(r>>8), byte(r))
			n++
		}
		b[1], b[2] = byte(n>>8), byte(n)
		return b
	}
	ls, err := ParseLegacyReply(enc("A Minecraft Server§0§20"))
	if err != nil || ls.Protocol != nil || ls.MOTD != "A Minecraft Server" || ls.Online != 0 || ls.Max != 20 {
		t.Errorf("beta: %+v %v", ls, err)
	}
	ls, err = ParseLegacyReply(enc("§1\x0051\x001.4.7\x00A Minecraft Server\x000\x0020"))
	if err != nil || *ls.Protocol != 51 || ls.Modern() || ls.Version != "1.4.7" || ls.MOTD != "A Minecraft Server" || ls.Max != 20 {
		t.Errorf("1.4: %+v %v", ls, err)
	}
	// An unpaired surrogate is not UTF-16.
	bad := []byte{0xFF, 0, 3, 0xD8, 0x00, 0, 'a', 0, 'b'}
	if _, err := ParseLegacyReply(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("unpaired surrogate: %v", err)
	}
	// A reply cut inside a UTF-16 unit.
	if _, err := ParseLegacyReply([]byte{0xFF, 0, 3, 0, 'a', 0}); !errors.Is(err, ErrTruncated) {
		t.Errorf("odd length: %v", err)
	}
}

func netip4(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// PROXY headers of both versions name the source.
func TestProxyHeaders(t *testing.T) {
	t.Parallel()
	src, dst := netip4("192.0.2.1:40000"), netip4("192.0.2.2:25565")
	v1, _ := AppendProxyHeader(nil, 1, src, dst)
	if string(v1) != "PROXY TCP4 192.0.2.1 192.0.2.2 40000 25565\r\n" {
		t.Errorf("%q", v1)
	}
	for _, v := range []int{1, 2} {
		h, _ := AppendProxyHeader(nil, v, src, dst)
		got, n, err := ParseProxyHeader(append(h, 0x0F))
		if err != nil || got != src || n != len(h) {
			t.Errorf("v%d: %v %d %v", v, got, n, err)
		}
		for i := range len(h) {
			if _, _, err := ParseProxyHeader(h[:i]); !errors.Is(err, ErrTruncated) {
				t.Errorf("v%d cut at %d: %v", v, i, err)
			}
		}
	}
	six, _ := AppendProxyHeader(nil, 2, netip.MustParseAddrPort("[2001:db8::1]:1"), netip.MustParseAddrPort("[2001:db8::2]:2"))
	if got, _, err := ParseProxyHeader(six); err != nil || got.Addr() != netip.MustParseAddr("2001:db8::1") {
		t.Errorf("v2 IPv6: %v %v", got, err)
	}
}
