//go:build unix

package rcon

import (
	"net"
	"syscall"
)

// peek looks at nc's socket without reading or waiting: closed reports
// that the peer has closed the connection (the end of the stream, or a
// reset, is next), pending that data waits to be read, before which a
// close cannot be seen. A connection that is not a plain socket (TLS, a
// pipe) cannot be peeked at, and reports neither.
func peek(nc net.Conn) (closed, pending bool) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false, false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false, false
	}
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err == syscall.ECONNRESET
		pending = n > 0
		return true
	})
	return closed, pending
}
