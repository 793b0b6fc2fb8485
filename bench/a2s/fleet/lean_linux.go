//go:build linux && (amd64 || arm64)

package main

import (
	"fmt"
	"net/netip"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/gsq-project/gsq/a2s/a2stest"
)

// leanSocket is one simulated server: a non-blocking UDP socket and the
// a2s.Server that answers it.
type leanSocket struct {
	fd  int
	srv *a2stest.Responder
	sa  syscall.RawSockaddrInet4 // scratch for sendto
}

// WriteToUDPAddrPort sends b with sendto(2) without allocating; a full
// send buffer drops the datagram, as the network would.
func (s *leanSocket) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	port := to.Port()
	s.sa = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Port: port>>8 | port<<8, Addr: to.Addr().Unmap().As4()}
	_, _, e := syscall.Syscall6(syscall.SYS_SENDTO, uintptr(s.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)),
		0, uintptr(unsafe.Pointer(&s.sa)), syscall.SizeofSockaddrInet4)
	if e != 0 {
		return 0, e
	}
	return len(b), nil
}

// startLean opens n sockets on 127.0.0.1 and serves them from one epoll
// loop per core.
func startLean(n int, p a2stest.Profile) ([]netip.AddrPort, error) {
	loops := runtime.GOMAXPROCS(0)
	epfds := make([]int, loops)
	for i := range epfds {
		fd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
		if err != nil {
			return nil, err
		}
		epfds[i] = fd
	}
	var socks []*leanSocket // indexed by descriptor
	addrs := make([]netip.AddrPort, 0, n)
	for i := range n {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			return nil, fmt.Errorf("socket %d: %w", i, err)
		}
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
		sa, err := syscall.Getsockname(fd)
		if err != nil {
			return nil, err
		}
		addrs = append(addrs, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(sa.(*syscall.SockaddrInet4).Port)))
		for len(socks) <= fd {
			socks = append(socks, nil)
		}
		socks[fd] = &leanSocket{fd: fd, srv: p.NewResponder(nil)}
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if err := syscall.EpollCtl(epfds[i%loops], syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return nil, err
		}
	}
	for _, epfd := range epfds {
		go serveLean(epfd, socks)
	}
	return addrs, nil
}

// serveLean answers the sockets of one epoll set: epoll_wait, then one
// recvfrom per ready socket (level-triggered, so a socket with more
// datagrams is reported again).
func serveLean(epfd int, socks []*leanSocket) {
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 4096)
	var from syscall.RawSockaddrInet4
	for {
		n, err := syscall.EpollWait(epfd, events, -1)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			panic(err)
		}
		for _, ev := range events[:n] {
			s := socks[ev.Fd]
			fromLen := uint32(syscall.SizeofSockaddrInet4)
			r, _, e := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(s.fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
				0, uintptr(unsafe.Pointer(&from)), uintptr(unsafe.Pointer(&fromLen)))
			if e != 0 {
				continue // EAGAIN: another loop's wake-up or a spurious one
			}
			port := from.Port>>8 | from.Port<<8
			s.srv.HandlePacket(s, netip.AddrPortFrom(netip.AddrFrom4(from.Addr), port), buf[:r])
		}
	}
}
