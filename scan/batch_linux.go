//go:build linux && (amd64 || arm64)

package scan

import (
	"net/netip"
	"syscall"
	"unsafe"
)

// On Linux each socket's reader takes up to recvBatch datagrams per
// system call (recvmmsg), and the requests its flights send in response
// go out together (sendmmsg) once the batch is digested: on a busy scan
// that is a few system calls for dozens of datagrams.

const (
	recvBatch = 32      // datagrams per recvmmsg
	sendMax   = 64      // requests per sendmmsg
	sendBytes = 64      // room for one request (A2S requests are 9 to 29 bytes)
	maxDgram  = 1 << 16 // a whole UDP datagram
)

// mmsghdr is struct mmsghdr of <sys/socket.h> on 64-bit Linux.
type mmsghdr struct {
	hdr syscall.Msghdr
	n   uint32
	_   [4]byte
}

// sendBatch holds the requests a reader's flights send while it digests
// one batch of datagrams.
type sendBatch struct {
	fd    uintptr
	ready bool // fd is set
	n     int
	msgs  [sendMax]mmsghdr
	iovs  [sendMax]syscall.Iovec
	names [sendMax]syscall.RawSockaddrInet6
	bufs  [sendMax][sendBytes]byte
}

// add queues b for to; it reports false when b must be sent another way
// (the batch is nil, or b is too large).
func (sb *sendBatch) add(b []byte, to netip.AddrPort) bool {
	if sb == nil || !sb.ready || len(b) > sendBytes {
		return false
	}
	if sb.n == sendMax {
		sb.flush()
	}
	i := sb.n
	copy(sb.bufs[i][:], b)
	sb.iovs[i] = syscall.Iovec{Base: &sb.bufs[i][0]}
	sb.iovs[i].SetLen(len(b))
	m := &sb.msgs[i].hdr
	*m = syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&sb.names[i])), Iov: &sb.iovs[i], Iovlen: 1}
	m.Namelen = encodeSockaddr(&sb.names[i], to)
	sb.n++
	return true
}

// initBatches points the socket's send batches at its file descriptor.
func (sk *socket) initBatches() {
	rc, err := sk.conn.SyscallConn()
	if err != nil {
		return // batches without a descriptor are never flushed to one: add refuses
	}
	_ = rc.Control(func(fd uintptr) {
		sk.batch.fd, sk.launches.fd = fd, fd
		sk.batch.ready, sk.launches.ready = true, true
	})
}

// flush sends the queued requests. A request the kernel refuses is
// dropped: its flight's retry timer is already armed.
func (sb *sendBatch) flush() {
	for done := 0; done < sb.n; {
		r1, _, errno := syscall.Syscall6(sysSendmmsg, sb.fd, uintptr(unsafe.Pointer(&sb.msgs[done])), uintptr(sb.n-done), 0, 0, 0)
		switch {
		case errno == syscall.EINTR:
		case errno != 0:
			done++ // skip the datagram that failed
		default:
			done += int(r1)
		}
	}
	sb.n = 0
}

// encodeSockaddr writes to as a sockaddr_in (IPv4) or sockaddr_in6 and
// returns its length.
func encodeSockaddr(sa *syscall.RawSockaddrInet6, to netip.AddrPort) uint32 {
	port := to.Port()
	if a := to.Addr(); a.Is4() {
		sa4 := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		*sa4 = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Addr: a.As4()}
		sa4.Port = port>>8 | port<<8
		return syscall.SizeofSockaddrInet4
	}
	*sa = syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Addr: to.Addr().As16()}
	sa.Port = port>>8 | port<<8
	return syscall.SizeofSockaddrInet6
}

// decodeSockaddr reads a sockaddr_in or sockaddr_in6.
func decodeSockaddr(sa *syscall.RawSockaddrInet6) netip.AddrPort {
	port := sa.Port>>8 | sa.Port<<8
	if sa.Family == syscall.AF_INET {
		sa4 := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port)
}

// read receives the socket's datagrams, a batch at a time, and hands each
// to its flight.
func (r *run) read(sk *socket) {
	defer close(sk.done)
	rc, err := sk.conn.SyscallConn()
	if err != nil {
		return
	}
	var (
		msgs  [recvBatch]mmsghdr
		iovs  [recvBatch]syscall.Iovec
		names [recvBatch]syscall.RawSockaddrInet6
	)
	// Room for recvBatch whole datagrams is 2 MB, of which a scan touches
	// a few pages per slot: mapped outside the Go heap, the untouched rest
	// costs neither heap nor resident memory. Nothing keeps a reference
	// into it past r.datagram (the parsers and the reassembler copy).
	buf, err := syscall.Mmap(-1, 0, recvBatch*maxDgram, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err == nil {
		defer syscall.Munmap(buf)
	} else {
		buf = make([]byte, recvBatch*maxDgram)
	}
	for i := range recvBatch {
		iovs[i] = syscall.Iovec{Base: &buf[i*maxDgram]}
		iovs[i].SetLen(maxDgram)
	}
	for {
		var n int
		var errno syscall.Errno
		err := rc.Read(func(fd uintptr) bool {
			for i := range recvBatch {
				msgs[i] = mmsghdr{hdr: syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&names[i])), Namelen: syscall.SizeofSockaddrInet6, Iov: &iovs[i], Iovlen: 1}}
			}
			var r1 uintptr
			r1, _, errno = syscall.Syscall6(sysRecvmmsg, fd, uintptr(unsafe.Pointer(&msgs[0])), recvBatch, syscall.MSG_DONTWAIT, 0, 0)
			if errno == syscall.EAGAIN {
				r.setBehind(sk, false)
				return false // wait until readable
			}
			n = int(r1)
			return true
		})
		if err != nil {
			r.setBehind(sk, false)
			return // closed
		}
		if errno != 0 {
			continue // EINTR, or an ICMP error report
		}
		r.setBehind(sk, n == recvBatch)
		for i := range n {
			r.datagram(sk, decodeSockaddr(&names[i]), buf[i*maxDgram:i*maxDgram+int(msgs[i].n)], &sk.batch)
		}
		sk.batch.flush()
	}
}
