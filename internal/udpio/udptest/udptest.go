// Package udptest gives tests a closed UDP port: one where a datagram
// earns an ICMP port unreachable (RFC 792, destination unreachable, code 3),
// which package udpio reports to the clients on Linux.
//
// It uses the standard library only.
package udptest

import (
	"net"
	"net/netip"
	"runtime"
	"testing"
)

// ClosedPort returns a loopback UDP address that nobody listens on: a
// port the test bound and closed again. It skips the test where
// unconnected sockets do not learn of ICMP errors (everywhere but Linux),
// since there a closed port looks silent.
func ClosedPort(tb testing.TB) netip.AddrPort {
	tb.Helper()
	if runtime.GOOS != "linux" {
		tb.Skip("unconnected sockets learn of ICMP errors on Linux only")
	}
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		tb.Fatal(err)
	}
	closed := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	pc.Close()
	return closed
}
