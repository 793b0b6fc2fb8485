package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the Scanner's zero value. A target in flight may have all
// its answers on the way at once (about 10 KB of socket buffer for info,
// players and a 3-fragment rules reply): DefaultConcurrency of them fit the
// receive buffers of DefaultSockets sockets of DefaultSocketBuffer bytes,
// so a scan that stalls for a moment loses nothing.
const (
	DefaultConcurrency  = 1000
	DefaultRate         = 20000 // datagrams per second
	DefaultRetries      = 3
	DefaultTimeout      = time.Second
	DefaultMinTimeout   = 200 * time.Millisecond
	DefaultSockets      = 2
	DefaultSocketBuffer = 4 << 20
)

// Protocol is what a Scanner asks each server: [A2S] or [OGP]. The
// interface is closed.
type Protocol interface {
	// DefaultPort is the port of a target line that names none.
	DefaultPort() uint16
	protocol() // closes the interface
}

// drivenProtocol is a protocol whose conversations the engine drives
// datagram by datagram on its shared sockets (A2S).
type drivenProtocol interface {
	// start begins the conversation with a server: the query, and the
	// requests to send first.
	start(addr netip.AddrPort) (query, change)
}

// maxSlots is the number of requests a query may have in the air at once.
const maxSlots = 3

// query is the conversation with one server, driven by the engine. Its
// requests are numbered by slot (0 to maxSlots-1): the engine sends those
// a change asks for, resends them while they go unanswered, and reports
// those that stay unanswered.
type query interface {
	// request appends the request of slot, which is being sent now.
	request(b []byte, slot int, now time.Time) []byte
	// reply digests a datagram from the server.
	reply(b []byte, now time.Time) change
	// expire reports that slot's request went unanswered (err nil) or
	// could not be sent.
	expire(slot int, err error) change
	done() bool // the conversation is over
	status() Status
	fill(r *Result)
}

// change is what an event did to a query's requests, one bit per slot.
type change struct {
	finished uint8 // requests that need no more sending: answered, or failed
	send     uint8 // requests to send now, as new requests (retries start over)
}

// Status classifies a target's outcome.
type Status uint8

// Outcomes of a target.
const (
	StatusAnswered Status = iota // every section asked for came back
	StatusPartial                // some sections came back, others failed
	StatusTimedOut               // nothing came back in time
	StatusFailed                 // a bad target line, an unresolvable name, or bad answers only
)

// String returns "answered", "partial", "timed out" or "failed".
func (s Status) String() string {
	switch s {
	case StatusAnswered:
		return "answered"
	case StatusPartial:
		return "partial"
	case StatusTimedOut:
		return "timed out"
	case StatusFailed:
		return "failed"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Result is the outcome of one target.
type Result struct {
	Target Target
	Addr   netip.AddrPort // the address queried; invalid if none was
	Status Status
	Err    error      // why no query was made: a bad line, a name that did not resolve
	A2S    *A2SResult // the answers, when scanning with A2S and a query was made
	OGP    *OGPResult // the answer, when scanning with OGP and a query was made
}

// Summary counts a scan's outcomes.
type Summary struct {
	Targets  int // target lines read (comments and blank lines excluded)
	Answered int
	Partial  int
	TimedOut int
	Failed   int
	Sent     int64 // datagrams sent, retries included
	Resent   int64 // retries
	Received int64 // datagrams received from targets in flight
	Stray    int64 // datagrams received from nobody in flight
	Elapsed  time.Duration
}

// QueriesPerSecond is the targets completed per second of the scan.
func (s Summary) QueriesPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Targets) / s.Elapsed.Seconds()
}

// errNoIPv6 fails IPv6 servers when the host has no IPv6 socket.
var errNoIPv6 = errors.New("scan: no IPv6 socket on this host")

// Scanner queries lists of servers. Its zero value is ready to use, with
// the defaults above; a Scanner may run several scans at once.
type Scanner struct {
	Protocol    Protocol // A2S{} (info, players, rules) when nil
	Concurrency int      // targets in flight at once
	// Rate bounds the datagrams sent per second, across all sockets; 0
	// means DefaultRate, a negative value leaves sends unpaced.
	Rate int
	// Burst is how many datagrams may go out back to back before pacing
	// applies; 0 means Rate/100 (10 ms worth), at least 1.
	Burst int
	// Retries is how many times an unanswered request is sent again; 0
	// means DefaultRetries, a negative value means never.
	Retries int
	// Timeout caps the wait for an answer to one send; MinTimeout is the
	// floor of the adaptive wait. The first sends wait min(Timeout, 250ms)
	// until round trips have been measured.
	Timeout    time.Duration
	MinTimeout time.Duration
	// HostInterval spaces the datagrams sent to one server (0: none).
	// When set, a server also gets one request at a time, the next one
	// after the answer to the previous one; else the requests that need no
	// answer first go out together.
	HostInterval time.Duration
	// MaxPerIP bounds the servers of one IP address queried at once (0:
	// no bound). Game hosts run many servers on one address, and some
	// drop query bursts from one source address.
	MaxPerIP int
	Sockets  int // UDP sockets shared by all queries
	// SocketBuffer is the SO_RCVBUF and SO_SNDBUF asked for each socket;
	// the kernel caps it (net.core.rmem_max on Linux).
	SocketBuffer int
	// Resolver resolves host names, preferring IPv4; nil means
	// net.DefaultResolver.
	Resolver *net.Resolver
}

// Scan queries every target read from targets (see [TargetReader]) and
// calls emit with each result as soon as it is complete. emit is called
// from one goroutine at a time, in completion order; while it runs, the
// scan goes on. Scan returns when every target is done, or when ctx is
// canceled (then results still in flight are dropped and the error is
// ctx.Err()); the error is also set when reading targets fails.
func (s *Scanner) Scan(ctx context.Context, targets io.Reader, emit func(*Result)) (Summary, error) {
	start := time.Now()
	r, err := s.newRun(ctx, emit)
	if err != nil {
		return Summary{}, err
	}
	// The first requests of the targets dispatched go out in batches, sent
	// whenever the dispatcher might wait: for a free slot, or for input.
	err = r.dispatch(NewTargetReader(readHook{targets, r.flushLaunches}, r.proto.DefaultPort()))
	r.flushLaunches()
	if err == nil {
		all := make(chan struct{})
		go func() {
			r.flights.Wait()
			close(all)
		}()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}
	r.shutdown()
	sum := r.summary()
	sum.Elapsed = time.Since(start)
	if err == nil {
		err = ctx.Err()
	}
	return sum, err
}

// run is one scan in progress.
type run struct {
	ctx      context.Context
	proto    Protocol
	retries  int
	interval time.Duration // HostInterval
	maxPerIP int
	resolver *net.Resolver
	pacer    *pacer
	rtt      rttEstimator
	socks    []*socket // all of them
	socks4   []*socket
	sock6    *socket         // nil without IPv6
	blocking blockingSession // the client of a blocking protocol (OGP)
	next     atomic.Uint32   // round-robin socket choice

	slots   chan struct{} // one per target in flight, released after emit
	flights sync.WaitGroup
	// New targets wait for caughtUp while the scan is behind: a socket's
	// last read filled its batch (behind counts those sockets), or more
	// than maxUnemitted results wait for emit (unemitted). Starting more
	// would only lengthen the queues, whose replies and results go cold in
	// the caches, or overflow the socket buffers.
	behind    atomic.Int32
	unemitted atomic.Int32
	caughtUp  chan struct{}

	mu      sync.Mutex // guards the host bookkeeping
	busy    map[netip.AddrPort]bool
	perIP   map[netip.Addr]int
	waiting map[netip.Addr][]*flight
	recent  map[netip.AddrPort]time.Time // HostInterval: when finished servers may next be sent to
	sweepAt int                          // size of recent that triggers a sweep

	outMu   sync.Mutex
	out     []*Result
	outKick chan struct{}
	emit    func(*Result)
	emitted chan struct{} // closed when the emitter has returned
	stop    chan struct{}

	targets                            int
	answered, partial, timedOut, faild int
	sent, resent, received, stray      atomic.Int64
}

func (s *Scanner) newRun(ctx context.Context, emit func(*Result)) (*run, error) {
	r := &run{
		ctx:      ctx,
		proto:    s.Protocol,
		retries:  s.Retries,
		interval: s.HostInterval,
		maxPerIP: s.MaxPerIP,
		resolver: s.Resolver,
		busy:     map[netip.AddrPort]bool{},
		perIP:    map[netip.Addr]int{},
		waiting:  map[netip.Addr][]*flight{},
		recent:   map[netip.AddrPort]time.Time{},
		outKick:  make(chan struct{}, 1),
		caughtUp: make(chan struct{}, 1),
		emit:     emit,
		emitted:  make(chan struct{}),
		stop:     make(chan struct{}),
	}
	if r.proto == nil {
		r.proto = A2S{}
	}
	switch {
	case r.retries == 0:
		r.retries = DefaultRetries
	case r.retries < 0:
		r.retries = 0
	}
	if r.resolver == nil {
		r.resolver = net.DefaultResolver
	}
	rate := s.Rate
	if rate == 0 {
		rate = DefaultRate
	}
	burst := s.Burst
	if burst <= 0 {
		burst = rate / 100
	}
	r.pacer = newPacer(rate, burst)
	r.rtt.max = orDefault(s.Timeout, DefaultTimeout)
	r.rtt.min = min(orDefault(s.MinTimeout, DefaultMinTimeout), r.rtt.max)
	r.rtt.initial = min(r.rtt.max, max(r.rtt.min, 250*time.Millisecond))
	r.slots = make(chan struct{}, orDefault(s.Concurrency, DefaultConcurrency))

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
			r.closeSockets()
			return nil, fmt.Errorf("scan: %w", err)
		}
		// Best effort: the kernel caps the size, and a smaller buffer
		// only means more loss under load.
		_ = conn.SetReadBuffer(bufSize)
		_ = conn.SetWriteBuffer(bufSize)
		sk := &socket{conn: conn, flights: map[netip.AddrPort]*flight{}, done: make(chan struct{})}
		sk.initBatches()
		r.socks = append(r.socks, sk)
		if i == 0 {
			r.sock6 = sk
		} else {
			r.socks4 = append(r.socks4, sk)
		}
	}
	for _, sk := range r.socks {
		go r.read(sk)
	}
	if bp, ok := r.proto.(blockingProtocol); ok {
		r.blocking = bp.session(r.rtt.max, r.retries, bufSize)
	}
	go r.emitter()
	return r, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// readHook calls before ahead of each Read of r.
type readHook struct {
	r      io.Reader
	before func()
}

func (h readHook) Read(p []byte) (int, error) {
	h.before()
	return h.r.Read(p)
}

// flushLaunches sends the first requests the dispatcher has queued.
func (r *run) flushLaunches() {
	for _, sk := range r.socks {
		sk.launches.flush()
	}
}

// dispatch reads the targets and starts each one when a slot is free.
func (r *run) dispatch(tr *TargetReader) error {
	for {
		for r.behind.Load() > 0 || r.unemitted.Load() > maxUnemitted {
			r.flushLaunches()
			select {
			case <-r.caughtUp:
			case <-r.ctx.Done():
				return r.ctx.Err()
			}
		}
		select {
		case r.slots <- struct{}{}:
		default:
			r.flushLaunches()
			select {
			case r.slots <- struct{}{}:
			case <-r.ctx.Done():
				return r.ctx.Err()
			}
		}
		t, err := tr.Next()
		if err != nil {
			<-r.slots
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("scan: reading targets: %w", err)
		}
		r.targets++
		r.flights.Add(1)
		f := &flight{r: r, res: &Result{Target: t, Addr: t.Addr}}
		switch {
		case t.Err != nil:
			f.res.Status, f.res.Err = StatusFailed, t.Err
			r.deliver(f.res)
		case !t.Addr.IsValid():
			go r.resolve(f)
		default:
			r.admit(f, true)
		}
	}
}

// setBehind records whether sk's reader is behind: its last read filled
// the batch. Only sk's reader calls it.
func (r *run) setBehind(sk *socket, behind bool) {
	if sk.behind == behind {
		return
	}
	sk.behind = behind
	if behind {
		r.behind.Add(1)
		return
	}
	if r.behind.Add(-1) == 0 {
		r.catchUp()
	}
}

// resolve looks a host name up, preferring an IPv4 address as game
// servers rarely listen on IPv6, then admits the flight.
func (r *run) resolve(f *flight) {
	t := f.res.Target
	addrs, err := r.resolver.LookupNetIP(r.ctx, "ip", t.Host)
	if r.ctx.Err() != nil {
		return
	}
	if err == nil && len(addrs) == 0 {
		err = fmt.Errorf("no address for %q", t.Host)
	}
	if err != nil {
		f.res.Status, f.res.Err = StatusFailed, fmt.Errorf("scan: line %d: %w", t.Line, err)
		r.deliver(f.res)
		return
	}
	best := addrs[0]
	for _, a := range addrs {
		if a.Unmap().Is4() {
			best = a
			break
		}
	}
	f.res.Addr = netip.AddrPortFrom(best.Unmap(), t.Port)
	r.admit(f, false)
}

// admit starts f unless its server is already in flight or its IP
// address is at MaxPerIP; then f waits for a flight of that IP to end.
// dispatched is set when the dispatcher calls.
func (r *run) admit(f *flight, dispatched bool) {
	addr := f.res.Addr
	r.mu.Lock()
	if !r.startable(addr) {
		ip := addr.Addr()
		r.waiting[ip] = append(r.waiting[ip], f)
		r.mu.Unlock()
		return
	}
	r.occupy(f)
	r.mu.Unlock()
	f.launch(dispatched)
}

func (r *run) startable(addr netip.AddrPort) bool {
	return !r.busy[addr] && (r.maxPerIP <= 0 || r.perIP[addr.Addr()] < r.maxPerIP)
}

// occupy marks f's server busy; r.mu is held. A flight of a server that
// was queried less than HostInterval ago waits for the rest of it.
func (r *run) occupy(f *flight) {
	addr := f.res.Addr
	r.busy[addr] = true
	if r.maxPerIP > 0 {
		r.perIP[addr.Addr()]++
	}
	if next, ok := r.recent[addr]; ok {
		f.nextSend = next
		delete(r.recent, addr)
	}
}

// release ends a flight's hold on its server and starts the flights of
// the same IP address that can go now. A flight of the same server keeps
// HostInterval after nextSend.
func (r *run) release(addr netip.AddrPort, nextSend time.Time) {
	ip := addr.Addr()
	var ready []*flight
	r.mu.Lock()
	delete(r.busy, addr)
	if r.interval > 0 {
		r.remember(addr, nextSend)
	}
	if r.maxPerIP > 0 {
		if r.perIP[ip]--; r.perIP[ip] <= 0 {
			delete(r.perIP, ip)
		}
	}
	if w := r.waiting[ip]; len(w) > 0 {
		kept := w[:0]
		for _, f := range w {
			if r.startable(f.res.Addr) {
				r.occupy(f)
				ready = append(ready, f)
			} else {
				kept = append(kept, f)
			}
		}
		clear(w[len(kept):])
		if len(kept) == 0 {
			delete(r.waiting, ip)
		} else {
			r.waiting[ip] = kept
		}
	}
	r.mu.Unlock()
	for _, f := range ready {
		f.launch(false)
	}
}

// remember keeps when addr may next be sent to, for a flight of the same
// server that comes later; r.mu is held. Entries that have passed are
// swept whenever the table doubles, so it holds about the servers
// finished within the last HostInterval.
func (r *run) remember(addr netip.AddrPort, next time.Time) {
	r.recent[addr] = next
	if len(r.recent) < r.sweepAt {
		return
	}
	now := time.Now()
	for a, t := range r.recent {
		if t.Before(now) {
			delete(r.recent, a)
		}
	}
	r.sweepAt = max(64, 2*len(r.recent))
}

// maxUnemitted is how many results may wait for emit before new targets
// wait.
const maxUnemitted = 64

// deliver queues a finished result for the emitter.
func (r *run) deliver(res *Result) {
	r.unemitted.Add(1)
	r.outMu.Lock()
	r.out = append(r.out, res)
	r.outMu.Unlock()
	select {
	case r.outKick <- struct{}{}:
	default:
	}
}

// emitter hands results to emit, one at a time, and frees their slots.
func (r *run) emitter() {
	defer close(r.emitted)
	var batch []*Result
	for {
		select {
		case <-r.outKick:
		case <-r.stop:
			return
		}
		r.outMu.Lock()
		batch, r.out = r.out, batch[:0]
		r.outMu.Unlock()
		for i, res := range batch {
			if r.ctx.Err() != nil {
				return
			}
			r.count(res.Status)
			if r.emit != nil {
				r.emit(res)
			}
			batch[i] = nil
			<-r.slots
			r.flights.Done()
			if r.unemitted.Add(-1) == maxUnemitted {
				r.catchUp()
			}
		}
	}
}

// catchUp wakes the dispatcher if it waits for the scan to catch up.
func (r *run) catchUp() {
	select {
	case r.caughtUp <- struct{}{}:
	default:
	}
}

func (r *run) count(s Status) {
	switch s {
	case StatusAnswered:
		r.answered++
	case StatusPartial:
		r.partial++
	case StatusTimedOut:
		r.timedOut++
	default:
		r.faild++
	}
}

// shutdown stops the emitter, closes the sockets and drops the flights
// still in the air (after a cancellation).
func (r *run) shutdown() {
	close(r.stop)
	<-r.emitted
	r.closeSockets()
	for _, sk := range r.socks {
		<-sk.done
		sk.mu.Lock()
		left := make([]*flight, 0, len(sk.flights))
		for _, f := range sk.flights {
			left = append(left, f)
		}
		sk.mu.Unlock()
		for _, f := range left {
			f.abandon()
		}
	}
}

func (r *run) closeSockets() {
	for _, sk := range r.socks {
		sk.conn.Close()
	}
	if r.blocking != nil {
		r.blocking.close()
	}
}

// summary reads the counters; the emitter has returned.
func (r *run) summary() Summary {
	return Summary{
		Targets: r.targets, Answered: r.answered, Partial: r.partial, TimedOut: r.timedOut, Failed: r.faild,
		Sent: r.sent.Load(), Resent: r.resent.Load(), Received: r.received.Load(), Stray: r.stray.Load(),
	}
}

// socket is one shared UDP socket and the flights whose replies it
// receives, keyed by server address.
type socket struct {
	conn    *net.UDPConn
	mu      sync.Mutex
	flights map[netip.AddrPort]*flight
	done    chan struct{} // closed when the reader has returned
	behind  bool          // the reader's last read filled its batch
	batch   sendBatch     // the reader's sends (Linux)
	// launches holds the first requests of the flights the dispatcher
	// starts (Linux).
	launches sendBatch
}

// datagram hands a datagram the socket received to its flight. out
// collects the requests the flight sends in response, when the reader
// batches its sends.
func (r *run) datagram(sk *socket, from netip.AddrPort, b []byte, out *sendBatch) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	sk.mu.Lock()
	f := sk.flights[from]
	sk.mu.Unlock()
	if f == nil {
		r.stray.Add(1)
		return
	}
	r.received.Add(1)
	f.handle(b, out)
}

// flight is one target being queried. Its requests (a query's slots) go
// out as soon as pacing allows, all at once unless HostInterval asks for
// one at a time; one timer, armed for the earliest deadline, sends paced
// requests and resends unanswered ones.
type flight struct {
	r    *run
	res  *Result
	q    query
	sock *socket

	mu       sync.Mutex
	timer    *time.Timer
	armed    time.Time // when the timer is due; zero when it is not armed
	due      uint8     // requests to send, one bit per slot
	air      uint8     // requests sent and not answered
	attempt  [maxSlots]int
	deadline [maxSlots]time.Time
	reserved bool      // a pacing slot is held for the send at sendAt
	sendAt   time.Time // paced or HostInterval: when the next request may go
	probe    time.Time // when first sends went out; the next datagram times the round trip
	nextSend time.Time // HostInterval spacing
	buf      []byte
	done     bool
}

// launch starts the conversation with the server. The first requests go
// into the socket's launch batch when dispatched is set (the dispatcher
// is calling).
func (f *flight) launch(dispatched bool) {
	r := f.r
	if r.blocking != nil {
		go f.converse()
		return
	}
	q, first := r.proto.(drivenProtocol).start(f.res.Addr)
	f.q = q
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	switch {
	case f.res.Addr.Addr().Is4():
		f.sock = r.socks4[int(r.next.Add(1))%len(r.socks4)]
	case r.sock6 != nil:
		f.sock = r.sock6
	default:
		f.apply(f.q.expire(bits.TrailingZeros8(first.send), errNoIPv6), now, nil)
		return
	}
	f.sock.mu.Lock()
	f.sock.flights[f.res.Addr] = f
	f.sock.mu.Unlock()
	var out *sendBatch
	if dispatched {
		out = &f.sock.launches
	}
	f.apply(first, now, out)
}

// apply carries out what the query asked for; f.mu is held. Requests go
// into out when it is not nil.
func (f *flight) apply(ch change, now time.Time, out *sendBatch) {
	f.air &^= ch.finished | ch.send
	f.due &^= ch.finished
	f.due |= ch.send
	for w := ch.send; w != 0; w &= w - 1 {
		f.attempt[bits.TrailingZeros8(w)] = 0
	}
	if f.q.done() {
		f.finish()
		return
	}
	f.pump(now, out)
}

// pump sends the due requests that pacing and HostInterval allow, and
// arms the timer for the others.
func (f *flight) pump(now time.Time, out *sendBatch) {
	r := f.r
	for !f.done && f.due != 0 {
		if r.interval > 0 && f.air != 0 {
			return // one request at a time: the answer sends the next
		}
		if !f.reserved {
			wait := r.pacer.reserve(now)
			if r.interval > 0 {
				wait = max(wait, f.nextSend.Sub(now))
			}
			if wait > 0 {
				f.reserved, f.sendAt = true, now.Add(wait)
				f.arm(f.sendAt, now)
				return
			}
		} else if now.Before(f.sendAt) {
			return
		}
		f.reserved = false
		f.transmit(bits.TrailingZeros8(f.due), now, out)
	}
}

// transmit sends slot's request.
func (f *flight) transmit(slot int, now time.Time, out *sendBatch) {
	r := f.r
	bit := uint8(1) << slot
	f.due &^= bit
	f.air |= bit
	f.buf = f.q.request(f.buf[:0], slot, now)
	// Karn's rule: a round trip is timed only while every request in the
	// air is a first send.
	if f.attempt[slot] > 0 {
		f.probe = time.Time{}
	} else if f.probe.IsZero() && !f.resending() {
		f.probe = now
	}
	f.nextSend = now.Add(r.interval)
	r.sent.Add(1)
	f.deadline[slot] = now.Add(r.rtt.timeout(f.attempt[slot]))
	f.arm(f.deadline[slot], now)
	// Batched sends leave a little later than now: only when no
	// HostInterval is to be measured from now.
	if r.interval == 0 && out.add(f.buf, f.res.Addr) {
		return // a failed batched send is left to the retry timer
	}
	_, err := f.sock.conn.WriteToUDPAddrPort(f.buf, f.res.Addr)
	if r.interval > 0 {
		f.nextSend = time.Now().Add(r.interval) // from the datagram's departure
	}
	if err != nil && !errors.Is(err, net.ErrClosed) {
		f.apply(f.q.expire(slot, err), now, nil)
	}
}

// resending reports whether a request in the air is a resend.
func (f *flight) resending() bool {
	for w := f.air; w != 0; w &= w - 1 {
		if f.attempt[bits.TrailingZeros8(w)] > 0 {
			return true
		}
	}
	return false
}

// arm makes the timer fire at t at the latest.
func (f *flight) arm(t, now time.Time) {
	if !f.armed.IsZero() && !t.Before(f.armed) {
		return
	}
	f.armed = t
	if f.timer == nil {
		f.timer = time.AfterFunc(t.Sub(now), f.onTimer)
	} else {
		f.timer.Reset(t.Sub(now))
	}
}

// onTimer sends paced requests, resends unanswered ones or gives up on
// them, and re-arms the timer for the next deadline.
func (f *flight) onTimer() {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if f.done || now.Before(f.armed) {
		return // finished, or re-armed since this firing was scheduled
	}
	f.armed = time.Time{}
	r := f.r
	for w := f.air; w != 0; w &= w - 1 {
		slot := bits.TrailingZeros8(w)
		if f.air&(1<<slot) == 0 || now.Before(f.deadline[slot]) {
			continue
		}
		f.air &^= 1 << slot
		if f.attempt[slot] < r.retries {
			f.attempt[slot]++
			r.resent.Add(1)
			f.due |= 1 << slot
			continue
		}
		if f.apply(f.q.expire(slot, nil), now, nil); f.done {
			return
		}
	}
	f.pump(now, nil)
	if f.done {
		return
	}
	next := time.Time{}
	if f.reserved {
		next = f.sendAt
	}
	for w := f.air; w != 0; w &= w - 1 {
		if d := f.deadline[bits.TrailingZeros8(w)]; next.IsZero() || d.Before(next) {
			next = d
		}
	}
	if !next.IsZero() {
		f.arm(next, now)
	}
}

// handle digests a datagram from the server.
func (f *flight) handle(b []byte, out *sendBatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done {
		return
	}
	now := time.Now()
	if !f.probe.IsZero() {
		f.r.rtt.sample(now.Sub(f.probe))
		f.probe = time.Time{}
	}
	f.apply(f.q.reply(b, now), now, out)
}

// converse runs a blocking protocol's conversation, once pacing and
// HostInterval allow.
func (f *flight) converse() {
	r := f.r
	now := time.Now()
	wait := r.pacer.reserve(now)
	if r.interval > 0 {
		wait = max(wait, f.nextSend.Sub(now))
	}
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return
		}
	}
	r.sent.Add(1)
	status, fill := r.blocking.query(r.ctx, f.res.Addr)
	if r.ctx.Err() != nil {
		return
	}
	f.nextSend = time.Now().Add(r.interval)
	f.res.Status = status
	fill(f.res)
	r.release(f.res.Addr, f.nextSend)
	r.deliver(f.res)
}

// finish ends the flight and hands its result on; f.mu is held.
func (f *flight) finish() {
	f.done = true
	if f.timer != nil {
		f.timer.Stop()
	}
	if f.sock != nil {
		f.sock.mu.Lock()
		delete(f.sock.flights, f.res.Addr)
		f.sock.mu.Unlock()
	}
	f.res.Status = f.q.status()
	f.q.fill(f.res)
	f.r.release(f.res.Addr, f.nextSend)
	f.r.deliver(f.res)
}

// abandon stops a flight whose scan was canceled.
func (f *flight) abandon() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.done = true
	if f.timer != nil {
		f.timer.Stop()
	}
}
