package scan

import (
	"cmp"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/internal/udpclient"
	"github.com/gsq-project/gsq/protocol"
)

// Socket I/O: each transport's read loop takes up to recvBatch datagrams
// per read (recvmmsg on Linux), and the requests its flights send in
// response go out together (sendmmsg) once the batch is digested.
const (
	recvBatch  = 32 // datagrams per read
	feedBuffer = 16 // targets taken ahead of the dispatcher
)

// maxUnemitted is how many outcomes may wait for emit before new targets
// wait.
const maxUnemitted = 64

// engine is a Scanner's sockets and what the scans that run on them share:
// the flights in the air, the politeness bookkeeping, the challenges and
// round-trip estimates learned.
type engine struct {
	query    protocol.Query // the Scanner's, for targets with none
	retries  int            // resends per request; negative: none
	deadline time.Duration  // per server; negative: none
	debug    func(dir string, addr netip.AddrPort, b []byte)
	interval time.Duration
	maxPerIP int
	slots    int           // Concurrency
	conns    chan struct{} // one per TCP or HTTP query in flight
	resolver *net.Resolver
	pacer    *pacer // nil when sends are not paced
	rtt      rttEstimator
	socks    []*socket // all of them
	socks4   []*socket
	sock6    *socket // nil without IPv6

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
	chals   map[string]*udpclient.Challenges // by protocol; nil: no cache
	chalMax int

	closeOnce sync.Once
}

// socket is one shared UDP transport and the flights of its servers,
// keyed by address. A server always goes to the same socket, so that a
// second target naming it waits for the first.
type socket struct {
	t      *udpclient.Transport
	behind bool // the read loop's last read filled its batch

	mu      sync.Mutex
	flights map[netip.AddrPort]*flight
	waiting map[netip.AddrPort][]*flight // targets naming a server in flight
}

func (s *Scanner) open(cache bool) (*engine, error) {
	e := &engine{
		query:    s.Query,
		interval: s.HostInterval,
		maxPerIP: s.MaxPerIP,
		slots:    cmp.Or(max(s.Concurrency, 0), DefaultConcurrency),
		conns:    make(chan struct{}, cmp.Or(max(s.Connections, 0), DefaultConnections)),
		resolver: cmp.Or(s.Resolver, net.DefaultResolver),
		debug:    s.Debug,
		perIP:    map[netip.Addr]int{},
		ipWait:   map[netip.Addr][]*flight{},
		recent:   map[netip.AddrPort]time.Time{},
		caughtUp: make(chan struct{}),
	}
	if e.query == nil {
		q, err := protocol.Default.Prepare(protocol.Settings{})
		if err != nil {
			return nil, fmt.Errorf("scan: %w", err)
		}
		e.query = q
	}
	e.retries = s.Retries
	switch {
	case e.retries == 0:
		e.retries = DefaultRetries
	case e.retries < 0:
		e.retries = -1
	}
	rate := cmp.Or(s.Rate, DefaultRate)
	if rate > 0 {
		burst := s.Burst
		if burst <= 0 {
			burst = rate / 100
		}
		e.pacer = newPacer(rate, burst)
	}
	e.rtt.max = cmp.Or(max(s.Timeout, 0), DefaultTimeout)
	e.rtt.min = min(cmp.Or(max(s.MinTimeout, 0), DefaultMinTimeout), e.rtt.max)
	e.rtt.initial = min(e.rtt.max, max(e.rtt.min, 250*time.Millisecond))
	if cache && s.ChallengeCache >= 0 {
		e.chals = map[string]*udpclient.Challenges{}
		e.chalMax = cmp.Or(max(s.ChallengeCache, 0), DefaultChallengeCache)
	}
	e.deadline = cmp.Or(s.Deadline, DefaultDeadline)

	// IPv4 sockets for IPv4 servers (cheaper than v4-mapped addresses on
	// a dual-stack socket), and one IPv6 socket, if the host has IPv6.
	bufSize := cmp.Or(max(s.SocketBuffer, 0), DefaultSocketBuffer)
	for i := range cmp.Or(max(s.Sockets, 0), DefaultSockets) + 1 {
		network := "udp4"
		if i == 0 {
			network = "udp6"
		}
		sk := &socket{flights: map[netip.AddrPort]*flight{}, waiting: map[netip.AddrPort][]*flight{}}
		t, err := udpclient.Open(udpclient.Config{
			Network: network, ReadBuffer: bufSize, WriteBuffer: bufSize, ReadBatch: recvBatch,
			Name: "scan", Debug: s.Debug, Backlog: func(behind bool) { e.setBehind(sk, behind) },
		})
		if err != nil {
			if i == 0 {
				continue // no IPv6: IPv6 servers fail with errNoIPv6
			}
			e.close()
			return nil, err
		}
		sk.t = t
		e.socks = append(e.socks, sk)
		if i == 0 {
			e.sock6 = sk
		} else {
			e.socks4 = append(e.socks4, sk)
		}
	}
	return e, nil
}

// close closes the sockets and waits for their read loops.
func (e *engine) close() error {
	e.closeOnce.Do(func() {
		for _, sk := range e.socks {
			sk.t.Close()
		}
	})
	return nil
}

// stray is how many datagrams the sockets received from no server in
// flight.
func (e *engine) stray() int64 {
	var n int64
	for _, sk := range e.socks {
		n += sk.t.Stray()
	}
	return n
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

// setBehind records whether sk's read loop is behind: its last read
// filled the batch. Only sk's read loop calls it.
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

// challenges returns the challenge cache of the protocol named name, nil
// when the engine keeps none.
func (e *engine) challenges(name string) *udpclient.Challenges {
	if e.chals == nil {
		return nil
	}
	e.chalMu.Lock()
	defer e.chalMu.Unlock()
	c := e.chals[name]
	if c == nil {
		c = udpclient.NewChallenges(e.chalMax)
		e.chals[name] = c
	}
	return c
}
