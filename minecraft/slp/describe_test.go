package slp

import (
	"net/netip"
	"testing"
)

// Describe names the packets of each write and read of an exchange, and
// says what is not a whole packet.
func TestDescribe(t *testing.T) {
	t.Parallel()
	hs, _ := Handshake{Protocol: 767, Host: "localhost", Port: 25565, NextState: NextStatus}.AppendBinary(nil)
	hello := AppendStatusRequest(hs)
	resp := AppendStatusResponse(nil, []byte(`{"description":"x"}`), []byte{3, 'a', 'b', 'c'})
	legacy, _ := LegacyPing{Variant: Legacy16, Protocol: 74, Host: "localhost", Port: 25565}.AppendBinary(nil)
	reply, _ := (&LegacyStatus{Protocol: func() *int32 { v := int32(ModernLegacyProtocol); return &v }(), Version: "1.21", MOTD: "m", Max: 20}).AppendBinary(nil)
	proxy, _ := AppendProxyHeader(nil, 2, netip.MustParseAddrPort("10.0.0.1:5000"), netip.MustParseAddrPort("10.0.0.2:25565"))
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{hello, "handshake (protocol 767, localhost:25565, next state 1); status request"},
		{append(proxy, hello...), "PROXY header; handshake (protocol 767, localhost:25565, next state 1); status request"},
		{resp, "status response, 19 bytes of JSON and 4 after it"},
		{AppendPing(nil, 14515484), "ping or pong, payload 14515484"},
		{legacy, "legacy ping (1.6)"},
		{[]byte{0xFE, 0x01}, "legacy ping (1.4)"},
		{reply, "legacy reply, protocol 127 (a 1.7+ server)"},
		{resp[:5], "5 bytes that are not a whole packet"},
		{AppendPacket(nil, 0x42, []byte{1, 2}), "packet 0x42, 2 bytes"},
		{nil, ""},
	} {
		if got := Describe(tc.b); got != tc.want {
			t.Errorf("Describe(% x) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
