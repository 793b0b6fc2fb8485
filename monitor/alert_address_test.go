package monitor

import (
	"strings"
	"testing"
)

// TestAlertOfListServerShowsAddressOnce: a server added with -f is named
// after its address, and its alert's Server field says it once (issue
// 19, user row 8), while a named server shows its name and address.
func TestAlertOfListServerShowsAddressOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ server, want string }{
		{"203.0.113.10:27015", "203.0.113.10:27015 (a2s)"},
		{"eu-1", "eu-1 (203.0.113.10:27015, a2s)"},
	} {
		a := &Alert{Kind: AlertDown, Server: c.server, Target: "203.0.113.10:27015", Protocol: "a2s"}
		var got string
		for _, f := range alertFields(a, func(s string) string { return s }) {
			if f[0] == "Server" {
				got = f[1]
			}
		}
		if got != c.want || strings.Count(got, "203.0.113.10") != 1 {
			t.Errorf("server %q: Server field %q, want %q", c.server, got, c.want)
		}
	}
}
