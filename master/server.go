package master

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/internal/udpserve"
	"github.com/gsq-project/gsq/serverlist"
)

// Server defaults, for the fields left zero: the budget Valve's master
// kept, about 30 pages a minute to one address (in bursts of up to 30),
// and 100 pages a second in all (139 KB/s at most).
const (
	DefaultRateLimit   = 0.5 // pages per second per source
	DefaultRateBurst   = 30
	DefaultGlobalLimit = 100 // pages per second in all
)

// serverReadBufferSize bounds a datagram read: a query is its seed and a
// filter of at most serverlist.MaxFilterLen bytes.
const serverReadBufferSize = serverlist.MaxFilterLen + 64

// Handler gives the servers that answer a query: every address that
// matches it, in ascending order (netip.AddrPort.Compare), IPv4 only.
// The Server pages through the list. ServeMaster runs on the server's
// read loop for every page asked: it should be quick, and it must not
// change the slice it returned earlier.
type Handler interface {
	ServeMaster(from netip.AddrPort, q *Query) []netip.AddrPort
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(from netip.AddrPort, q *Query) []netip.AddrPort

// ServeMaster calls f(from, q).
func (f HandlerFunc) ServeMaster(from netip.AddrPort, q *Query) []netip.AddrPort { return f(from, q) }

// FleetHandler lists the servers of fleet that match a query, with the
// filter evaluator every gsq list shares (serverlist.Filter.Match). A
// filter that does not parse lists nothing. `gsq serve --fleet N
// --master ADDR` lists its simulated fleet with one.
func FleetHandler(fleet *serverlist.Fleet) Handler {
	return HandlerFunc(func(_ netip.AddrPort, q *Query) []netip.AddrPort {
		flt, err := serverlist.Parse(q.Filter)
		if err != nil {
			return nil
		}
		var out []netip.AddrPort
		fleet.Select(flt, q.Region, 0, func(s *serverlist.Server) bool {
			if a := s.Addr; a.Addr().Is4() && a.Port() != 0 && !a.Addr().IsUnspecified() {
				out = append(out, a)
			}
			return true
		})
		return out
	})
}

// PacketWriter sends datagrams. *net.UDPConn satisfies it.
type PacketWriter = udpserve.Writer

// Server answers master server queries with the lists its Handler gives,
// a page a query. The zero value needs only a Handler.
//
// The protocol has no challenge, and a reply is up to a hundred times
// its query, so the server keeps what it reflects bounded: it answers
// only a well-formed query (at least MinQueryLen bytes, an IPv4 seed),
// a page holds at most PageSize entries, and pages are budgeted per
// source (RateLimit a second in bursts of RateBurst, an IPv4 address or
// an IPv6 /64) and in all (GlobalLimit a second). A source past its
// budget is not answered: to a client, the master falls silent, as
// Valve's did.
type Server struct {
	// Addr is the UDP address ListenAndServe listens on (default
	// ":27011").
	Addr    string
	Handler Handler
	// PageSize is how many entries a reply holds at most, the end marker
	// included (default DefaultPageSize, 231: a 1,392-byte datagram).
	PageSize int
	// RateLimit is the pages per second sent to one source (default 0.5,
	// 30 a minute); negative disables it. RateBurst is its bucket
	// (default 30 with the default rate, twice the rate otherwise).
	// RateSources bounds the table (default 65536).
	RateLimit   float64
	RateBurst   int
	RateSources int
	// GlobalLimit is the pages per second sent in all (default 100), in
	// bursts of as many; negative disables it.
	GlobalLimit float64
	// Debug, if set, sees every datagram received ("recv") and sent
	// ("send"). It must not retain b.
	Debug func(dir string, peer netip.AddrPort, b []byte)
	// Logf, if set, receives failed writes and lists with addresses the
	// protocol cannot carry, 5 lines per 10 seconds at most.
	Logf func(format string, args ...any)

	initOnce sync.Once
	budget   *udpserve.Budget
	log      ratelog.Limiter
	bufs     sync.Pool
	socks    udpserve.Sockets
	clock    func() int64 // UnixNano; time.Now's unless a test sets it
}

func (s *Server) init() {
	s.initOnce.Do(func() {
		s.log.Logf = s.Logf
		if s.clock == nil {
			s.clock = func() int64 { return time.Now().UnixNano() }
		}
		s.budget = udpserve.NewBudget(s.RateLimit, s.RateBurst, s.RateSources, DefaultRateLimit, DefaultRateBurst,
			s.GlobalLimit, DefaultGlobalLimit)
		s.bufs.New = func() any {
			b := make([]byte, 0, ReplyHeaderLen+EntryLen*s.pageSize())
			return &b
		}
	})
}

func (s *Server) pageSize() int { return cmp.Or(max(s.PageSize, 0), DefaultPageSize) }

// ListenAndServe listens on s.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	pc, err := s.socks.Listen(s.Addr, ":"+strconv.Itoa(DefaultPort))
	switch {
	case errors.Is(err, udpserve.ErrShutdown):
		return ErrServerClosed
	case err != nil:
		return fmt.Errorf("master: %w", err)
	}
	return s.Serve(pc)
}

// LocalAddr returns the address the server serves on, or nil.
func (s *Server) LocalAddr() net.Addr { return s.socks.LocalAddr() }

// Serve answers the datagrams read from pc until Shutdown, which closes
// pc; then it returns ErrServerClosed.
func (s *Server) Serve(pc net.PacketConn) error {
	s.init()
	w := udpserve.WriterOf(pc)
	return s.socks.Serve(pc, serverReadBufferSize, ErrServerClosed, func(from netip.AddrPort, b []byte) { s.HandlePacket(w, from, b) })
}

// Shutdown closes the sockets and waits for their loops, or for ctx.
func (s *Server) Shutdown(ctx context.Context) error { return s.socks.Shutdown(ctx) }

// HandlePacket answers one datagram b from from, writing to w. It is safe
// for concurrent use and does not retain b.
func (s *Server) HandlePacket(w PacketWriter, from netip.AddrPort, b []byte) {
	s.init()
	if len(b) < MinQueryLen || s.Handler == nil {
		return
	}
	q, err := ParseQuery(b)
	if err != nil {
		return
	}
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	if s.Debug != nil {
		s.Debug("recv", from, b)
	}
	if !s.budget.Allow(from.Addr(), s.clock()) {
		return
	}
	list := s.Handler.ServeMaster(from, &q)
	if !slices.IsSortedFunc(list, netip.AddrPort.Compare) {
		list = slices.SortedFunc(slices.Values(list), netip.AddrPort.Compare)
	}
	page, end := Page(list, q.Seed, s.pageSize())
	buf := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(buf)
	out, err := AppendReply((*buf)[:0], page, end)
	*buf = out
	if err != nil {
		s.log.Printf("list", "master: a list for %v holds %v; the page is not sent", from, err)
		return
	}
	if s.Debug != nil {
		s.Debug("send", from, out)
	}
	if _, err := w.WriteToUDPAddrPort(out, from); err != nil {
		s.log.Printf("write", "master: write to %v: %v", from, err)
	}
}
