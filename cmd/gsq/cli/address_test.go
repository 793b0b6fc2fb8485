package cli

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestParseHostPort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		def  uint16
		want string // hostPort.String(); "" for a usage error
	}{
		{"127.0.0.1", 27015, "127.0.0.1:27015"},
		{"  127.0.0.1:27016\t", 27015, "127.0.0.1:27016"},
		{"[::1]:27016", 27015, "[::1]:27016"},
		{"::1", 27015, "[::1]:27015"},
		{"[::1]", 27015, "[::1]:27015"},
		{"::ffff:10.0.0.1", 27015, "10.0.0.1:27015"},
		{"Example.COM", 27015, "example.com:27015"},
		{"example.com:7777", 27015, "example.com:7777"},
		{"999.1.1.1", 27015, ""}, // no top-level domain is all digits: a mistyped IPv4 address
		{"127.1:5", 27015, ""},
		{"localhost", 27015, "localhost:27015"},
		{"127.0.0.1", 0, ""}, // OGP: no standard port
		{"127.0.0.1:0", 27015, ""},
		{"127.0.0.1:70000", 27015, ""},
		{"127.0.0.1:http", 27015, ""},
		{"127.0.0.1:", 27015, ""},
		{":27015", 27015, ""},
		{"[::1", 27015, ""},
		{"::1]", 27015, ""},
		{"[::1]x", 27015, ""},
		{"[::1]:", 27015, ""},
		{"[127.0.0.1]:1", 27015, ""},
		{"fe80::1:2:3:zz", 27015, ""},
		{"a b", 27015, ""},
		{"a:b:c", 27015, ""},
		{"ünïcode.example", 27015, ""},
		{"", 27015, ""},
		{"   ", 27015, ""},
	}
	for _, tt := range tests {
		hp, err := parseHostPort(tt.in, tt.def)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("parseHostPort(%q) = %v, want a usage error", tt.in, hp)
		case tt.want == "" && exitCodeOf(err) != ExitUsage:
			t.Errorf("parseHostPort(%q): %v has exit code %d, want %d", tt.in, err, exitCodeOf(err), ExitUsage)
		case tt.want != "" && (err != nil || hp.String() != tt.want):
			t.Errorf("parseHostPort(%q) = %v, %v; want %s", tt.in, hp, err, tt.want)
		}
	}
}

// A name that does not resolve is unreachable: exit code 3, and the DNS
// error for the JSON kind.
func TestResolveUnresolvable(t *testing.T) {
	t.Parallel()
	hp, err := parseHostPort("gsq-test.invalid", 27015)
	if err != nil {
		t.Fatal(err)
	}
	_, err = hp.resolve(context.Background())
	var dns *net.DNSError
	if exitCodeOf(err) != ExitTimeout || !errors.As(err, &dns) || errorKind(err) != "unreachable" {
		t.Fatalf("resolve: %v (exit %d, kind %s)", err, exitCodeOf(err), errorKind(err))
	}
}

// One rule for every command: the exit code of an address argument.
func TestAddressExitCodes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		code int
	}{
		{[]string{"query", "[::1"}, ExitUsage},
		{[]string{"query", ":27015"}, ExitUsage},
		{[]string{"query", "--protocol", "ogp", "127.0.0.1"}, ExitUsage},
		{[]string{"query", "--deadline", "2s", "gsq-test.invalid"}, ExitTimeout},
		{[]string{"query", "999.1.1.1"}, ExitUsage},
		{[]string{"query", "127.1"}, ExitUsage},
		{[]string{"query", " 127.0.0.1:1 ", "--deadline", "1ms"}, ExitTimeout},
		{[]string{"rcon", "[::1", "status"}, ExitUsage},
		{[]string{"rcon", "--timeout", "2s", "gsq-test.invalid", "status"}, ExitTimeout},
		{[]string{"scan", "[::1"}, ExitUsage},
		{[]string{"scan", "--deadline", "2s", "gsq-test.invalid"}, ExitTimeout},
	} {
		code, stdout, stderr := runGSQ(t, nil, nil, map[string]string{"RCON_PASSWORD": "x"}, tt.args...)
		if code != tt.code {
			t.Errorf("gsq %s: exit %d, want %d\n%s%s", strings.Join(tt.args, " "), code, tt.code, stdout, stderr)
		}
	}
}
