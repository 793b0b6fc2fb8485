package cli

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// splitHostPort splits HOST[:PORT] (IPv6 as [addr]:port or a bare
// address) and fills in defPort when the port is missing. defPort 0 means
// the protocol has no standard port, so a missing port is an error.
func splitHostPort(s string, defPort uint16) (host string, port uint16, err error) {
	if s == "" {
		return "", 0, fmt.Errorf("empty address")
	}
	if a, err := netip.ParseAddr(strings.Trim(s, "[]")); err == nil {
		host = a.String() // a bare IPv4 or IPv6 address
	} else if h, p, err := net.SplitHostPort(s); err == nil {
		n, perr := strconv.ParseUint(p, 10, 16)
		if perr != nil || n == 0 {
			return "", 0, fmt.Errorf("invalid port %q in %q", p, s)
		}
		return h, uint16(n), nil
	} else if strings.Contains(s, ":") {
		return "", 0, fmt.Errorf("invalid address %q (write IPv6 as [addr]:port)", s)
	} else {
		host = s
	}
	if defPort == 0 {
		return "", 0, fmt.Errorf("%q has no port, and this protocol has no standard one", s)
	}
	return host, defPort, nil
}

// resolve turns HOST[:PORT] into an address, looking host names up and
// preferring IPv4 (game servers rarely listen on IPv6).
func resolve(ctx context.Context, s string, defPort uint16) (netip.AddrPort, error) {
	host, port, err := splitHostPort(s, defPort)
	if err != nil {
		return netip.AddrPort{}, usageError("%v", err)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return netip.AddrPortFrom(a.Unmap(), port), nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return netip.AddrPort{}, withCode(ExitTimeout, fmt.Errorf("cannot resolve %q: %v", host, err))
	}
	best := addrs[0]
	for _, a := range addrs {
		if a.Unmap().Is4() {
			best = a
			break
		}
	}
	return netip.AddrPortFrom(best.Unmap(), port), nil
}
