package scan

import (
	"context"
	"errors"
	"net/netip"
	"syscall"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/result"
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

func (OGP) resultProtocol() result.Protocol { return result.OGPProtocol }

// blockingProtocol is a protocol whose conversations run on a client of
// their own, one goroutine per target, rather than on the engine's
// sockets.
type blockingProtocol interface {
	session(timeout time.Duration, retries, readBuffer int, debug func(string, netip.AddrPort, []byte)) blockingSession
}

type blockingSession interface {
	// query asks addr, records the answer in r, and returns the outcome
	// and the datagrams the query sent.
	query(ctx context.Context, addr netip.AddrPort, r *result.Result) (Status, ogp.Stats)
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

func (s *ogpSession) query(ctx context.Context, addr netip.AddrPort, r *result.Result) (Status, ogp.Stats) {
	resp, err := s.c.Query(ctx, addr, s.q)
	r.SetOGP(s.c.Dialect, s.q.Request, resp, err)
	var stats ogp.Stats
	if resp != nil {
		stats = resp.Stats
	}
	if ce := (*ogp.CallError)(nil); errors.As(err, &ce) {
		stats = ce.Stats
	}
	status := StatusFailed
	switch {
	case err == nil:
		status = StatusAnswered
	case resp != nil && resp.Answer != nil:
		status = StatusPartial
	case errors.Is(err, ogp.ErrTimeout):
		status = StatusTimedOut
	case errors.Is(err, ogp.ErrUnreachable), errors.Is(err, syscall.ECONNREFUSED):
		status = StatusUnreachable
	}
	return status, stats
}

func (s *ogpSession) close() { s.c.Close() }
