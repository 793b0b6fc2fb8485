//go:build linux && (amd64 || arm64)

package sim

import (
	"errors"
	"net/netip"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// On Linux the fleet's sockets are served by one epoll loop per CPU that
// reads and writes with raw system calls, rather than by a goroutine per
// socket: with thousands of sockets each seeing a few datagrams, the
// goroutine wake-ups cost as much as the system calls themselves
// (bench/scan/scan.sh measures both against an epoll reference). The
// sockets are made with raw system calls too, so Go's poller is not woken
// by their traffic.

// fleetSocket is a server's non-blocking socket and the loop serving it.
type fleetSocket struct {
	fd   int
	loop *epollLoop
}

// epollLoop serves a share of the fleet's sockets.
type epollLoop struct {
	ep       int
	srvs     map[int32]*fleetServer
	held     []*fleetServer // servers holding a reordered datagram
	heldFrom time.Time      // when the oldest of them was held
	stop     *atomic.Bool
}

func (s *fleetServer) listen() error {
	if !s.addr.Addr().Is4() {
		return errors.New("the fleet listens on IPv4 addresses only")
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: int(s.addr.Port()), Addr: s.addr.Addr().As4()}); err != nil {
		syscall.Close(fd)
		return err
	}
	s.sock.fd = fd
	return nil
}

func (s *fleetServer) close() {
	if s.sock.fd > 0 {
		syscall.Close(s.sock.fd)
		s.sock.fd = -1
	}
}

func (f *Fleet) start() error {
	stop := new(atomic.Bool)
	for range runtime.NumCPU() {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return err
		}
		f.loops = append(f.loops, &epollLoop{ep: ep, srvs: map[int32]*fleetServer{}, stop: stop})
	}
	for i, srv := range f.servers {
		l := f.loops[i%len(f.loops)]
		srv.sock.loop = l
		l.srvs[int32(srv.sock.fd)] = srv
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(srv.sock.fd)}
		if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, srv.sock.fd, &ev); err != nil {
			return err
		}
	}
	for _, l := range f.loops {
		f.wg.Add(1)
		go func() {
			defer f.wg.Done()
			l.run()
		}()
	}
	return nil
}

func (f *Fleet) halt() {
	if len(f.loops) > 0 {
		f.loops[0].stop.Store(true)
	}
	f.wg.Wait() // the loops notice within 100 ms
	for _, l := range f.loops {
		syscall.Close(l.ep)
	}
	f.closeSockets()
}

// run waits for readable sockets and drains each one.
func (l *epollLoop) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := make([]syscall.EpollEvent, 256)
	var buf [2048]byte
	var from syscall.RawSockaddrInet4
	for !l.stop.Load() {
		wait := 100 // ms, to notice stop
		if len(l.held) > 0 {
			wait = 2
		}
		n, err := syscall.EpollWait(l.ep, events, wait)
		if err != nil && err != syscall.EINTR {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			srv := l.srvs[ev.Fd]
			for {
				size := uint32(unsafe.Sizeof(from))
				m, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(srv.sock.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
					0, uintptr(unsafe.Pointer(&from)), uintptr(unsafe.Pointer(&size)))
				if errno != 0 {
					break // EAGAIN: drained
				}
				srv.requests.Add(1)
				port := from.Port>>8 | from.Port<<8 // network byte order
				srv.answer(buf[:m], netip.AddrPortFrom(netip.AddrFrom4(from.Addr), port))
			}
		}
		if len(l.held) > 0 && time.Since(l.heldFrom) >= 2*time.Millisecond {
			for i, srv := range l.held {
				srv.flush() // a no-op if a later send already pushed it out
				l.held[i] = nil
			}
			l.held = l.held[:0]
		}
	}
}

// hold queues s for release by its loop about 2 ms from now, unless its
// next send pushes the held-back datagram out before.
func (s *fleetServer) hold() {
	l := s.sock.loop
	if len(l.held) == 0 {
		l.heldFrom = time.Now()
	}
	l.held = append(l.held, s)
}

// write sends b with a raw sendto. The socket is non-blocking: a full send
// buffer drops the datagram, as a network would.
func (s *fleetServer) write(b []byte, to netip.AddrPort) {
	sa := syscall.RawSockaddrInet4{Family: syscall.AF_INET, Addr: to.Addr().Unmap().As4()}
	sa.Port = to.Port()>>8 | to.Port()<<8
	_, _, errno := syscall.Syscall6(syscall.SYS_SENDTO, uintptr(s.sock.fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0,
		uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	if errno == 0 {
		s.sent.Add(1)
	}
}
