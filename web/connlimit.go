package web

import (
	"container/list"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/sourcekey"
)

// Defaults of the connection limits (Options.MaxConns and
// Options.MaxConnsPerSource).
const (
	// DefaultMaxConns bounds the HTTP connections open at once, unless
	// the limit on open files is lower (see connCapFor).
	DefaultMaxConns = 1024
	// DefaultMaxConnsPerSource bounds the HTTP connections of one source:
	// an IPv4 address, or an IPv6 /64. A reverse proxy in front of the
	// monitor is one source for all its clients; raise it there.
	DefaultMaxConnsPerSource = 128
	// fdReserve is how many descriptors the connection cap leaves to the
	// rest of the process (the poller's sockets, the store's files and
	// connections, /probe's sockets), or half the limit when that is less.
	fdReserve = 256
)

// connCapFor is the overall connection cap under a limit of limit open
// files (0: unknown): want, less what the rest of the process needs.
func connCapFor(want int, limit uint64) int {
	if limit == 0 {
		return want
	}
	room := limit - min(fdReserve, limit/2)
	if room < uint64(want) {
		return max(int(room), 1)
	}
	return want
}

// connLimiter caps a server's connections, overall and per source. It
// watches every connection's state through http.Server.ConnState. A new
// connection over a cap makes room by closing an idle connection (between
// requests, or yet to send its first one): at the per-source cap, the
// source's own idle longest; at the overall cap, that of the source
// holding the most connections, so that a client holding idle
// connections cannot lock anyone out, and one with a few (an admin's
// page) keeps them. Only when every connection in the way is busy with a
// request is the new one refused: it gets a 503 and is closed.
type connLimiter struct {
	max, perSource int
	log            *ratelog.Limiter

	mu      sync.Mutex
	conns   map[net.Conn]*trackedConn
	sources map[netip.Addr]*connSource

	refusedTotal, refusedSource, evicted atomic.Uint64
}

// connSource is one source's connections.
type connSource struct {
	n    int
	idle list.List // of *trackedConn: its idle connections, longest idle first
}

type trackedConn struct {
	c    net.Conn
	src  netip.Addr
	idle *list.Element // in its connSource's idle list, nil while busy
}

func newConnLimiter(maxConns, perSource int, log *ratelog.Limiter) *connLimiter {
	return &connLimiter{
		max: maxConns, perSource: min(perSource, maxConns), log: log,
		conns:   make(map[net.Conn]*trackedConn),
		sources: make(map[netip.Addr]*connSource),
	}
}

// sourceOf is the source a connection counts against; connections of an
// unknown kind of address share the zero one.
func sourceOf(c net.Conn) netip.Addr {
	if ta, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return sourcekey.Of(ta.AddrPort().Addr())
	}
	return netip.Addr{}
}

// track is the http.Server's ConnState hook.
func (l *connLimiter) track(c net.Conn, state http.ConnState) {
	switch state {
	case http.StateNew:
		l.admit(c)
	case http.StateActive:
		l.mu.Lock()
		if t := l.conns[c]; t != nil {
			l.setBusy(t)
		}
		l.mu.Unlock()
	case http.StateIdle:
		l.mu.Lock()
		if t := l.conns[c]; t != nil && t.idle == nil {
			t.idle = l.sources[t.src].idle.PushBack(t)
		}
		l.mu.Unlock()
	case http.StateHijacked, http.StateClosed:
		l.mu.Lock()
		if t := l.conns[c]; t != nil {
			l.forget(t)
		}
		l.mu.Unlock()
	}
}

// admit counts a new connection in, making room for it or refusing it.
// It runs in the server's accept loop, so it never waits on a peer.
func (l *connLimiter) admit(c net.Conn) {
	src := sourceOf(c)
	var victim *trackedConn
	l.mu.Lock()
	s := l.sources[src]
	switch {
	case s != nil && s.n >= l.perSource:
		if s.idle.Len() == 0 {
			l.mu.Unlock()
			l.refuse(c, &l.refusedSource, "its source has "+strconv.Itoa(l.perSource)+" connections open, each busy with a request")
			return
		}
		victim = s.idle.Front().Value.(*trackedConn)
	case len(l.conns) >= l.max:
		var most *connSource // of the sources with an idle connection
		for _, cs := range l.sources {
			if cs.idle.Len() > 0 && (most == nil || cs.n > most.n) {
				most = cs
			}
		}
		if most == nil {
			l.mu.Unlock()
			l.refuse(c, &l.refusedTotal, "the monitor has "+strconv.Itoa(l.max)+" connections open, each busy with a request")
			return
		}
		victim = most.idle.Front().Value.(*trackedConn)
	}
	if victim != nil {
		l.forget(victim)
		l.evicted.Add(1)
	}
	if s = l.sources[src]; s == nil {
		s = &connSource{}
		l.sources[src] = s
	}
	s.n++
	t := &trackedConn{c: c, src: src}
	l.conns[c] = t
	// A new connection is idle until its first request arrives: a client
	// that connects and sends nothing holds no more than one that went
	// idle after a request.
	t.idle = s.idle.PushBack(t)
	l.mu.Unlock()
	if victim != nil {
		victim.c.Close()
	}
}

// refusedReply is what a refused connection reads before it is closed.
var refusedReply = func() string {
	const body = "too many connections: try again soon\n"
	return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
		"Retry-After: 10\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}()

// refuse answers c with a 503 and closes it, counting it in n. The reply
// fits in a fresh socket's send buffer; the deadline bounds the write all
// the same.
func (l *connLimiter) refuse(c net.Conn, n *atomic.Uint64, why string) {
	n.Add(1)
	l.log.Printf("conns", "web: refused a connection from %s: %s (gsq_http_connections_refused_total)", c.RemoteAddr(), why)
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	io.WriteString(c, refusedReply)
	c.Close()
}

// setBusy takes t off the idle lists. Under l.mu.
func (l *connLimiter) setBusy(t *trackedConn) {
	if t.idle == nil {
		return
	}
	l.sources[t.src].idle.Remove(t.idle)
	t.idle = nil
}

// forget stops counting t. Under l.mu.
func (l *connLimiter) forget(t *trackedConn) {
	l.setBusy(t)
	delete(l.conns, t.c)
	s := l.sources[t.src]
	if s.n--; s.n == 0 {
		delete(l.sources, t.src)
	}
}

// open returns how many connections are counted in now.
func (l *connLimiter) open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns)
}

// The connection limiter's series.
var (
	descConns = prometheus.NewDesc("gsq_http_connections",
		"HTTP connections open now.", nil, nil)
	descConnsLimit = prometheus.NewDesc("gsq_http_connections_limit",
		"The caps on HTTP connections: overall (scope total) and per source, an IPv4 address or an IPv6 /64 (scope source).", []string{"scope"}, nil)
	descConnsRefused = prometheus.NewDesc("gsq_http_connections_refused_total",
		"New HTTP connections answered 503 and closed because a cap was reached (reason total or source) and every connection in the way was busy with a request.", []string{"reason"}, nil)
	descConnsEvicted = prometheus.NewDesc("gsq_http_connections_evicted_total",
		"Idle HTTP connections closed to make room for a new one at a cap.", nil, nil)
)

// Describe sends the descriptions of the limiter's series.
func (l *connLimiter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConns, descConnsLimit, descConnsRefused, descConnsEvicted} {
		ch <- d
	}
}

// Collect sends the limiter's series.
func (l *connLimiter) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(descConns, prometheus.GaugeValue, float64(l.open()))
	ch <- prometheus.MustNewConstMetric(descConnsLimit, prometheus.GaugeValue, float64(l.max), "total")
	ch <- prometheus.MustNewConstMetric(descConnsLimit, prometheus.GaugeValue, float64(l.perSource), "source")
	ch <- prometheus.MustNewConstMetric(descConnsRefused, prometheus.CounterValue, float64(l.refusedTotal.Load()), "total")
	ch <- prometheus.MustNewConstMetric(descConnsRefused, prometheus.CounterValue, float64(l.refusedSource.Load()), "source")
	ch <- prometheus.MustNewConstMetric(descConnsEvicted, prometheus.CounterValue, float64(l.evicted.Load()))
}
