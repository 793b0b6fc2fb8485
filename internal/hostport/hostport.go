// Package hostport reads a game server's address as a person writes it,
// HOST[:PORT], with one rule for every place gsq takes one: the arguments
// of gsq query, gsq scan and gsq rcon, the lines of a target list (package
// scan's TargetReader, which gsq scan and gsq monitor read), and the
// monitor's configuration. An address that does not read is malformed
// (gsq: a usage error, JSON kind "invalid"); a name that reads but does
// not resolve is unreachable. It uses the standard library only.
package hostport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// HostPort is an address as written, parsed but not resolved.
type HostPort struct {
	// Host is an IP address (without brackets, IPv4-mapped IPv6 addresses
	// unmapped) or a host name as written.
	Host string
	Port uint16 // never 0
	// Addr is the address when Host is an IP address; the zero value for
	// a name, which Resolve looks up.
	Addr netip.AddrPort
}

// ErrNoPort is why an address without a port does not read when there is
// no default port (OGP has no standard one). The caller may add advice.
var ErrNoPort = errors.New("has no port")

// Error is why an address does not read. Its message says what is wrong
// with the address, without a prefix of its own: `invalid port "99999": a
// port is a number from 1 to 65535`, `"127.0.0.1" has no port`.
type Error struct {
	Input  string // the address, spaces trimmed
	Reason string
	Err    error // ErrNoPort, or nil
}

func (e *Error) Error() string { return e.Reason }

// Unwrap returns ErrNoPort when the address lacks a port, else nil.
func (e *Error) Unwrap() error { return e.Err }

// Parse reads HOST[:PORT] after trimming the spaces around it. HOST is an
// IPv4 address (all four numbers), an IPv6 address (in brackets when a
// port follows: "[::1]:27015"; "::1" and "[::1]" take defaultPort), or a
// host name: labels of letters, digits, '-' and '_' joined by dots, at
// most 253 bytes, whose last label is not all digits (that is an IPv4
// address mistyped, such as "999.1.1.1" or "127.1"). PORT is 1 to 65535;
// defaultPort fills it in when missing, and 0 makes a missing port an
// error (wrapping ErrNoPort). The error is an *Error.
func Parse(s string, defaultPort uint16) (HostPort, error) {
	s = strings.TrimSpace(s)
	bad := func(format string, args ...any) (HostPort, error) {
		return HostPort{}, &Error{Input: s, Reason: fmt.Sprintf(format, args...)}
	}
	if s == "" {
		return bad("empty address")
	}
	host, portText, hasPort := s, "", false
	switch {
	case s[0] == '[':
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return bad("%q is missing its closing ']'", s)
		}
		host, portText = s[1:end], s[end+1:]
		if portText != "" {
			if portText[0] != ':' {
				return bad("%q is not [IPv6]:PORT", s)
			}
			portText, hasPort = portText[1:], true
		}
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return bad("%q: brackets hold an IPv6 address", s)
		}
	case strings.Count(s, ":") > 1: // a bare IPv6 address, which cannot carry a port
		if _, err := netip.ParseAddr(s); err != nil {
			return bad("%q is not HOST[:PORT] (write IPv6 as [addr]:port)", s)
		}
	case strings.Contains(s, ":"):
		host, portText, _ = strings.Cut(s, ":")
		hasPort = true
	}
	if strings.ContainsAny(host, "[]") {
		return bad("%q has a stray bracket", s)
	}
	if host == "" {
		return bad("%q has no host before the port", s)
	}
	port := defaultPort
	if hasPort {
		n, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || n == 0 {
			return bad("invalid port %q: a port is a number from 1 to 65535", portText)
		}
		port = uint16(n)
	} else if port == 0 {
		return HostPort{}, &Error{Input: s, Reason: fmt.Sprintf("%q %v", s, ErrNoPort), Err: ErrNoPort}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		addr := netip.AddrPortFrom(a.Unmap(), port)
		return HostPort{Host: addr.Addr().String(), Port: port, Addr: addr}, nil
	}
	if reason := checkName(host); reason != "" {
		return bad("%q %s", host, reason)
	}
	return HostPort{Host: host, Port: port}, nil
}

// checkName returns why host is not a host name, or "".
func checkName(host string) string {
	if len(host) > 253 {
		return "is not a host name: longer than 253 bytes"
	}
	name := strings.TrimSuffix(host, ".") // a fully qualified name
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "is not a host name or an IP address"
		}
		for i := range len(l) {
			switch c := l[i]; {
			case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
			default:
				return "is not a host name or an IP address"
			}
		}
	}
	if last := labels[len(labels)-1]; strings.Trim(last, "0123456789") == "" {
		// No top-level domain is all digits: this is an IPv4 address
		// that does not read as one.
		return "is not an IPv4 address (write all four numbers, each 0 to 255)"
	}
	return ""
}

// String returns HOST:PORT, with brackets around an IPv6 address and a
// host name in lower case: one spelling per server.
func (hp HostPort) String() string {
	if hp.Addr.IsValid() {
		return hp.Addr.String()
	}
	return net.JoinHostPort(strings.ToLower(hp.Host), strconv.Itoa(int(hp.Port)))
}

// Resolve returns the address to query: Addr when the host is an IP
// address, else the first address r (net.DefaultResolver when nil) finds
// for the name, an IPv4 one preferred, as game servers rarely listen on
// IPv6. A name that does not resolve gives an error that carries the
// *net.DNSError.
func (hp HostPort) Resolve(ctx context.Context, r *net.Resolver) (netip.AddrPort, error) {
	if hp.Addr.IsValid() {
		return hp.Addr, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", hp.Host)
	if err == nil && len(addrs) == 0 {
		err = &net.DNSError{Err: "no address", Name: hp.Host, IsNotFound: true}
	}
	if err != nil {
		return netip.AddrPort{}, err
	}
	best := addrs[0]
	for _, a := range addrs {
		if a.Unmap().Is4() {
			best = a
			break
		}
	}
	return netip.AddrPortFrom(best.Unmap(), hp.Port), nil
}
