package slp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gsq-project/gsq/internal/testutil"
)

// seeds are the field notes' §6 vectors and the fake servers' replies.
func packetSeeds(f *testing.F) {
	for _, h := range []string{"0F002C096C6F63616C686F737463DD01", "1300FFFFFFFF0F096C6F63616C686F737463DD01",
		"1000FF05096C6F63616C686F737463DD01", "0100", "09010102030405060708", "09010000000000DD7D1C", "FFFFFFFFFF01", "8080808008"} {
		f.Add(testutil.Unhex(f, h))
	}
	f.Add(AppendStatusResponse(nil, []byte(`{"description":"A Minecraft Server","players":{"max":20,"online":0},"version":{"name":"1.8-pre1","protocol":44}}`), nil))
	f.Add(AppendStatusResponse(nil, []byte(`{}`), AppendString(nil, `V{"releaseType":"RELEASE"}`)))
}

// FuzzParsePacket: a packet that parses re-frames to the same bytes, and
// its length never exceeds the limit.
func FuzzParsePacket(f *testing.F) {
	packetSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, n, err := ParsePacket(b, 4096)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%v is not a *ParseError", err)
			}
			return
		}
		if n > 4096+MaxVarIntLen || n > len(b) {
			t.Fatalf("took %d bytes of %d", n, len(b))
		}
		// Re-framing is the same unless the input's VarInts were not
		// minimal (the wire allows padding).
		again := AppendPacket(nil, p.ID, p.Data)
		if q, m, err := ParsePacket(again, 4096+8); err != nil || m != len(again) || q.ID != p.ID || !bytes.Equal(q.Data, p.Data) {
			t.Fatalf("re-framed %x does not read back: %v", again, err)
		}
		_, _ = ParseHandshake(p.Data)
		_, _ = ParsePing(p.Data)
		if sr, err := ParseStatusResponse(p.Data, 4096); err == nil && len(sr.JSON)+len(sr.Trailer) > len(p.Data) {
			t.Fatal("status response longer than its packet")
		}
	})
}

// FuzzParseHandshake: a handshake that parses encodes back to the same
// fields.
func FuzzParseHandshake(f *testing.F) {
	for _, h := range []string{"002C096C6F63616C686F737463DD01", "FFFFFFFF0F096C6F63616C686F737463DD01", "FF05096C6F63616C686F737463DD02"} {
		f.Add(testutil.Unhex(f, h))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHandshake(b)
		if err != nil {
			return
		}
		out, err := h.AppendBinary(nil)
		if err != nil {
			t.Fatalf("%+v does not encode: %v", h, err)
		}
		p, _, err := ParsePacket(out, 2048)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := ParseHandshake(p.Data); err != nil || back != h {
			t.Fatalf("%+v came back as %+v, %v", h, back, err)
		}
	})
}

// FuzzParseStatus: any input parses or fails with a *ParseError; what
// parses flattens to valid UTF-8 and encodes back to JSON that parses to
// the same version and counts.
func FuzzParseStatus(f *testing.F) {
	for _, s := range []string{
		`{"description":"A Minecraft Server","players":{"max":20,"online":0},"version":{"name":"1.8-pre1","protocol":44}}`,
		`{"description":{"text":"","extra":[{"text":"a","color":"#FF8800","bold":true},"b",{"translate":"k","fallback":"f"}]},"players":{"max":-5,"online":"3","sample":[{"name":"§6x","id":"00000000-0000-0000-0000-000000000000"}]}}`,
		`{"description":[{"text":"x"}],"favicon":"data:image/png;base64,iVBO\nRw0K","forgeData":{"d":"\u0004\u0000abc"},"enforcesSecureChat":true}`,
		`{"modinfo":{"type":"FML","modList":[{"modid":"mcp","version":"9.42"}]},"version":{"protocol":1e10}}`,
		`[]`, `"x"`, `{"description":{"extra":[[[[[[[[[[{"text":"deep"}]]]]]]]]]]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseStatus(b, &ParseOptions{KeepFavicon: true})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("%v is not a *ParseError wrapping ErrMalformed", err)
			}
			return
		}
		if txt := s.Description.Text(); utf8.Valid(b) && !utf8.ValidString(txt) {
			t.Fatalf("description %q is not UTF-8", txt)
		}
		out, err := s.AppendJSON(nil)
		if err != nil {
			t.Fatalf("does not encode: %v", err)
		}
		back, err := ParseStatus(out, nil)
		if err != nil {
			t.Fatalf("encoded %s does not parse: %v", out, err)
		}
		if (s.Players == nil) != (back.Players == nil) || s.Players != nil && !sameInt(s.Players.Online, back.Players.Online) {
			t.Fatalf("players %+v came back as %+v", s.Players, back.Players)
		}
		if !json.Valid(out) {
			t.Fatal("invalid JSON")
		}
	})
}

func sameInt(a, b *int32) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// FuzzForgeData: decoding never panics nor allocates beyond what the
// string can hold, and encoding then decoding gives the bytes back.
func FuzzForgeData(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0})
	f.Add(ForgeDataPayload(&Mods{Mods: []Mod{{ID: "forge", Version: "ANY"}, {ID: "x", IgnoreServerOnly: true}}, Channels: []Channel{{Name: "x:y", Version: "1", Required: true}}}))
	f.Fuzz(func(t *testing.T, b []byte) {
		back, err := DecodeForgeData(EncodeForgeData(b))
		if err != nil || !bytes.Equal(back, b) {
			t.Fatalf("%x came back as %x, %v", b, back, err)
		}
		if d, err := DecodeForgeData(string(b)); err == nil && len(d) > 2*len(b)+1 {
			t.Fatalf("%d bytes out of a %d-byte string", len(d), len(b))
		}
		m := &Mods{}
		_ = m.decodeD(EncodeForgeData(b))
	})
}

// FuzzParseLegacyPing: a ping that parses encodes back to the same bytes.
func FuzzParseLegacyPing(f *testing.F) {
	f.Add(testutil.Unhex(f, "FE01FA000B004D0043007C00500069006E00670048006F007300740019 4A 0009 006C006F00630061006C0068006F00730074 000063DD"))
	f.Add([]byte{0xFE})
	f.Add([]byte{0xFE, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, n, err := ParseLegacyPing(b)
		if err != nil {
			return
		}
		out, err := p.AppendBinary(nil)
		if err != nil || !bytes.Equal(out, b[:n]) {
			t.Fatalf("%+v encodes to %x, read from %x: %v", p, out, b[:n], err)
		}
	})
}

// FuzzParseLegacyReply: what parses encodes back to a reply that parses
// to the same status.
func FuzzParseLegacyReply(f *testing.F) {
	f.Add(testutil.Unhex(f, "FF0017 00A7 0031 0000 0031 0032 0037 0000 0031002E00320031002E0031 0000 00A700610048 0069 0000 0033 0000 00320030"))
	f.Add([]byte{0xFF, 0x00, 0x05, 0x00, 0x78, 0x00, 0xA7, 0x00, 0x31, 0x00, 0xA7, 0x00, 0x32})
	f.Add([]byte{0xFF, 0x00, 0x03, 0xD8, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseLegacyReply(b)
		if err != nil || s.Protocol == nil {
			return // the beta format's text loses its § codes when encoded
		}
		out, err := s.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseLegacyReply(out)
		if err != nil || back.MOTD != s.MOTD || back.Online != s.Online || back.Max != s.Max {
			t.Fatalf("%+v came back as %+v, %v", s, back, err)
		}
	})
}

// FuzzParseProxyHeader: a header never takes more bytes than given.
func FuzzParseProxyHeader(f *testing.F) {
	f.Add([]byte("PROXY TCP4 192.0.2.1 192.0.2.2 40000 25565\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	v2, _ := AppendProxyHeader(nil, 2, netip4("192.0.2.1:1"), netip4("192.0.2.2:2"))
	f.Add(v2)
	f.Fuzz(func(t *testing.T, b []byte) {
		if _, n, err := ParseProxyHeader(b); err == nil && (n > len(b) || n <= 0) {
			t.Fatalf("took %d of %d bytes", n, len(b))
		}
	})
}

// FuzzDescribe: Describe reads any bytes, whole packets or not, without
// a panic, and names at most eight packets of a write.
func FuzzDescribe(f *testing.F) {
	hs, _ := Handshake{Protocol: 47, Host: "localhost", Port: 25565, NextState: NextStatus}.AppendBinary(nil)
	f.Add(AppendStatusRequest(hs))
	f.Add(AppendStatusResponse(nil, []byte(`{"description":"x"}`), []byte{1, 2}))
	f.Add(AppendPing(nil, 1))
	f.Add([]byte{0xFE, 0x01, 0xFA})
	f.Add([]byte("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\r\n\x01\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if d := Describe(b); strings.Count(d, ";") > 8 {
			t.Errorf("%d parts", strings.Count(d, ";")+1)
		}
	})
}
