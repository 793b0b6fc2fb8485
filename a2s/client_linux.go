package a2s

import (
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

// readBatch is how many datagrams one recvmmsg(2) call may return.
const readBatch = 8

// mmsghdr is struct mmsghdr of recvmmsg(2).
type mmsghdr struct {
	hdr syscall.Msghdr
	len uint32
}

// batchReader reads datagrams with recvmmsg(2): under load one system call
// (and one wake-up of the read loop) returns several replies.
type batchReader struct {
	rc    syscall.RawConn
	msgs  [readBatch]mmsghdr
	iovs  [readBatch]syscall.Iovec
	names [readBatch]syscall.RawSockaddrInet6
	bufs  [readBatch][]byte
}

func newBatchReader(conn *net.UDPConn) *batchReader {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	r := &batchReader{rc: rc}
	for i := range r.bufs {
		r.bufs[i] = make([]byte, receiveBufferSize)
		r.iovs[i].Base = &r.bufs[i][0]
		r.iovs[i].SetLen(receiveBufferSize)
		r.msgs[i].hdr.Iov = &r.iovs[i]
		r.msgs[i].hdr.Iovlen = 1
		r.msgs[i].hdr.Name = (*byte)(unsafe.Pointer(&r.names[i]))
	}
	return r
}

// run reads until the socket fails, handing every datagram to fn.
func (r *batchReader) run(fn func(from netip.AddrPort, b []byte)) error {
	for {
		var n int
		var errno syscall.Errno
		err := r.rc.Read(func(fd uintptr) bool {
			for i := range r.msgs {
				r.msgs[i].hdr.Namelen = syscall.SizeofSockaddrInet6
				r.msgs[i].hdr.Flags = 0
			}
			got, _, e := syscall.Syscall6(syscall.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.msgs[0])), readBatch, 0, 0, 0)
			if e == syscall.EAGAIN || e == syscall.EINTR {
				return false // wait until readable
			}
			n, errno = int(got), e
			return true
		})
		if err != nil {
			return err
		}
		if errno != 0 {
			return errno
		}
		for i := range n {
			fn(sockaddrToAddrPort(&r.names[i]), r.bufs[i][:r.msgs[i].len])
		}
	}
}

// sockaddrToAddrPort decodes the source address recvmmsg stored.
func sockaddrToAddrPort(sa *syscall.RawSockaddrInet6) netip.AddrPort {
	port := uint16(sa.Port>>8 | sa.Port<<8) // network byte order
	switch sa.Family {
	case syscall.AF_INET:
		sa4 := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	case syscall.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port)
	}
	return netip.AddrPort{}
}
