package scan

import (
	"net"
	"net/netip"
	"syscall"
	"time"
	"unsafe"
)

// stampedReader reads datagrams from c with the time the kernel received
// each (SO_TIMESTAMPNS): on loopback, when it was sent. Timing a client's
// sends from the kernel's stamps, not from when a test goroutine got to
// read them, keeps the measure free of the test's own scheduling.
func stampedReader(c *net.UDPConn) func(buf []byte) (int, netip.AddrPort, time.Time, error) {
	rc, err := c.SyscallConn()
	if err == nil {
		_ = rc.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_TIMESTAMPNS, 1)
		})
	}
	stamped := err == nil
	oob := make([]byte, 128)
	return func(buf []byte) (int, netip.AddrPort, time.Time, error) {
		n, oobn, _, from, err := c.ReadMsgUDPAddrPort(buf, oob)
		if err != nil || !stamped {
			return n, from, time.Now(), err
		}
		msgs, perr := syscall.ParseSocketControlMessage(oob[:oobn])
		if perr == nil {
			for _, m := range msgs {
				if m.Header.Level == syscall.SOL_SOCKET && m.Header.Type == syscall.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(syscall.Timespec{})) {
					ts := (*syscall.Timespec)(unsafe.Pointer(&m.Data[0]))
					return n, from, time.Unix(ts.Unix()), nil
				}
			}
		}
		return n, from, time.Now(), nil
	}
}
