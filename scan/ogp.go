package scan

import (
	"context"
	"errors"
	"net/netip"
	"syscall"
	"time"

	"github.com/gsq-project/gsq/ogp"
)

// OGP asks each server the Open Game Protocol default query (see the OGP
// v0.91 specification) through one ogp.Client shared by the whole scan:
// one socket, replies demultiplexed by address and request ID, the
// challenge kept per server, splits reassembled. The client resends
// unanswered requests itself (Scanner.Timeout per attempt,
// Scanner.Retries times, within Scanner.Deadline), so OGP conversations
// are not paced datagram by datagram: each query takes one send slot when
// it starts. OGP has no standard port: every target line needs one.
type OGP struct {
	Dialect ogp.Dialect // ogp.V091 by default
	Query   *ogp.Query  // what to ask; nil asks everything (ogp.QueryAll)
}

// DefaultPort is 0: OGP has no standard port.
func (OGP) DefaultPort() uint16 { return 0 }

func (OGP) protocol() {}

// OGPResult is what one server answered to the OGP query.
type OGPResult struct {
	Ping   time.Duration
	Answer *ogp.Answer // nil when the query failed
	Err    error       // with an Answer: the part that could not be read
}

// blockingProtocol is a protocol whose conversations run on a client of
// their own, one goroutine per target, rather than on the engine's
// sockets.
type blockingProtocol interface {
	session(timeout time.Duration, retries, readBuffer int, debug func(string, netip.AddrPort, []byte)) blockingSession
}

type blockingSession interface {
	// query asks addr, and returns the outcome, what to fill in the
	// result with, and the datagrams the query sent.
	query(ctx context.Context, addr netip.AddrPort) (Status, func(*Result), ogp.Stats)
	close()
}

func (p OGP) session(timeout time.Duration, retries, readBuffer int, debug func(string, netip.AddrPort, []byte)) blockingSession {
	q := p.Query
	if q == nil {
		all := ogp.QueryAll(p.Dialect)
		q = &all
	}
	if retries == 0 {
		retries = -1 // none: ogp.Client reads 0 as its default
	}
	c := &ogp.Client{Dialect: p.Dialect, Timeout: timeout, Retries: retries, ReadBuffer: readBuffer, Debug: debug}
	return &ogpSession{c: c, q: q}
}

type ogpSession struct {
	c *ogp.Client
	q *ogp.Query
}

func (s *ogpSession) query(ctx context.Context, addr netip.AddrPort) (Status, func(*Result), ogp.Stats) {
	res := &OGPResult{}
	resp, err := s.c.Query(ctx, addr, s.q)
	res.Err = err
	var stats ogp.Stats
	if resp != nil {
		res.Answer, res.Ping, stats = resp.Answer, resp.RTT, resp.Stats
	}
	if ce := (*ogp.CallError)(nil); errors.As(err, &ce) {
		stats = ce.Stats
	}
	status := StatusFailed
	switch {
	case err == nil:
		status = StatusAnswered
	case res.Answer != nil:
		status = StatusPartial
	case errors.Is(err, ogp.ErrTimeout):
		status = StatusTimedOut
	case errors.Is(err, syscall.ECONNREFUSED):
		status = StatusUnreachable
	}
	return status, func(r *Result) { r.OGP = res }, stats
}

func (s *ogpSession) close() { s.c.Close() }
