package mcquery

import (
	"strings"
	"testing"
)

// Describe names each datagram of an exchange, and says what is not one.
func TestDescribe(t *testing.T) {
	t.Parallel()
	hs, _ := Request{Type: TypeHandshake, SessionID: 0x01020304}.AppendBinary(nil)
	basic, _ := Request{Type: TypeStat, SessionID: 1, Token: -5}.AppendBinary(nil)
	full, _ := Request{Type: TypeStat, SessionID: 1, Token: 9513307, Full: true}.AppendBinary(nil)
	fs := &FullStat{Players: []Text{Text("Steve")}}
	fs.Set("hostname", Text("motd"))
	fs.Set("numplayers", Text("1"))
	fs.Set("maxplayers", Text("20"))
	fullReply, err := fs.AppendReply(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	basicReply, err := fs.Basic().AppendReply(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{hs, "handshake, session 0x1020304"},
		{basic, "basic stat request, token -5"},
		{full, "full stat request, token 9513307"},
		{AppendHandshakeReply(nil, 1, -42), "handshake reply, token -42"},
		{fullReply, "full stat, 3 keys, 1 players"},
		{basicReply, "basic stat, 1 of 20 players"},
		{[]byte("hello"), "not a Query datagram"},
		{nil, "not a Query datagram"},
	} {
		if got := Describe(tc.b); !strings.HasPrefix(got, tc.want) {
			t.Errorf("Describe(% x) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
