//go:build linux && (amd64 || arm64)

package sim

import (
	"errors"
	"net/netip"
	"runtime"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// On Linux the fleet's sockets are served by one epoll loop per CPU that
// reads and writes with raw system calls, rather than by a goroutine per
// socket: with thousands of sockets each seeing a few datagrams, the
// goroutine wake-ups cost as much as the system calls themselves
// (bench/scan/scan.sh E measures both against an epoll reference). The
// sockets are made with raw system calls too, so Go's poller is not woken
// by their traffic.

// fleetSocket is a server's non-blocking socket.
type fleetSocket struct {
	fd   int
	sent atomic.Int64
}

// epollLoop serves a share of the fleet's sockets.
type epollLoop struct {
	ep       int
	srvs     map[int32]*fleetServer
	wake     int32 // the read end of the fleet's wake pipe
	answerer *answerer
}

func (s *fleetServer) listen() error {
	s.sock.fd = -1
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

func (s *fleetSocket) close() {
	if s.fd >= 0 {
		syscall.Close(s.fd)
		s.fd = -1
	}
}

// WriteToUDPAddrPort sends b with a raw sendto. The socket is
// non-blocking: a full send buffer drops the datagram, as a network would.
func (s *fleetSocket) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	sa := syscall.RawSockaddrInet4{Family: syscall.AF_INET, Addr: to.Addr().Unmap().As4()}
	sa.Port = to.Port()>>8 | to.Port()<<8 // network byte order
	s.sent.Add(1)                         // before the datagram can be answered
	_, _, errno := syscall.Syscall6(syscall.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), 0,
		uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
	if errno != 0 {
		s.sent.Add(-1)
		return 0, errno
	}
	return len(b), nil
}

func (f *Fleet) start() error {
	if err := syscall.Pipe2(f.wake[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		return err
	}
	for range runtime.NumCPU() {
		ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return err
		}
		l := &epollLoop{ep: ep, srvs: map[int32]*fleetServer{}, wake: int32(f.wake[0]), answerer: newAnswerer(f.challenge)}
		f.loops = append(f.loops, l)
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: l.wake}
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, f.wake[0], &ev); err != nil {
			return err
		}
	}
	for i, srv := range f.servers {
		l := f.loops[i%len(f.loops)]
		l.srvs[int32(srv.sock.fd)] = srv
		srv.answerer = l.answerer
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

// halt stops the loops: closing the pipe's write end makes its read end
// readable (hung up) in every epoll set at once.
func (f *Fleet) halt() {
	if f.wake[1] >= 0 {
		syscall.Close(f.wake[1])
	}
	f.wg.Wait()
	for _, l := range f.loops {
		syscall.Close(l.ep)
	}
	if f.wake[0] >= 0 {
		syscall.Close(f.wake[0])
	}
}

// run waits for readable sockets and drains each one, until woken.
func (l *epollLoop) run() {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	events := make([]syscall.EpollEvent, 256)
	var buf [2048]byte
	var from syscall.RawSockaddrInet4
	for {
		n, err := syscall.EpollWait(l.ep, events, -1)
		if err != nil && err != syscall.EINTR {
			return
		}
		for _, ev := range events[:max(n, 0)] {
			if ev.Fd == l.wake {
				return
			}
			srv := l.srvs[ev.Fd]
			for {
				size := uint32(unsafe.Sizeof(from))
				m, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(srv.sock.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
					0, uintptr(unsafe.Pointer(&from)), uintptr(unsafe.Pointer(&size)))
				if errno != 0 {
					break // EAGAIN: drained
				}
				port := from.Port>>8 | from.Port<<8 // network byte order
				srv.answer(buf[:m], netip.AddrPortFrom(netip.AddrFrom4(from.Addr), port))
			}
		}
	}
}
