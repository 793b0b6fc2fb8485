package cli

import (
	"context"
	"errors"
	"fmt"
	"net/netip"

	"github.com/gsq-project/gsq/internal/hostport"
)

// hostPort is a server address as written in an argument, parsed but not
// resolved. Every command reads addresses by one rule, internal/hostport's
// (which package scan's target lists follow too): a malformed address is a
// usage error (exit 2), a name that does not resolve is unreachable (exit
// 3, from resolve).
type hostPort struct {
	host      string         // an IP address (without brackets) or a host name
	port      uint16         // never 0
	addr      netip.AddrPort // the address, when host is an IP address
	portGiven bool           // the address named its port
}

// parseHostPort parses HOST[:PORT] after trimming the spaces around it
// (see hostport.Parse). defaultPort fills in a missing port; 0 makes a
// missing port an error (OGP has no standard port). The error is a usage
// error.
func parseHostPort(s string, defaultPort uint16) (hostPort, error) {
	hp, err := hostport.Parse(s, defaultPort)
	if err != nil {
		return hostPort{}, usageError("%s", addressProblem(err))
	}
	_, noPort := hostport.Parse(s, 0)
	return hostPort{host: hp.Host, port: hp.Port, addr: hp.Addr, portGiven: noPort == nil}, nil
}

// addressProblem is what the user reads about an address that does not
// parse: the parser's reason, with advice for a missing port.
func addressProblem(err error) string {
	if errors.Is(err, hostport.ErrNoPort) {
		return err.Error() + ", and this protocol has no standard one: write HOST:PORT"
	}
	return err.Error()
}

func (hp hostPort) parsed() hostport.HostPort {
	return hostport.HostPort{Host: hp.host, Port: hp.port, Addr: hp.addr}
}

// String returns HOST:PORT, with brackets around an IPv6 address and a
// host name in lower case: one spelling per server.
func (hp hostPort) String() string { return hp.parsed().String() }

// resolve returns the address to query: the IP address as written, or
// the first address the name resolves to, IPv4 preferred. A name that
// does not resolve gives an error that carries the *net.DNSError and exit
// code 3 (unreachable).
func (hp hostPort) resolve(ctx context.Context) (netip.AddrPort, error) {
	addr, err := hp.parsed().Resolve(ctx, nil)
	if err != nil {
		return netip.AddrPort{}, withCode(ExitTimeout, fmt.Errorf("cannot resolve %q: %w", hp.host, err))
	}
	return addr, nil
}
