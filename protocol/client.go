package protocol

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"sync"

	"github.com/gsq-project/gsq/internal/udpclient"
	"github.com/gsq-project/gsq/result"
)

// ErrClientClosed is the error of a query on a closed [Client].
var ErrClientClosed = errors.New("protocol: client closed")

// Client asks servers of any protocol, one query per call, as `gsq query`
// does: each UDP protocol's conversations on a socket of the protocol's
// own (an internal/udpclient Transport, opened on its first use, with the
// protocol's challenges), the stream protocols' exchanges through their
// queries. It is safe for concurrent use; the zero value is ready. Close
// releases the sockets. A program that asks many servers at once uses
// package scan.
//
// A socket per protocol, and not one for all, because a Transport hands a
// datagram to every conversation with the server that sent it: two
// protocols asked of one address:port at once (A2S and OGP of an Onset
// server, Query and Bedrock of a PocketMine one) would each read the
// other's reply, and a protocol the server does not speak would end in
// "not the protocol" instead of a timeout. Telling the replies apart by
// protocol instead would need every protocol to recognise its replies
// before its conversation reads them, which a conversation cannot do
// without losing its verdict on a server that answers something else; the
// kernel tells them apart by port for free. The cost is one socket per
// UDP protocol asked, a handful at most.
type Client struct {
	// Debug, if set, is called with every datagram sent ("send") and
	// received ("recv") over UDP, and every packet of the stream
	// protocols that can show theirs (minecraft). It must not retain b,
	// and runs on a socket's read loop for received datagrams: it should
	// be quick, and safe for concurrent use.
	Debug func(dir string, addr netip.AddrPort, b []byte)

	mu      sync.Mutex
	sockets map[string]*udpclient.Lazy // by protocol
	closed  bool
}

// Ask queries the server at addr with q within ctx, waiting as w says,
// and returns its result: q.NewResult(target, addr) with every section
// asked answered or failed. each, when not nil, is called on the calling
// goroutine, between the steps of the query, with the sections that have
// just ended and a result holding every section ended so far, which is
// each's to keep: a program shows the answers that came while it waits
// for the others. A protocol that answers everything at once calls it
// once.
func (c *Client) Ask(ctx context.Context, q Query, target string, addr netip.AddrPort, w Waits, each func(ended []result.Section, r *result.Result)) *result.Result {
	r := q.NewResult(target, addr)
	switch q := q.(type) {
	case UDPQuery:
		c.askUDP(ctx, q, target, addr, w, each, r)
	case StreamQuery:
		if d, ok := q.(debuggable); ok && c.Debug != nil {
			q = d.withDebug(c.Debug)
		}
		q.Do(ctx, addr, w, r)
		if each != nil {
			each(q.Sections(), r)
		}
	}
	return r
}

// debuggable is a StreamQuery that can show its packets: withDebug
// returns a copy that calls debug with each.
type debuggable interface {
	withDebug(debug func(dir string, addr netip.AddrPort, b []byte)) StreamQuery
}

func (c *Client) askUDP(ctx context.Context, q UDPQuery, target string, addr netip.AddrPort, w Waits, each func([]result.Section, *result.Result), r *result.Result) {
	t, challenges, err := c.transport(q.Protocol().Name)
	if err != nil {
		r.Fail(err)
		return
	}
	chal, has := challenges.Get(addr)
	conv := q.Start(w, addr, chal, has)
	var step func()
	if each != nil {
		var reported []result.Section
		step = func() {
			snap := q.NewResult(target, addr)
			var ended []result.Section
			for _, s := range q.Record(conv, snap) {
				if !slices.Contains(reported, s) {
					ended = append(ended, s)
				}
			}
			if ended != nil {
				reported = append(reported, ended...)
				each(ended, snap)
			}
		}
	}
	t.Exchange(ctx, addr, conv, step)
	if chal, ok := conv.Challenge(); ok {
		challenges.Put(addr, chal)
	}
	q.Record(conv, r)
}

// transport returns the socket of the protocol named name, opened on
// first use, and the challenges of its servers.
func (c *Client) transport(name string) (*udpclient.Transport, *udpclient.Challenges, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, ErrClientClosed
	}
	l := c.sockets[name]
	if l == nil {
		if c.sockets == nil {
			c.sockets = map[string]*udpclient.Lazy{}
		}
		l = new(udpclient.Lazy)
		c.sockets[name] = l
	}
	c.mu.Unlock()
	// Closed meanwhile: Get fails with ErrClientClosed.
	return l.Get(udpclient.Config{Name: "protocol", ErrClosed: ErrClientClosed, Debug: c.Debug})
}

// Close closes the sockets; the queries in flight fail with
// ErrClientClosed. It is safe to call more than once.
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	sockets := c.sockets // no longer written
	c.mu.Unlock()
	var errs []error
	for _, l := range sockets {
		errs = append(errs, l.Close(nil))
	}
	return errors.Join(errs...)
}
