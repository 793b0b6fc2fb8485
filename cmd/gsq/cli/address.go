package cli

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// hostPort is a server address as written in an argument or a target
// list line, parsed but not resolved: every command reads addresses with
// parseHostPort, so that one rule holds everywhere: a malformed address is
// a usage error (exit 2), a name that does not resolve is unreachable
// (exit 3, from resolve).
type hostPort struct {
	host string         // an IP address (without brackets) or a host name
	port uint16         // never 0
	addr netip.AddrPort // the address, when host is an IP address
}

// parseHostPort parses HOST[:PORT] after trimming the spaces around it.
// HOST is an IPv4 address, an IPv6 address (in brackets when a port
// follows: "[::1]:27015"; "::1" and "[::1]" take defaultPort) or a host
// name of letters, digits, '-', '_' and '.'. PORT is 1 to 65535;
// defaultPort fills it in when missing, and 0 makes a missing port an
// error (OGP has no standard port). The error is a usage error.
func parseHostPort(s string, defaultPort uint16) (hostPort, error) {
	hp, err := splitAddress(strings.TrimSpace(s), defaultPort)
	if err != nil {
		return hostPort{}, usageError("%v", err)
	}
	return hp, nil
}

func splitAddress(s string, defaultPort uint16) (hostPort, error) {
	if s == "" {
		return hostPort{}, fmt.Errorf("empty address")
	}
	host, portText, hasPort := s, "", false
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return hostPort{}, fmt.Errorf("invalid address %q: missing ']'", s)
		}
		host, portText = s[1:end], s[end+1:]
		if portText != "" {
			if portText[0] != ':' {
				return hostPort{}, fmt.Errorf("invalid address %q: write IPv6 with a port as [addr]:port", s)
			}
			portText, hasPort = portText[1:], true
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return hostPort{}, fmt.Errorf("invalid address %q: brackets hold an IPv6 address", s)
		}
	case strings.Count(s, ":") > 1: // a bare IPv6 address, which cannot carry a port
		if _, err := netip.ParseAddr(s); err != nil {
			return hostPort{}, fmt.Errorf("invalid address %q: write IPv6 as [addr]:port", s)
		}
	case strings.Contains(s, ":"):
		i := strings.IndexByte(s, ':')
		host, portText, hasPort = s[:i], s[i+1:], true
	}
	if strings.ContainsAny(host, "[]") {
		return hostPort{}, fmt.Errorf("invalid address %q: stray bracket", s)
	}
	if host == "" {
		return hostPort{}, fmt.Errorf("invalid address %q: no host before the port", s)
	}
	port := defaultPort
	if hasPort {
		n, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || n == 0 {
			return hostPort{}, fmt.Errorf("invalid port %q in %q: a port is a number from 1 to 65535", portText, s)
		}
		port = uint16(n)
	} else if port == 0 {
		return hostPort{}, fmt.Errorf("%q has no port, and this protocol has no standard one: write HOST:PORT", s)
	}
	hp := hostPort{host: host, port: port}
	if a, err := netip.ParseAddr(host); err == nil {
		hp.addr = netip.AddrPortFrom(a.Unmap(), port)
		hp.host = hp.addr.Addr().String()
	} else if !validHostName(host) {
		return hostPort{}, fmt.Errorf("invalid address %q: %q is neither an IP address nor a host name", s, host)
	}
	return hp, nil
}

// validHostName accepts what resolvers take: letters, digits, '-', '_'
// and '.', at most 253 bytes.
func validHostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// String returns HOST:PORT, with brackets around an IPv6 address and a
// host name in lower case: one spelling per server.
func (hp hostPort) String() string {
	if hp.addr.IsValid() {
		return hp.addr.String()
	}
	return net.JoinHostPort(strings.ToLower(hp.host), strconv.Itoa(int(hp.port)))
}

// resolve returns the address to query: the IP address as written, or
// the first address the name resolves to, IPv4 preferred (game servers
// rarely listen on IPv6). A name that does not resolve gives an error
// that carries the *net.DNSError and exit code 3 (unreachable).
func (hp hostPort) resolve(ctx context.Context) (netip.AddrPort, error) {
	if hp.addr.IsValid() {
		return hp.addr, nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", hp.host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no address", Name: hp.host, IsNotFound: true}
	}
	if err != nil {
		return netip.AddrPort{}, withCode(ExitTimeout, fmt.Errorf("cannot resolve %q: %w", hp.host, err))
	}
	best := addrs[0]
	for _, a := range addrs {
		if a.Unmap().Is4() {
			best = a
			break
		}
	}
	return netip.AddrPortFrom(best.Unmap(), hp.port), nil
}
