package hostport

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		def    uint16
		want   string // HostPort.String(); "" for an error
		reason string // a part of the error's message
	}{
		{"127.0.0.1", 27015, "127.0.0.1:27015", ""},
		{"  127.0.0.1:27016\t", 27015, "127.0.0.1:27016", ""},
		{"[::1]:27016", 27015, "[::1]:27016", ""},
		{"::1", 27015, "[::1]:27015", ""},
		{"[::1]", 27015, "[::1]:27015", ""},
		{"::ffff:10.0.0.1", 27015, "10.0.0.1:27015", ""},
		{"[::ffff:127.0.0.1]:5", 27015, "127.0.0.1:5", ""},
		{"Example.COM", 27015, "example.com:27015", ""},
		{"example.com.:7777", 27015, "example.com.:7777", ""},
		{"my_host-1.example:7777", 27015, "my_host-1.example:7777", ""},
		{"localhost", 27015, "localhost:27015", ""},
		{"999.1.1.1", 27015, "", `"999.1.1.1" is not an IPv4 address`},
		{"127.1:5", 27015, "", `"127.1" is not an IPv4 address`},
		{"1.2.3.4.5", 27015, "", "is not an IPv4 address"},
		{"127.0.0.1", 0, "", `"127.0.0.1" has no port`},
		{"127.0.0.1:0", 27015, "", `invalid port "0"`},
		{"127.0.0.1:70000", 27015, "", `invalid port "70000"`},
		{"127.0.0.1:http", 27015, "", `invalid port "http"`},
		{"127.0.0.1:+1", 27015, "", `invalid port "+1"`},
		{"127.0.0.1:", 27015, "", `invalid port ""`},
		{":27015", 27015, "", "no host before the port"},
		{"[::1", 27015, "", "missing its closing ']'"},
		{"::1]", 27015, "", "write IPv6 as [addr]:port"},
		{"[::1]x", 27015, "", "is not [IPv6]:PORT"},
		{"[::1]:", 27015, "", `invalid port ""`},
		{"[127.0.0.1]:1", 27015, "", "brackets hold an IPv6 address"},
		{"x]:1", 27015, "", "stray bracket"},
		{"fe80::1:2:3:zz", 27015, "", "write IPv6"},
		{"a b", 27015, "", `"a b" is not a host name`},
		{"a..b", 27015, "", "is not a host name"},
		{"a:b:c", 27015, "", "is not HOST[:PORT]"},
		{"ünïcode.example", 27015, "", "is not a host name"},
		{strings.Repeat("a", 64) + ".example", 27015, "", "is not a host name"},
		{"", 27015, "", "empty address"},
		{"   ", 27015, "", "empty address"},
	}
	for _, tt := range tests {
		hp, err := Parse(tt.in, tt.def)
		var pe *Error
		switch {
		case tt.want == "" && !errors.As(err, &pe):
			t.Errorf("Parse(%q) = %v, %v; want an *Error", tt.in, hp, err)
		case tt.want == "" && !strings.Contains(err.Error(), tt.reason):
			t.Errorf("Parse(%q): %q, want it to say %q", tt.in, err, tt.reason)
		case tt.want != "" && (err != nil || hp.String() != tt.want):
			t.Errorf("Parse(%q) = %v, %v; want %s", tt.in, hp, err, tt.want)
		}
	}
	if _, err := Parse("127.0.0.1", 0); !errors.Is(err, ErrNoPort) {
		t.Errorf("no port: %v does not match ErrNoPort", err)
	}
	if _, err := Parse("a b", 1); errors.Is(err, ErrNoPort) {
		t.Errorf("%v matches ErrNoPort", err)
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	hp, err := Parse("127.0.0.1:5", 0)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := hp.Resolve(context.Background(), nil); err != nil || a != hp.Addr {
		t.Errorf("IP literal: %v, %v", a, err)
	}
	hp, err = Parse("localhost", 9)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := hp.Resolve(context.Background(), nil); err != nil || !a.Addr().IsLoopback() || a.Port() != 9 {
		t.Errorf("localhost: %v, %v", a, err)
	}
	// .invalid never resolves (RFC 6761).
	hp, err = Parse("gsq-test.invalid", 9)
	if err != nil {
		t.Fatal(err)
	}
	var dns *net.DNSError
	if _, err := hp.Resolve(context.Background(), nil); !errors.As(err, &dns) {
		t.Errorf("gsq-test.invalid: %v, want a *net.DNSError", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"127.0.0.1:27015", "[::1]:1", "::1", "host", "a:b:c", "[", "::ffff:1.2.3.4", "999.1.1.1", " x.example:9 ", "[::1]x"} {
		f.Add(s, uint16(27015))
	}
	f.Add("127.0.0.1", uint16(0))
	f.Fuzz(func(t *testing.T, in string, def uint16) {
		hp, err := Parse(in, def)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Reason == "" {
				t.Fatalf("Parse(%q): %#v is not an *Error with a reason", in, err)
			}
			return
		}
		if hp.Port == 0 || hp.Host == "" {
			t.Fatalf("Parse(%q) accepted %+v", in, hp)
		}
		// What String writes reads back as the same server.
		back, err := Parse(hp.String(), 0)
		if err != nil || back.String() != hp.String() || back.Addr != hp.Addr {
			t.Fatalf("Parse(%q) = %+v prints as %q, which reads as %+v, %v", in, hp, hp.String(), back, err)
		}
	})
}
