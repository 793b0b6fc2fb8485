package a2s_test

import (
	"testing"

	"github.com/gsq-project/gsq/a2s"
)

func TestDescribe(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		b    string
		want string
	}{
		{"\xFF\xFF\xFF\xFFTSource Engine Query\x00", "A2S_INFO request"},
		{"\xFF\xFF\xFF\xFFA\x01\x02\x03\x04", "S2C_CHALLENGE"},
		{"\xFF\xFF\xFF\xFFlbanned\x00", "'l' refusal (banned)"},
		{"\xFF\xFF\xFF\xFF?", "unknown type 0x3f"},
		{"\xFF\xFF\xFF\xFF", "empty simple packet"},
		{"\xFF\xFF", "runt datagram"},
		{"HTTP/1.0 400", "unknown header"},
		// Source split: id 0x1a, 3 fragments, number 0, size 1248.
		{"\xFE\xFF\xFF\xFF\x1a\x00\x00\x00\x03\x00\xe0\x04\xFF\xFF\xFF\xFFE", "split source fragment, id 0x1a, 1 of 3"},
		{"\xFE\xFF\xFF\xFF\x1a", "malformed split fragment"},
	} {
		if got := a2s.Describe([]byte(tt.b)); got != tt.want {
			t.Errorf("Describe(%q) = %q, want %q", tt.b, got, tt.want)
		}
	}
}
