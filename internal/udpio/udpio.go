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

// maxAsyncRetries bounds the sends of one datagram that the socket fails
// with earlier datagrams' ICMP errors: under a flood of them, each send
// may find a new one pending.
const maxAsyncRetries = 16

// retryAsync reports whether a send that failed with err for the tries-th
// time (from 1) should be tried again: err is an earlier datagram's ICMP
// error. ECONNREFUSED never concerns the datagram sent (an unconnected
// socket learns of a closed port from ICMP only), so it is retried up to
// maxAsyncRetries times; the other errors may be the datagram's own (no
// route, say), so they are retried once.
func retryAsync(err error, tries int) bool {
	if !asyncError(err) {
		return false
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return tries < maxAsyncRetries
	}
	return tries < 2
}

// WriteTo sends b to addr on conn. When the socket reports an earlier
// datagram's ICMP error instead of sending, it sends again (see
// retryAsync): the error belongs to the reader, which gets it from the
// error queue.
func WriteTo(conn net.PacketConn, b []byte, addr netip.AddrPort) error {
	for tries := 1; ; tries++ {
		err := writeTo(conn, b, addr)
		if err == nil || !retryAsync(err, tries) {
			return err
		}
	}
}

func writeTo(conn net.PacketConn, b []byte, addr netip.AddrPort) error {
	if uc, ok := conn.(*net.UDPConn); ok {
		_, err := uc.WriteToUDPAddrPort(b, addr)
		return err
	}
	_, err := conn.WriteTo(b, net.UDPAddrFromAddrPort(addr))
	return err
}
