//go:build unix

package rcon

import (
	"net"
	"syscall"
)

// peerClosed reports whether the peer of nc has closed the connection,
// without reading or waiting: a peek at the socket finds the end of the
// stream (or a reset) there. Data waiting to be read means it is open,
// and so does a connection that is not a plain socket (TLS, a pipe),
// which cannot be peeked at.
func peerClosed(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err == syscall.ECONNRESET
		return true
	})
	return closed
}
