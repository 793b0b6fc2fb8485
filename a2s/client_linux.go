package a2s

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"unsafe"
)

// mmsghdr is struct mmsghdr of recvmmsg(2).
type mmsghdr struct {
	hdr syscall.Msghdr
	len uint32
}

// batchReader reads datagrams with recvmmsg(2): under load one system call
// (and one wake-up of the read loop) returns several replies.
type batchReader struct {
	rc    syscall.RawConn
	recv  func(fd uintptr) bool // made once: a closure per call would allocate
	n     int
	errno syscall.Errno
	msgs  []mmsghdr
	iovs  []syscall.Iovec
	names []syscall.RawSockaddrInet6
	bufs  [][]byte
}

// newBatchReader returns a reader of up to batch datagrams per call, each
// up to size bytes (longer ones are truncated), or nil if conn cannot give
// its descriptor.
func newBatchReader(conn *net.UDPConn, size, batch int) *batchReader {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	r := &batchReader{
		rc:    rc,
		msgs:  make([]mmsghdr, batch),
		iovs:  make([]syscall.Iovec, batch),
		names: make([]syscall.RawSockaddrInet6, batch),
		bufs:  make([][]byte, batch),
	}
	r.recv = r.recvmmsg
	for i := range r.bufs {
		r.bufs[i] = make([]byte, size)
		r.iovs[i].Base = &r.bufs[i][0]
		r.iovs[i].SetLen(size)
		r.msgs[i].hdr.Iov = &r.iovs[i]
		r.msgs[i].hdr.Iovlen = 1
		r.msgs[i].hdr.Name = (*byte)(unsafe.Pointer(&r.names[i]))
	}
	return r
}

// run reads until the socket fails, handing every datagram to fn, and
// calling end (if not nil) after each batch.
func (r *batchReader) run(fn func(from netip.AddrPort, b []byte), end func()) error {
	for {
		if err := r.rc.Read(r.recv); err != nil {
			return err
		}
		if r.errno != 0 {
			return r.errno
		}
		for i := range r.n {
			fn(sockaddrToAddrPort(&r.names[i]), r.bufs[i][:r.msgs[i].len])
		}
		if end != nil {
			end()
		}
	}
}

// recvmmsg is the rc.Read callback: one recvmmsg(2) call.
func (r *batchReader) recvmmsg(fd uintptr) bool {
	for i := range r.msgs {
		r.msgs[i].hdr.Namelen = syscall.SizeofSockaddrInet6
		r.msgs[i].hdr.Flags = 0
	}
	got, _, e := syscall.Syscall6(syscall.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&r.msgs[0])), uintptr(len(r.msgs)), 0, 0, 0)
	if e == syscall.EAGAIN || e == syscall.EINTR {
		return false // wait until readable
	}
	r.n, r.errno = int(got), e
	return true
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

// writeBatch is how many datagrams one sendmmsg(2) call may carry.
const writeBatch = 32

// maxBatchedRequest bounds the requests the batch writer copies; longer
// ones (padded requests) are written directly.
const maxBatchedRequest = 64

// batchWriter sends requests with sendmmsg(2), combining the requests of
// concurrent queries: the goroutine that finds the writer idle sends what
// is queued, including what others queue meanwhile, and the others return
// at once. The read loop holds the writer while it handles a batch of
// replies (hold, then flush), so that the requests it resends and those
// of the queries it wakes go out together. A send error is returned to the
// goroutine that did the sending when its first datagram failed, and
// reported for every datagram to failed, if set.
type batchWriter struct {
	rc     syscall.RawConn
	v6     bool                               // the socket is AF_INET6
	failed func(to netip.AddrPort, err error) // called for each datagram not sent

	mu    sync.Mutex
	queue []outDatagram
	spare []outDatagram
	busy  bool

	// used by the sending goroutine only
	sendFn func(fd uintptr) bool // made once: a closure per call would allocate
	count  int                   // datagrams in msgs
	sent   int
	errno  syscall.Errno
	msgs   [writeBatch]mmsghdr
	iovs   [writeBatch]syscall.Iovec
	names  [writeBatch]syscall.RawSockaddrInet6
}

type outDatagram struct {
	to netip.AddrPort
	n  int
	b  [maxBatchedRequest]byte
}

func newBatchWriter(conn *net.UDPConn) *batchWriter {
	if sysSendmmsg == 0 {
		return nil
	}
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil
	}
	w := &batchWriter{rc: rc}
	w.sendFn = w.sendmmsg
	var serr error
	if err := rc.Control(func(fd uintptr) {
		var sa syscall.Sockaddr
		sa, serr = syscall.Getsockname(int(fd))
		_, w.v6 = sa.(*syscall.SockaddrInet6)
	}); err != nil || serr != nil {
		return nil
	}
	for i := range w.msgs {
		w.msgs[i].hdr.Iov = &w.iovs[i]
		w.msgs[i].hdr.Iovlen = 1
		w.msgs[i].hdr.Name = (*byte)(unsafe.Pointer(&w.names[i]))
	}
	return w
}

// write queues b for to and, unless another goroutine is sending or holds
// the writer (see hold), sends the queue.
func (w *batchWriter) write(b []byte, to netip.AddrPort) error {
	if !w.batched(b, to) {
		return errNotBatched
	}
	w.mu.Lock()
	w.push(b, to)
	if w.busy {
		w.mu.Unlock()
		return nil
	}
	w.busy = true // the queue was empty: b is its first datagram
	return w.sendQueue()
}

// hold queues b for to without sending it. When the writer was idle, the
// caller now holds it and must call flush (held is true); otherwise the
// goroutine that is sending sends b too.
func (w *batchWriter) hold(b []byte, to netip.AddrPort) (held bool, err error) {
	if !w.batched(b, to) {
		return false, errNotBatched
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.push(b, to)
	if w.busy {
		return false, nil
	}
	w.busy = true
	return true, nil
}

// tryHold holds the writer if it is idle, and reports whether it did.
func (w *batchWriter) tryHold() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.busy {
		return false
	}
	w.busy = true
	return true
}

// flush sends what is queued and releases the writer, which the caller
// holds (see hold).
func (w *batchWriter) flush() error {
	w.mu.Lock()
	return w.sendQueue()
}

// batched reports whether b for to can go through the writer.
func (w *batchWriter) batched(b []byte, to netip.AddrPort) bool {
	return len(b) <= maxBatchedRequest && (w.v6 || to.Addr().Unmap().Is4())
}

// push appends a copy of b for to to the queue. w.mu is held.
func (w *batchWriter) push(b []byte, to netip.AddrPort) {
	w.queue = append(w.queue, outDatagram{to: to, n: len(b)})
	copy(w.queue[len(w.queue)-1].b[:], b)
}

// sendQueue sends the queue until it stays empty, then releases the
// writer, and returns the error of the first datagram. w.mu is held and
// w.busy set; it returns with w.mu released.
func (w *batchWriter) sendQueue() error {
	var err error
	for first := true; len(w.queue) > 0; first = false {
		batch := w.queue
		w.queue, w.spare = w.spare[:0], nil
		w.mu.Unlock()
		if e := w.send(batch); first {
			err = e
		}
		w.mu.Lock()
		w.spare = batch[:0]
	}
	w.busy = false
	w.mu.Unlock()
	return err
}

// errNotBatched makes the caller write the datagram itself.
var errNotBatched = errors.New("a2s: datagram not batched")

// send writes batch and returns the error of its first datagram, if any.
func (w *batchWriter) send(batch []outDatagram) error {
	var firstErr error
	for start := 0; start < len(batch); {
		n := min(len(batch)-start, writeBatch)
		for i := range n {
			d := &batch[start+i]
			w.iovs[i].Base = &d.b[0]
			w.iovs[i].SetLen(d.n)
			w.msgs[i].hdr.Namelen = w.sockaddr(&w.names[i], d.to)
		}
		w.count = n
		err := w.rc.Write(w.sendFn)
		sent := w.sent
		if err == nil && w.errno != 0 {
			err = w.errno
		}
		if err != nil || sent == 0 {
			// the datagram at start failed: drop it and go on
			if err == nil {
				err = errNotSent
			}
			if start == 0 {
				firstErr = err
			}
			if w.failed != nil {
				w.failed(batch[start].to, err)
			}
			sent = 1
		}
		start += sent
	}
	return firstErr
}

// errNotSent is the error of a datagram that sendmmsg(2) skipped without
// an error number.
var errNotSent = errors.New("a2s: datagram not sent")

// sendmmsg is the rc.Write callback: one sendmmsg(2) call.
func (w *batchWriter) sendmmsg(fd uintptr) bool {
	r, _, e := syscall.Syscall6(sysSendmmsg, fd, uintptr(unsafe.Pointer(&w.msgs[0])), uintptr(w.count), 0, 0, 0)
	if e == syscall.EAGAIN || e == syscall.EINTR {
		return false
	}
	w.sent, w.errno = int(r), e
	return true
}

// sockaddr fills sa for to in the socket's family and returns its length.
func (w *batchWriter) sockaddr(sa *syscall.RawSockaddrInet6, to netip.AddrPort) uint32 {
	port := to.Port()
	if w.v6 {
		*sa = syscall.RawSockaddrInet6{Family: syscall.AF_INET6, Port: port>>8 | port<<8, Addr: to.Addr().As16()}
		return syscall.SizeofSockaddrInet6
	}
	sa4 := (*syscall.RawSockaddrInet4)(unsafe.Pointer(sa))
	*sa4 = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Port: port>>8 | port<<8, Addr: to.Addr().Unmap().As4()}
	return syscall.SizeofSockaddrInet4
}
