//go:build linux && (amd64 || arm64)

// Command responder is the yardstick of bench/scan/scan.sh for the
// simulated fleet: N A2S responders on 127.0.0.1 ports P..P+N-1 serving
// the same content as sim.FleetContent, built two other ways:
//
//   - -mode raw: an efficient epoll responder: raw non-blocking sockets,
//     one epoll loop per CPU, recvfrom/sendto without allocation, replies
//     serialized once, a fixed challenge per server;
//   - -mode a2s: one a2s.Server (HandlePacket path, StaticHandler, rate
//     limit off) per port.
//
// gsq serve --fleet (sim.RunFleet) is measured against them by the CPU
// time each spends answering the same scan. The process serves until
// killed and prints "ready" on stderr once every port is bound.
package main

import (
	"flag"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"unsafe"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/sim"
)

func main() {
	mode := flag.String("mode", "raw", "raw (epoll) or a2s (a2s.Server per port)")
	n := flag.Int("n", 10000, "servers")
	base := flag.Int("base-port", 30000, "first port")
	flag.Parse()
	var err error
	switch *mode {
	case "raw":
		err = serveRaw(*n, *base)
	case "a2s":
		err = serveA2S(*n, *base)
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "responder:", err)
		os.Exit(1)
	}
}

func waitSignal() {
	fmt.Fprintln(os.Stderr, "ready")
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	<-ch
}

// replies are one server's serialized answers.
type replies struct {
	challenge uint32
	chal      []byte
	info      []byte
	players   []byte
	rules     [][]byte
}

func build(i, port int) (*replies, error) {
	c := sim.FleetContent(i)
	info, players, rules := c.A2S(uint16(port))
	r := &replies{challenge: uint32(0x5EED0000 + i)}
	r.chal = a2s.AppendChallenge(nil, r.challenge)
	var err error
	if r.info, err = info.AppendBinary(nil); err != nil {
		return nil, err
	}
	if r.players, err = players.AppendBinary(nil); err != nil {
		return nil, err
	}
	payload, err := rules.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	r.rules, err = a2s.SplitWriter{}.AppendFragments(nil, uint32(i)|1, payload)
	return r, err
}

func serveA2S(n, base int) error {
	for i := range n {
		port := base + i
		c := sim.FleetContent(i)
		info, players, rules := c.A2S(uint16(port))
		h, err := a2s.NewStaticHandler(info, players, rules)
		if err != nil {
			return err
		}
		pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port))))
		if err != nil {
			return err
		}
		srv := &a2s.Server{Handler: h, RateLimit: -1, ChallengeSecret: []byte("bench")}
		go srv.Serve(pc)
	}
	waitSignal()
	return nil
}

// serveRaw is the epoll reference.
func serveRaw(n, base int) error {
	workers := runtime.NumCPU()
	eps := make([]int, workers)
	for w := range eps {
		ep, err := syscall.EpollCreate1(0)
		if err != nil {
			return err
		}
		eps[w] = ep
	}
	byFD := map[int32]*replies{}
	for i := range n {
		r, err := build(i, base+i)
		if err != nil {
			return err
		}
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_NONBLOCK, 0)
		if err != nil {
			return err
		}
		if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: base + i, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			return fmt.Errorf("bind port %d: %w", base+i, err)
		}
		byFD[int32(fd)] = r
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}
		if err := syscall.EpollCtl(eps[i%workers], syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
			return err
		}
	}
	for _, ep := range eps {
		go loop(ep, byFD)
	}
	waitSignal()
	return nil
}

func loop(ep int, byFD map[int32]*replies) {
	runtime.LockOSThread()
	events := make([]syscall.EpollEvent, 256)
	buf := make([]byte, 2048)
	var from syscall.RawSockaddrInet4
	for {
		k, err := syscall.EpollWait(ep, events, -1)
		if err != nil {
			continue // EINTR
		}
		for _, ev := range events[:k] {
			r := byFD[ev.Fd]
			for {
				fromLen := uint32(unsafe.Sizeof(from))
				m, _, errno := syscall.Syscall6(syscall.SYS_RECVFROM, uintptr(ev.Fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)),
					0, uintptr(unsafe.Pointer(&from)), uintptr(unsafe.Pointer(&fromLen)))
				if errno != 0 {
					break // EAGAIN: drained
				}
				answer(int(ev.Fd), r, buf[:m], &from)
			}
		}
	}
}

func answer(fd int, r *replies, b []byte, to *syscall.RawSockaddrInet4) {
	if len(b) < 5 || b[0] != 0xFF || b[1] != 0xFF || b[2] != 0xFF || b[3] != 0xFF {
		return
	}
	var chal []byte
	switch b[4] {
	case 'T':
		if len(b) >= 29 {
			chal = b[25:29]
		}
	case 'U', 'V':
		if len(b) >= 9 {
			chal = b[5:9]
		}
	default:
		return
	}
	if chal == nil || uint32(chal[0])|uint32(chal[1])<<8|uint32(chal[2])<<16|uint32(chal[3])<<24 != r.challenge {
		send(fd, r.chal, to)
		return
	}
	switch b[4] {
	case 'T':
		send(fd, r.info, to)
	case 'U':
		send(fd, r.players, to)
	case 'V':
		for _, f := range r.rules {
			send(fd, f, to)
		}
	}
}

func send(fd int, b []byte, to *syscall.RawSockaddrInet4) {
	syscall.Syscall6(syscall.SYS_SENDTO, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), 0,
		uintptr(unsafe.Pointer(to)), unsafe.Sizeof(*to))
}
