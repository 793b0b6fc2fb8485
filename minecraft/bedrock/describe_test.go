package bedrock

import "testing"

// Describe names the ping and the pong, and says what is neither.
func TestDescribe(t *testing.T) {
	t.Parallel()
	ping, _ := Ping{Time: 7}.AppendBinary(nil)
	pong, err := Pong{Time: 7, ServerGUID: 1, Status: Text("MCPE;x;1;1.0;0;1")}.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		b    []byte
		want string
	}{
		{ping, "unconnected ping, time 7"},
		{pong, "unconnected pong, time 7, 16 bytes of status"},
		{ping[:20], "not a RakNet ping or pong"},
		{nil, "not a RakNet ping or pong"},
	} {
		if got := Describe(tc.b); got != tc.want {
			t.Errorf("Describe(% x) = %q, want %q", tc.b, got, tc.want)
		}
	}
}
