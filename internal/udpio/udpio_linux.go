//go:build linux && (amd64 || arm64)

package udpio

import (
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"unsafe"
)

// mmsghdr is struct mmsghdr of <sys/socket.h> on 64-bit Linux.
type mmsghdr struct {
	hdr syscall.Msghdr
	n   uint32
	_   [4]byte
}

// Reader reads the datagrams of one socket, a batch per recvmmsg(2) call,
// and the ICMP errors of its error queue. It is used by one goroutine.
type Reader struct {
	// Idle, if set, is called by Read each time it finds nothing to read
	// and is about to wait.
	Idle   func()
	rc     syscall.RawConn
	conn   net.PacketConn // when rc is nil: read one datagram at a time
	size   int
	recvFn func(fd uintptr) bool // made once: a closure per call would allocate
	mapped bool                  // buf is mmap'd
	buf    []byte
	msgs   []mmsghdr
	iovs   []syscall.Iovec
	names  []syscall.RawSockaddrInet6
	n      int
	errno  syscall.Errno
	// errq is set when the socket queues ICMP errors (IP_RECVERR).
	errq    bool
	reports []Report
	eq      errQueue
	from    netip.AddrPort // the datagram of a one-at-a-time read
}

// NewReader returns a reader of conn taking up to batch datagrams per call,
// each of up to size bytes (longer ones are truncated; 65536 holds any UDP
// datagram). Call Close when done reading.
func NewReader(conn net.PacketConn, size, batch int) *Reader {
	r := &Reader{conn: conn, size: size}
	uc, ok := conn.(*net.UDPConn)
	if !ok {
		r.buf = make([]byte, size)
		return r
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		r.buf = make([]byte, size)
		return r
	}
	r.rc = rc
	// Room for batch whole datagrams is megabytes, of which a client
	// touches a few pages per slot: mapped outside the Go heap, the
	// untouched rest costs neither heap nor resident memory.
	if b, err := syscall.Mmap(-1, 0, batch*size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON); err == nil {
		r.buf, r.mapped = b, true
	} else {
		r.buf = make([]byte, batch*size)
	}
	r.msgs = make([]mmsghdr, batch)
	r.iovs = make([]syscall.Iovec, batch)
	r.names = make([]syscall.RawSockaddrInet6, batch)
	for i := range batch {
		r.iovs[i] = syscall.Iovec{Base: &r.buf[i*size]}
		r.iovs[i].SetLen(size)
	}
	r.recvFn = r.recvmmsg
	return r
}

// EnableReports asks the kernel to queue the ICMP errors the socket
// receives (IP_RECVERR, and IPV6_RECVERR on an IPv6 socket), which Read
// then returns as [Report] values, and reports whether it could. Call it
// before the first Read. Sends on such a socket go through [WriteTo] or a
// [Writer], which tell a datagram's own failure from an earlier one's ICMP
// error.
func (r *Reader) EnableReports() bool {
	if r.rc == nil {
		return false
	}
	_ = r.rc.Control(func(fd uintptr) {
		v4 := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, syscall.IP_RECVERR, 1)
		v6 := syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_RECVERR, 1)
		r.errq = v4 == nil || v6 == nil
	})
	return r.errq
}

// Close releases the reader's buffers. The reader must not be used after.
func (r *Reader) Close() {
	if r.mapped {
		_ = syscall.Munmap(r.buf)
		r.mapped = false
	}
	r.buf, r.n = nil, 0
}

// Read waits for datagrams or ICMP errors and returns how many datagrams
// it read; [Reader.Datagram] returns each, and [Reader.Reports] the ICMP
// errors read with them. It may return 0 datagrams and some reports. An
// error ends the reading: the socket is closed (net.ErrClosed) or failed.
func (r *Reader) Read() (int, error) {
	r.reports = r.reports[:0]
	if r.rc == nil {
		return r.readOne()
	}
	for {
		r.n, r.errno = 0, 0
		if err := r.rc.Read(r.recvFn); err != nil {
			return 0, err
		}
		switch {
		case r.errno == 0:
			return r.n, nil
		case r.errno == syscall.EINTR:
			continue
		case r.errq && asyncError(r.errno):
			// An ICMP error pending on the socket: recvmmsg(2) returns it
			// rather than datagrams. recvmmsg drained the queue already.
			if len(r.reports) > 0 {
				return 0, nil
			}
			continue
		}
		return 0, r.errno
	}
}

// recvmmsg is the rc.Read callback: one recvmmsg(2) call, and the error
// queue when there is nothing to read.
func (r *Reader) recvmmsg(fd uintptr) bool {
	for i := range r.msgs {
		r.msgs[i].hdr = syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&r.names[i])), Namelen: syscall.SizeofSockaddrInet6, Iov: &r.iovs[i], Iovlen: 1}
	}
	got, _, e := syscall.Syscall6(syscall.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.msgs[0])), uintptr(len(r.msgs)), syscall.MSG_DONTWAIT, 0, 0)
	switch {
	case e == syscall.EAGAIN:
		// Wait until readable, unless the error queue holds ICMP errors:
		// the kernel wakes the reader for those too, and a send may have
		// taken the socket's pending error before this read could.
		if r.errq && r.drainErrQueue(fd) {
			return true
		}
		if r.Idle != nil {
			r.Idle()
		}
		return false
	case e != 0 && r.errq && asyncError(e):
		r.drainErrQueue(fd)
	}
	r.n, r.errno = int(got), e
	return true
}

// drainErrQueue reads the socket's error queue into r.reports and reports
// whether it found any.
func (r *Reader) drainErrQueue(fd uintptr) bool {
	found := false
	for range maxReportsPerRead {
		rep, ok, more := r.eq.read(fd)
		if ok {
			r.reports = append(r.reports, rep)
			found = true
		}
		if !more {
			break
		}
	}
	return found
}

// maxReportsPerRead bounds the errors taken from the queue per read, so
// that a flood of ICMP errors cannot starve the datagrams.
const maxReportsPerRead = 64

// Datagram returns the i-th datagram of the last Read and its sender. b is
// valid until the next Read.
func (r *Reader) Datagram(i int) (from netip.AddrPort, b []byte) {
	if r.rc == nil {
		return r.from, r.buf[:r.n]
	}
	m := &r.msgs[i]
	return decodeSockaddr(&r.names[i]), r.buf[i*r.size : i*r.size+min(int(m.n), r.size)]
}

// Reports returns the ICMP errors the last Read took from the error
// queue. The slice is valid until the next Read.
func (r *Reader) Reports() []Report { return r.reports }

// readOne reads one datagram from a socket that is not a *net.UDPConn.
func (r *Reader) readOne() (int, error) {
	r.n = 0
	for {
		n, a, err := r.conn.ReadFrom(r.buf)
		if err != nil {
			return 0, err
		}
		if ua, ok := a.(*net.UDPAddr); ok {
			r.from, r.n = unmap(ua.AddrPort()), n
			return 1, nil
		}
	}
}

// errQueue reads one entry of a socket's error queue at a time.
type errQueue struct {
	name syscall.RawSockaddrInet6
	oob  [128]byte
	data [64]byte // the start of the datagram that failed; not used
	iov  syscall.Iovec
	msg  syscall.Msghdr
}

// Offsets in struct sock_extended_err of <linux/errqueue.h>.
const (
	eeErrno  = 0 // uint32
	eeOrigin = 4 // uint8
	eeType   = 5 // uint8
	eeCode   = 6 // uint8
	eeLen    = 16
)

// Values of sock_extended_err.ee_origin and the ICMP types that mean
// "destination unreachable".
const (
	originICMP         = 2
	originICMP6        = 3
	icmpUnreachable    = 3
	icmp6Unreachable   = 1
	icmpFragNeeded     = 4 // ICMP unreachable code of path MTU discovery: not an error
	sizeofCmsghdrAlign = (syscall.SizeofCmsghdr + 7) &^ 7
)

// read takes one entry off the queue. ok is set when the entry is a
// destination-unreachable error worth reporting, more when the queue may
// hold more.
func (q *errQueue) read(fd uintptr) (rep Report, ok, more bool) {
	q.iov = syscall.Iovec{Base: &q.data[0]}
	q.iov.SetLen(len(q.data))
	q.msg = syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&q.name)), Namelen: syscall.SizeofSockaddrInet6, Iov: &q.iov, Iovlen: 1, Control: &q.oob[0]}
	q.msg.SetControllen(len(q.oob))
	_, _, e := syscall.Syscall(syscall.SYS_RECVMSG, fd, uintptr(unsafe.Pointer(&q.msg)), syscall.MSG_ERRQUEUE|syscall.MSG_DONTWAIT)
	if e == syscall.EINTR {
		return Report{}, false, true
	}
	if e != 0 {
		return Report{}, false, false // EAGAIN: empty
	}
	oob := q.oob[:q.msg.Controllen]
	for len(oob) >= syscall.SizeofCmsghdr {
		h := (*syscall.Cmsghdr)(unsafe.Pointer(&oob[0]))
		if h.Len < syscall.SizeofCmsghdr || int(h.Len) > len(oob) {
			break
		}
		data := oob[sizeofCmsghdrAlign:h.Len]
		if (h.Level == syscall.IPPROTO_IP && h.Type == syscall.IP_RECVERR ||
			h.Level == syscall.IPPROTO_IPV6 && h.Type == syscall.IPV6_RECVERR) && len(data) >= eeLen {
			if errno, report := unreachable(data); report {
				return Report{Addr: decodeSockaddr(&q.name), Err: errno}, true, true
			}
		}
		next := (int(h.Len) + 7) &^ 7
		if next >= len(oob) {
			break
		}
		oob = oob[next:]
	}
	return Report{}, false, true
}

// unreachable reads a sock_extended_err and reports whether it is an
// ICMP "destination unreachable" other than a path MTU message: what a
// connected socket would have failed with.
func unreachable(ee []byte) (syscall.Errno, bool) {
	errno := syscall.Errno(binary.NativeEndian.Uint32(ee[eeErrno:]))
	typ, code := ee[eeType], ee[eeCode]
	switch ee[eeOrigin] {
	case originICMP:
		return errno, typ == icmpUnreachable && code != icmpFragNeeded
	case originICMP6:
		return errno, typ == icmp6Unreachable // "packet too big" is a type of its own
	}
	return errno, false
}

// decodeSockaddr reads a sockaddr_in or sockaddr_in6, IPv4-mapped
// addresses unmapped.
func decodeSockaddr(sa *syscall.RawSockaddrInet6) netip.AddrPort {
	port := sa.Port>>8 | sa.Port<<8 // network byte order
	switch sa.Family {
	case syscall.AF_INET:
		sa4 := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	case syscall.AF_INET6:
		return unmap(netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port))
	}
	return netip.AddrPort{}
}

// Writer queues datagrams and sends them with sendmmsg(2), a batch per
// call. It is used by one goroutine at a time.
type Writer struct {
	rc      syscall.RawConn
	v6      bool // the socket is AF_INET6: every address goes as sockaddr_in6
	maxSize int
	// Failed, if set, is called by Flush for each datagram the kernel
	// refused, with its destination and the error.
	Failed func(to netip.AddrPort, err error)

	n      int
	bufs   []byte
	msgs   []mmsghdr
	iovs   []syscall.Iovec
	names  []syscall.RawSockaddrInet6
	dest   []netip.AddrPort
	sendFn func(fd uintptr) bool // made once: a closure per call would allocate
	start  int                   // first datagram of the sendmmsg call
	sent   int
	errno  syscall.Errno
}

// NewWriter returns a writer of conn that sends up to batch datagrams per
// call, each of up to maxSize bytes. It returns nil when conn cannot be
// written in batches: callers then send with [WriteTo].
func NewWriter(conn net.PacketConn, batch, maxSize int) *Writer {
	uc, ok := conn.(*net.UDPConn)
	if !ok {
		return nil
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &Writer{rc: rc, maxSize: maxSize}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var sa syscall.Sockaddr
		sa, serr = syscall.Getsockname(int(fd))
		_, w.v6 = sa.(*syscall.SockaddrInet6)
	}); err != nil || serr != nil {
		return nil
	}
	w.bufs = make([]byte, batch*maxSize)
	w.msgs = make([]mmsghdr, batch)
	w.iovs = make([]syscall.Iovec, batch)
	w.names = make([]syscall.RawSockaddrInet6, batch)
	w.dest = make([]netip.AddrPort, batch)
	w.sendFn = w.sendmmsg
	return w
}

// Add queues a copy of b for to, flushing first if the queue is full. It
// reports false when b cannot be queued (too long, or an IPv6 destination
// on an IPv4 socket): the caller sends it with WriteTo. A nil Writer
// queues nothing.
func (w *Writer) Add(b []byte, to netip.AddrPort) bool {
	if w == nil || len(b) > w.maxSize || !w.v6 && !to.Addr().Unmap().Is4() {
		return false
	}
	if w.n == len(w.msgs) {
		w.Flush()
	}
	i := w.n
	slot := w.bufs[i*w.maxSize : i*w.maxSize+len(b)]
	copy(slot, b)
	w.iovs[i] = syscall.Iovec{Base: unsafe.SliceData(w.bufs[i*w.maxSize:])}
	w.iovs[i].SetLen(len(b))
	w.msgs[i].hdr = syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&w.names[i])), Iov: &w.iovs[i], Iovlen: 1}
	w.msgs[i].hdr.Namelen = encodeSockaddr(&w.names[i], to, w.v6)
	w.dest[i] = to
	w.n++
	return true
}

// Len is the number of datagrams queued.
func (w *Writer) Len() int {
	if w == nil {
		return 0
	}
	return w.n
}

// Flush sends the queued datagrams. A datagram the kernel refuses is
// reported to Failed and skipped; the others are sent. An ICMP error of
// an earlier datagram that the socket hands to the send instead is not
// the datagram's: it is sent again (see [WriteTo]).
func (w *Writer) Flush() {
	if w == nil {
		return
	}
	tries := 0 // failed sends of the datagram at w.start
	for w.start = 0; w.start < w.n; {
		if err := w.rc.Write(w.sendFn); err != nil {
			w.failRest(err)
			break
		}
		switch {
		case w.errno == 0:
			w.start += w.sent
			tries = 0
		case w.errno == syscall.EINTR:
		default:
			if tries++; retryAsync(w.errno, tries) {
				continue
			}
			if w.Failed != nil {
				w.Failed(w.dest[w.start], w.errno)
			}
			w.start++
			tries = 0
		}
	}
	w.n = 0
}

// failRest reports the datagrams not sent yet as failed with err (the
// socket is closed).
func (w *Writer) failRest(err error) {
	if w.Failed == nil || errors.Is(err, net.ErrClosed) {
		return
	}
	for i := w.start; i < w.n; i++ {
		w.Failed(w.dest[i], err)
	}
}

// sendmmsg is the rc.Write callback: one sendmmsg(2) call.
func (w *Writer) sendmmsg(fd uintptr) bool {
	r, _, e := syscall.Syscall6(sysSendmmsg, fd, uintptr(unsafe.Pointer(&w.msgs[w.start])), uintptr(w.n-w.start), 0, 0, 0)
	if e == syscall.EAGAIN {
		return false // wait until writable
	}
	w.sent, w.errno = int(r), e
	if e == 0 && r == 0 {
		w.errno = syscall.EIO // cannot happen; never loop on it
	}
	return true
}

// encodeSockaddr writes to as a sockaddr_in, or as a sockaddr_in6 on an
// IPv6 socket (IPv4 addresses mapped), and returns its length.
func encodeSockaddr(sa *syscall.RawSockaddrInet6, to netip.AddrPort, v6 bool) uint32 {
	port := to.Port()
	port = port>>8 | port<<8 // network byte order
	if !v6 {
		sa4 := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
		*sa4 = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Port: port, Addr: to.Addr().Unmap().As4()}
		return syscall.SizeofSockaddrInet4
	}
	*sa = syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Port: port, Addr: to.Addr().As16()}
	return syscall.SizeofSockaddrInet6
}
