// Package udpio reads and writes UDP datagrams in batches, for the clients
// that share one socket among many servers: a2s.Client and the scan
// engine. It is the one place that knows recvmmsg(2), sendmmsg(2), the
// kernel's sockaddr layouts and the socket error queue.
//
// On Linux (amd64 and arm64) a [Reader] takes a batch of datagrams per
// recvmmsg(2) call, a [Writer] sends its queue with one sendmmsg(2) call,
// and the socket reports ICMP errors per destination: an unconnected UDP
// socket with IP_RECVERR (IPV6_RECVERR) set queues every ICMP error it
// gets, and the reader drains that queue (recvmsg with MSG_ERRQUEUE) into
// [Report] values, so a closed port is known after one datagram, as it is
// on a connected socket (which sees ECONNREFUSED). Elsewhere reads and
// writes take one datagram per call and ICMP errors are not reported: a
// closed port looks silent.
//
// It uses the standard library only.
package udpio

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
)

// Report is an ICMP error the network sent back about a datagram sent to
// Addr: the destination is unreachable. Err is a [syscall.Errno]:
// ECONNREFUSED for a closed port (ICMP port unreachable), EHOSTUNREACH,
// ENETUNREACH or EACCES for the other kinds of destination unreachable.
type Report struct {
	Addr netip.AddrPort
	Err  error
}

// unmap returns a with an IPv4-mapped IPv6 address turned into IPv4, the
// form the callers key their peers by.
func unmap(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// asyncError reports whether err is an error the kernel may hand to any
// call on a socket that has IP_RECVERR set, on behalf of an ICMP error
// about an earlier datagram: a send that fails with it was not refused for
// its own sake.
func asyncError(err error) bool {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return false
	}
	switch errno {
	case syscall.ECONNREFUSED, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EHOSTDOWN, syscall.EACCES:
		return true
	}
	return false
}

// WriteTo sends b to addr on conn. When the socket reports an earlier
// datagram's ICMP error instead of sending (see [asyncError]), it sends
// again once: the error belongs to the reader, which gets it from the
// error queue.
func WriteTo(conn net.PacketConn, b []byte, addr netip.AddrPort) error {
	err := writeTo(conn, b, addr)
	if err != nil && asyncError(err) {
		err = writeTo(conn, b, addr)
	}
	return err
}

func writeTo(conn net.PacketConn, b []byte, addr netip.AddrPort) error {
	if uc, ok := conn.(*net.UDPConn); ok {
		_, err := uc.WriteToUDPAddrPort(b, addr)
		return err
	}
	_, err := conn.WriteTo(b, net.UDPAddrFromAddrPort(addr))
	return err
}
