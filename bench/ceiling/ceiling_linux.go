//go:build linux && (amd64 || arm64)

package main

import (
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/gsq-project/gsq/a2s"
)

const (
	batch   = 64   // datagrams per recvmmsg and per sendmmsg
	bufSize = 2048 // receive room per datagram; only the headers are read
	reqMax  = 32   // room for one request (A2S_INFO with a challenge is 29 bytes)
	tick    = 10 * time.Millisecond
	sockBuf = 4 << 20
)

// The sections still missing from a target.
const (
	bitInfo uint8 = 1 << iota
	bitPlayers
	bitRules
	bitAll = bitInfo | bitPlayers | bitRules
)

// mmsghdr is struct mmsghdr of <sys/socket.h> on 64-bit Linux.
type mmsghdr struct {
	hdr syscall.Msghdr
	n   uint32
	_   [4]byte
}

// target is the state of one server.
type target struct {
	challenge    uint32
	hasChallenge bool
	want         uint8  // sections not answered yet
	tries        uint8  // resends so far
	frags        uint64 // rules fragments received, one bit per number
	deadline     time.Duration
	slot         int32 // index in worker.live while in flight
}

// worker queries its share of the targets over one socket.
type worker struct {
	fd       int
	cfg      config
	window   int
	start    time.Time
	addrs    []netip.AddrPort
	st       []target
	index    map[netip.AddrPort]int32
	live     []int32 // targets in flight
	answered int

	n     int // queued requests
	msgs  [batch]mmsghdr
	iovs  [batch]syscall.Iovec
	names [batch]syscall.RawSockaddrInet4
	bufs  [batch][reqMax]byte
}

func scan(targets []netip.AddrPort, cfg config) (int, error) {
	ws := make([]*worker, min(cfg.sockets, len(targets)))
	for i := range ws {
		fd, err := openSocket()
		if err != nil {
			return 0, err
		}
		defer syscall.Close(fd)
		ws[i] = &worker{fd: fd, cfg: cfg, window: max(1, cfg.concurrency/len(ws)), index: map[netip.AddrPort]int32{}}
	}
	for i, t := range targets {
		if !t.Addr().Is4() {
			return 0, fmt.Errorf("%s: IPv4 targets only", t)
		}
		w := ws[i%len(ws)]
		if _, dup := w.index[t]; dup {
			return 0, fmt.Errorf("%s listed twice", t)
		}
		w.index[t] = int32(len(w.addrs))
		w.addrs = append(w.addrs, t)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(ws))
	start := time.Now()
	for i, w := range ws {
		w.start = start
		w.st = make([]target, len(w.addrs))
		wg.Go(func() { errs[i] = w.run() })
	}
	wg.Wait()
	answered := 0
	for _, w := range ws {
		answered += w.answered
	}
	return answered, errors.Join(errs...)
}

// openSocket opens a blocking UDP socket whose reads give up after a tick,
// so that deadlines are checked even when nothing arrives.
func openSocket() (int, error) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	// Best effort: the kernel caps the sizes (net.core.rmem_max).
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_RCVBUF, sockBuf)
	_ = syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_SNDBUF, sockBuf)
	tv := syscall.NsecToTimeval(tick.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("SO_RCVTIMEO: %w", err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{}); err != nil {
		syscall.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

func (w *worker) now() time.Duration { return time.Since(w.start) }

// run queries the worker's targets, at most window at a time.
func (w *worker) run() error {
	var (
		msgs  [batch]mmsghdr
		iovs  [batch]syscall.Iovec
		names [batch]syscall.RawSockaddrInet4
	)
	buf := make([]byte, batch*bufSize)
	for i := range batch {
		iovs[i] = syscall.Iovec{Base: &buf[i*bufSize]}
		iovs[i].SetLen(bufSize)
	}
	w.live = make([]int32, 0, w.window)
	next, nextScan := 0, tick
	for {
		now := w.now()
		for len(w.live) < w.window && next < len(w.addrs) {
			w.launch(int32(next), now)
			next++
		}
		if err := w.flush(); err != nil {
			return err
		}
		if len(w.live) == 0 {
			return nil
		}
		for i := range batch {
			msgs[i] = mmsghdr{hdr: syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&names[i])), Namelen: syscall.SizeofSockaddrInet4, Iov: &iovs[i], Iovlen: 1}}
		}
		r1, _, errno := syscall.Syscall6(sysRecvmmsg, uintptr(w.fd), uintptr(unsafe.Pointer(&msgs[0])), batch, syscall.MSG_WAITFORONE, 0, 0)
		switch errno {
		case 0:
		case syscall.EAGAIN, syscall.EINTR, syscall.ECONNREFUSED:
			r1 = 0
		default:
			return fmt.Errorf("recvmmsg: %w", errno)
		}
		now = w.now()
		for i := range int(r1) {
			sa := &names[i]
			from := netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), sa.Port>>8|sa.Port<<8)
			if t, ok := w.index[from]; ok {
				w.datagram(t, buf[i*bufSize:i*bufSize+min(int(msgs[i].n), bufSize)], now)
			}
		}
		if now >= nextScan {
			w.expire(now)
			nextScan = now + tick
		}
	}
}

// launch starts target t: an A2S_INFO request that earns the challenge.
func (w *worker) launch(t int32, now time.Duration) {
	s := &w.st[t]
	*s = target{want: bitAll, slot: int32(len(w.live))}
	w.live = append(w.live, t)
	w.ask(t, now)
}

// ask sends the requests target t still needs: A2S_INFO alone until the
// challenge is known, then every missing section at once with it.
func (w *worker) ask(t int32, now time.Duration) {
	s := &w.st[t]
	s.deadline = now + w.cfg.timeout
	if !s.hasChallenge && s.want&bitInfo != 0 {
		w.queue(t, a2s.Request{Type: a2s.TypeInfoRequest})
		return
	}
	for bit, typ := range [...]byte{a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest} {
		if s.want&(1<<bit) != 0 {
			w.queue(t, a2s.Request{Type: typ, Challenge: s.challenge, HasChallenge: s.hasChallenge})
		}
	}
}

// datagram digests one datagram of target t: its type, and a split
// fragment's number (this client takes every split reply for the rules).
func (w *worker) datagram(t int32, b []byte, now time.Duration) {
	s := &w.st[t]
	if s.want == 0 || len(b) < 5 {
		return
	}
	switch {
	case b[0] == 0xFE && b[1] == 0xFF && b[2] == 0xFF && b[3] == 0xFF: // split: id, total, number
		if len(b) < 10 || b[9] >= 64 {
			return
		}
		s.frags |= 1 << b[9]
		if bits.OnesCount64(s.frags) == int(b[8]) {
			w.got(t, bitRules)
		}
		return
	case b[0] != 0xFF || b[1] != 0xFF || b[2] != 0xFF || b[3] != 0xFF:
		return
	}
	switch b[4] {
	case a2s.TypeChallengeReply:
		if len(b) < 9 {
			return
		}
		c := uint32(b[5]) | uint32(b[6])<<8 | uint32(b[7])<<16 | uint32(b[8])<<24
		if s.hasChallenge && c == s.challenge {
			return // a copy of the challenge in use
		}
		s.challenge, s.hasChallenge = c, true
		w.ask(t, now)
	case a2s.TypeInfoReply, a2s.TypeInfoReplyGoldSource:
		first := !s.hasChallenge && s.want&bitInfo != 0
		w.got(t, bitInfo)
		if first && s.want != 0 {
			w.ask(t, now) // a server without challenges: ask for the rest
		}
	case a2s.TypePlayerReply:
		w.got(t, bitPlayers)
	case a2s.TypeRulesReply:
		w.got(t, bitRules)
	}
}

// got records a section of target t, and ends the target once it has all.
func (w *worker) got(t int32, bit uint8) {
	s := &w.st[t]
	if s.want&bit == 0 {
		return
	}
	if s.want &^= bit; s.want == 0 {
		w.answered++
		w.drop(t)
	}
}

// drop takes target t out of flight.
func (w *worker) drop(t int32) {
	s := &w.st[t]
	last := w.live[len(w.live)-1]
	w.live[s.slot] = last
	w.st[last].slot = s.slot
	w.live = w.live[:len(w.live)-1]
	s.want = 0
}

// expire resends the requests of targets past their deadline, and gives
// up on those out of retries.
func (w *worker) expire(now time.Duration) {
	for i := 0; i < len(w.live); {
		t := w.live[i]
		s := &w.st[t]
		if now < s.deadline {
			i++
			continue
		}
		if int(s.tries) >= w.cfg.retries {
			w.drop(t) // the last target moved into slot i
			continue
		}
		s.tries++
		w.ask(t, now)
		i++
	}
}

// queue adds a request to target t to the send batch.
func (w *worker) queue(t int32, req a2s.Request) {
	if w.n == batch {
		_ = w.flush() // a failure comes back on the next flush
	}
	i := w.n
	b, err := req.AppendBinary(w.bufs[i][:0])
	if err != nil {
		panic(err) // known types, no padding
	}
	w.iovs[i] = syscall.Iovec{Base: &w.bufs[i][0]}
	w.iovs[i].SetLen(len(b))
	to := w.addrs[t]
	port := to.Port()
	w.names[i] = syscall.RawSockaddrInet4{Family: syscall.AF_INET, Port: port>>8 | port<<8, Addr: to.Addr().As4()}
	w.msgs[i].hdr = syscall.Msghdr{Name: (*byte)(unsafe.Pointer(&w.names[i])), Namelen: syscall.SizeofSockaddrInet4, Iov: &w.iovs[i], Iovlen: 1}
	w.n++
}

// flush sends the queued requests. A datagram the kernel refuses is
// skipped: its target's deadline resends it.
func (w *worker) flush() error {
	for done := 0; done < w.n; {
		r1, _, errno := syscall.Syscall6(sysSendmmsg, uintptr(w.fd), uintptr(unsafe.Pointer(&w.msgs[done])), uintptr(w.n-done), 0, 0, 0)
		switch errno {
		case 0:
			done += int(r1)
		case syscall.EINTR:
		case syscall.EBADF, syscall.ENOTSOCK:
			return fmt.Errorf("sendmmsg: %w", errno)
		default:
			done++
		}
	}
	w.n = 0
	return nil
}

// cpuTime is the user+system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
