// On linux/386 getsockopt goes through socketcall, and syscall has no
// SYS_GETSOCKOPT; the test reads tcp_info directly, so it skips that platform.

//go:build !386

package rcon

import (
	"net"
	"syscall"
	"unsafe"
)

// PeerClosed reports whether the server's close of c's connection has
// reached the client's socket: its FIN arrived, and the socket is in
// CLOSE_WAIT (tcp_info's first byte, the state, is 8).
func PeerClosed(c *Client) bool {
	cn := c.cur.Load()
	tc, ok := cn.nc.(*net.TCPConn)
	if !ok {
		return false
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return false
	}
	var info [256]byte
	size := uint32(len(info))
	var errno syscall.Errno
	rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.IPPROTO_TCP, syscall.TCP_INFO,
			uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&size)), 0)
	})
	const tcpCloseWait = 8
	return errno == 0 && info[0] == tcpCloseWait
}
