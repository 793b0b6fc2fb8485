package scan

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/udpio"
)

// Socket I/O: each socket's reader takes up to recvBatch datagrams per
// read (recvmmsg on Linux), and the requests its flights send in response
// go out together (sendmmsg) once the batch is digested.
const (
	recvBatch  = 32      // datagrams per read
	sendBatch  = 64      // requests per sendmmsg
	sendBytes  = 64      // room for one batched request (A2S requests are 9 to 29 bytes)
	maxDgram   = 1 << 16 // a whole UDP datagram
	feedBuffer = 16      // targets taken ahead of the dispatcher
)

// maxUnemitted is how many results may wait for emit before new targets
// wait.
const maxUnemitted = 64

// engine is a Scanner's sockets and what the scans that run on them share:
// the flights in the air, the politeness bookkeeping, the challenges and
// round-trip estimates learned.
type engine struct {
	proto    Protocol
	query    a2s.Query     // the template of every A2S conversation
	deadline time.Duration // per server; negative: none
	debug    func(dir string, addr netip.AddrPort, b []byte)
	interval time.Duration
	maxPerIP int
	slots    int // Concurrency
	resolver *net.Resolver
	pacer    *pacer // nil when sends are not paced
	rtt      rttEstimator
	socks    []*socket // all of them
	socks4   []*socket
	sock6    *socket         // nil without IPv6
	blocking blockingSession // the client of a blocking protocol (OGP)

	// New targets wait while the scan is behind: a socket's last read
	// filled its batch (behind counts those sockets). Starting more would
	// only lengthen the queues, whose replies go cold in the caches, or
	// overflow the socket buffers.
	behind   atomic.Int32
	behindMu sync.Mutex
	caughtUp chan struct{} // closed, and replaced, when no socket is behind

	mu      sync.Mutex // the politeness bookkeeping
	perIP   map[netip.Addr]int
	ipWait  map[netip.Addr][]*flight
	recent  map[netip.AddrPort]time.Time // HostInterval: when finished servers may next be sent to
	sweepAt int                          // size of recent that triggers a sweep

	chalMu  sync.Mutex
	chals   map[netip.AddrPort]uint32 // nil: no cache
	chalMax int

	stray     atomic.Int64
	closeOnce sync.Once
}

// socket is one shared UDP socket and the flights whose replies it
// receives, keyed by server address. A server always goes to the same
// socket, so that a second target naming it waits for the first.
type socket struct {
	conn   *net.UDPConn
	reader *udpio.Reader
	out    *udpio.Writer // the reader's sends
	failed []sendFailure // what out could not send, for the reader to handle
	done   chan struct{} // closed when the reader has returned
	behind bool          // the reader's last read filled its batch

	mu      sync.Mutex
	flights map[netip.AddrPort]*flight
	waiting map[netip.AddrPort][]*flight // targets naming a server in flight
}

// sendFailure is a datagram the kernel refused.
type sendFailure struct {
	to  netip.AddrPort
	err error
}

func (s *Scanner) open(cache bool) (*engine, error) {
	e := &engine{
		proto:    s.Protocol,
		interval: s.HostInterval,
		maxPerIP: s.MaxPerIP,
		slots:    orDefault(s.Concurrency, DefaultConcurrency),
		resolver: s.Resolver,
		debug:    s.Debug,
		perIP:    map[netip.Addr]int{},
		ipWait:   map[netip.Addr][]*flight{},
		recent:   map[netip.AddrPort]time.Time{},
		caughtUp: make(chan struct{}),
	}
	if e.proto == nil {
		e.proto = A2S{}
	}
	if e.resolver == nil {
		e.resolver = net.DefaultResolver
	}
	retries := s.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	rate := s.Rate
	if rate == 0 {
		rate = DefaultRate
	}
	if rate > 0 {
		burst := s.Burst
		if burst <= 0 {
			burst = rate / 100
		}
		e.pacer = newPacer(rate, burst)
	}
	e.rtt.max = orDefault(s.Timeout, DefaultTimeout)
	e.rtt.min = min(orDefault(s.MinTimeout, DefaultMinTimeout), e.rtt.max)
	e.rtt.initial = min(e.rtt.max, max(e.rtt.min, 250*time.Millisecond))
	if cache && s.ChallengeCache >= 0 {
		e.chals = map[netip.AddrPort]uint32{}
		e.chalMax = orDefault(s.ChallengeCache, DefaultChallengeCache)
	}
	e.deadline = s.Deadline
	if e.deadline == 0 {
		e.deadline = DefaultDeadline
	}
	if p, ok := e.proto.(A2S); ok {
		e.query = p.query(retries, e.deadline, e.interval > 0)
	}

	// IPv4 sockets for IPv4 servers (cheaper than v4-mapped addresses on
	// a dual-stack socket), and one IPv6 socket, if the host has IPv6.
	bufSize := orDefault(s.SocketBuffer, DefaultSocketBuffer)
	for i := range orDefault(s.Sockets, DefaultSockets) + 1 {
		network := "udp4"
		if i == 0 {
			network = "udp6"
		}
		conn, err := net.ListenUDP(network, nil)
		if err != nil {
			if i == 0 {
				continue // no IPv6: IPv6 servers fail with errNoIPv6
			}
			e.close()
			return nil, fmt.Errorf("scan: %w", err)
		}
		// Best effort: the kernel caps the size, and a smaller buffer
		// only means more loss under load.
		_ = conn.SetReadBuffer(bufSize)
		_ = conn.SetWriteBuffer(bufSize)
		sk := &socket{
			conn:    conn,
			reader:  udpio.NewReader(conn, maxDgram, recvBatch),
			out:     udpio.NewWriter(conn, sendBatch, sendBytes),
			done:    make(chan struct{}),
			flights: map[netip.AddrPort]*flight{},
			waiting: map[netip.AddrPort][]*flight{},
		}
		sk.reader.EnableReports() // a closed port is known after one datagram (Linux)
		sk.reader.Idle = func() { e.setBehind(sk, false) }
		if sk.out != nil {
			sk.out.Failed = func(to netip.AddrPort, err error) { sk.failed = append(sk.failed, sendFailure{to, err}) }
		}
		e.socks = append(e.socks, sk)
		if i == 0 {
			e.sock6 = sk
		} else {
			e.socks4 = append(e.socks4, sk)
		}
	}
	for _, sk := range e.socks {
		go e.read(sk)
	}
	if bp, ok := e.proto.(blockingProtocol); ok {
		e.blocking = bp.session(e.rtt.max, retries, bufSize, s.Debug)
	}
	return e, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// close closes the sockets and waits for their readers.
func (e *engine) close() error {
	e.closeOnce.Do(func() {
		for _, sk := range e.socks {
			sk.conn.Close()
		}
		for _, sk := range e.socks {
			<-sk.done
		}
		if e.blocking != nil {
			e.blocking.close()
		}
	})
	return nil
}

// socketFor is the socket of the server at addr.
func (e *engine) socketFor(addr netip.AddrPort) *socket {
	ip := addr.Addr()
	if !ip.Is4() {
		return e.sock6
	}
	a := ip.As4()
	h := (uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])) ^ uint32(addr.Port())*0x9E3779B1
	return e.socks4[(h>>16)%uint32(len(e.socks4))]
}

// setBehind records whether sk's reader is behind: its last read filled
// the batch. Only sk's reader calls it.
func (e *engine) setBehind(sk *socket, behind bool) {
	if sk.behind == behind {
		return
	}
	sk.behind = behind
	if behind {
		e.behind.Add(1)
		return
	}
	if e.behind.Add(-1) == 0 {
		e.behindMu.Lock()
		close(e.caughtUp)
		e.caughtUp = make(chan struct{})
		e.behindMu.Unlock()
	}
}

// caughtUpChan is closed when no socket is behind any more.
func (e *engine) caughtUpChan() <-chan struct{} {
	e.behindMu.Lock()
	defer e.behindMu.Unlock()
	return e.caughtUp
}

// challenge returns the challenge kept for addr.
func (e *engine) challenge(addr netip.AddrPort) (uint32, bool) {
	if e.chals == nil {
		return 0, false
	}
	e.chalMu.Lock()
	defer e.chalMu.Unlock()
	c, ok := e.chals[addr]
	return c, ok
}

// keepChallenge remembers addr's challenge for the next scan.
func (e *engine) keepChallenge(addr netip.AddrPort, c uint32) {
	if e.chals == nil {
		return
	}
	e.chalMu.Lock()
	defer e.chalMu.Unlock()
	if _, ok := e.chals[addr]; !ok && len(e.chals) >= e.chalMax {
		for k := range e.chals { // evict an arbitrary entry
			delete(e.chals, k)
			break
		}
	}
	e.chals[addr] = c
}

// read receives the socket's datagrams, a batch at a time, and hands each
// to its flight, and the ICMP errors the socket reports.
func (e *engine) read(sk *socket) {
	defer close(sk.done)
	defer sk.reader.Close()
	for failures := 0; ; {
		n, err := sk.reader.Read()
		if err != nil {
			e.setBehind(sk, false)
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if failures++; failures >= maxReadErrors {
				return // the flights of this socket end by their timers
			}
			continue
		}
		failures = 0
		e.setBehind(sk, n == recvBatch)
		now := time.Now()
		for _, rep := range sk.reader.Reports() {
			if f := sk.lookup(rep.Addr); f != nil {
				f.unreachable(rep.Err)
			}
		}
		for i := range n {
			from, b := sk.reader.Datagram(i)
			if e.debug != nil {
				e.debug("recv", from, b)
			}
			f := sk.lookup(from)
			if f == nil {
				e.stray.Add(1)
				continue
			}
			f.handle(b, now, sk.out)
		}
		sk.out.Flush()
		sk.failed = failFlights(sk, sk.failed)
	}
}

// maxReadErrors is how many read errors in a row (other than a closed
// socket) end a socket's reader.
const maxReadErrors = 16

// lookup returns the flight of the server at addr.
func (sk *socket) lookup(addr netip.AddrPort) *flight {
	sk.mu.Lock()
	f := sk.flights[addr]
	sk.mu.Unlock()
	return f
}

// failFlights ends the flights whose datagrams the kernel refused, and
// returns the emptied list.
func failFlights(sk *socket, failed []sendFailure) []sendFailure {
	for _, sf := range failed {
		if f := sk.lookup(sf.to); f != nil {
			f.sendFailed(sf.err)
		}
	}
	return failed[:0]
}
