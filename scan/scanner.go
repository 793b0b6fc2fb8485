package scan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
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
	DefaultDeadline     = 5 * time.Second
	DefaultSockets      = 2
	DefaultSocketBuffer = 4 << 20
	// DefaultChallengeCache is how many servers' challenges a Session
	// keeps between scans, per protocol.
	DefaultChallengeCache = 1 << 16
	// DefaultConnections bounds the queries of TCP and HTTP protocols in
	// flight at once.
	DefaultConnections = 256
)

// Status classifies a target's outcome.
type Status uint8

// Outcomes of a target.
const (
	StatusAnswered    Status = iota // every section asked for came back
	StatusPartial                   // some sections came back, others failed
	StatusTimedOut                  // nothing came back in time
	StatusFailed                    // a bad target line, or bad answers only
	StatusUnreachable               // the network reported the server unreachable (a closed port), or its name did not resolve
	StatusCanceled                  // the scan was canceled before the target was done
)

// String returns "answered", "partial", "timed out", "failed",
// "unreachable" or "canceled".
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
	case StatusUnreachable:
		return "unreachable"
	case StatusCanceled:
		return "canceled"
	}
	return fmt.Sprintf("Status(%d)", uint8(s))
}

// Outcome is how one target ended: the target as given, its [Status],
// and what the server answered as a [result.Result], the protocol-neutral
// result that `gsq query --json` and `gsq scan` print and `gsq monitor`
// keeps.
//
// An Outcome and everything it points to are the receiver's to keep: the
// scan does not touch them after handing them to emit.
type Outcome struct {
	Target Target // as given to the scan
	Status Status
	// Result is never nil. Its Target is Target.Input (Target.String()
	// when Input is empty) and its Addr the address queried (the zero
	// value when none was). A target that could not be parsed fails with
	// the kind result.KindInvalid, a name that did not resolve with
	// result.KindUnreachable, and a target canceled before it was queried
	// with result.KindCanceled; a target canceled while in flight keeps
	// the sections that had answered, the others failing with the kind
	// result.KindCanceled.
	Result *result.Result
}

// Summary counts a scan's outcomes: every target read gets one, and the
// counts of the statuses add up to Targets.
type Summary struct {
	Targets     int // targets read (comments and blank lines excluded)
	Answered    int
	Partial     int
	TimedOut    int
	Failed      int
	Unreachable int
	Canceled    int
	Sent        int64 // datagrams sent, retries included
	Resent      int64 // retries
	Received    int64 // datagrams received from targets in flight
	// Stray counts the datagrams the sockets received from nobody in
	// flight while the scan ran (those of other scans of the Session too).
	Stray   int64
	Elapsed time.Duration
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

// Scanner says how to query lists of servers. Its zero value is ready to
// use, with the defaults above. [Scanner.Scan] queries one list on
// sockets of its own; [Scanner.Open] returns a [Session] whose sockets,
// challenges and round-trip estimates serve scan after scan, as a monitor
// that polls the same servers again and again needs.
type Scanner struct {
	// Query is what to ask each server, of the protocol it names (see
	// package protocol); nil asks protocol.Default its default sections
	// (A2S: info, players and rules). A target may carry a Query of its
	// own. A target line without a port takes the Query's protocol's
	// default port.
	Query       protocol.Query
	Concurrency int // targets in flight at once
	// Rate bounds the datagrams sent per second, across all sockets; 0
	// means DefaultRate, a negative value leaves sends unpaced. Under the
	// limit, the requests of servers that have answered go first, then
	// the first requests of new servers, then resends to silent ones.
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
	// Deadline is the most time one server takes from its first request
	// (from the start of the lookup, for a host name), whatever the
	// retries: what it has not answered then fails with a timeout. 0 means
	// DefaultDeadline, a negative value none (Timeout and Retries then
	// bound it, and the resolver's own timeouts a lookup).
	Deadline time.Duration
	// HostInterval spaces the datagrams sent to one server (0: none).
	// When set, a server also gets one request at a time, the next one
	// after the answer to the previous one; else the requests that need no
	// answer first go out together.
	HostInterval time.Duration
	// MaxPerIP bounds the servers of one IP address queried at once (0:
	// no bound). Game hosts run many servers on one address, and some
	// drop query bursts from one source address.
	MaxPerIP int
	Sockets  int // IPv4 UDP sockets shared by all queries (one IPv6 socket is added)
	// SocketBuffer is the SO_RCVBUF and SO_SNDBUF asked for each socket;
	// the kernel caps it (net.core.rmem_max on Linux).
	SocketBuffer int
	// ChallengeCache is how many servers' challenges a Session keeps
	// between scans, per protocol, so that the next scan of a server asks
	// every section at once; 0 means DefaultChallengeCache, a negative
	// value none. When full, a server not asked for a while gives its
	// place (internal/udpclient's CLOCK rule).
	ChallengeCache int
	// Connections bounds the queries of protocols over TCP or HTTP in
	// flight at once (each holds a connection); 0 means
	// DefaultConnections. UDP queries share the sockets and take none.
	Connections int
	// Resolver resolves host names, preferring IPv4; nil means
	// net.DefaultResolver.
	Resolver *net.Resolver
	// Debug, if set, is called with every datagram sent ("send") to a
	// server and received ("recv") from one. It must not retain b. It is
	// called from several goroutines at once, as the requests go out (a
	// batch of requests leaves soon after) and as the replies are read,
	// so it should be quick.
	Debug func(dir string, addr netip.AddrPort, b []byte)
}

// Scan queries every target read from targets (see [TargetReader]) and
// calls emit with each outcome as soon as it is complete. emit is called
// from one goroutine at a time, in completion order; while it runs, the
// scan goes on. Scan returns when every target read is done. When ctx is
// canceled, it stops reading targets, ends those in flight with an outcome
// of status StatusCanceled, and returns ctx.Err() once they are emitted:
// every target read gets an outcome. The error is also set when reading
// targets fails. Scan opens its sockets and closes them before returning.
func (s *Scanner) Scan(ctx context.Context, targets io.Reader, emit func(*Outcome)) (Summary, error) {
	e, err := s.open(false)
	if err != nil {
		return Summary{}, err
	}
	defer e.close()
	tr := NewTargetReader(targets, e.query.Protocol().DefaultPort)
	// The sequence runs on a goroutine of its own, which may still wait
	// in a Read of targets when a canceled scan returns.
	var readErr atomic.Pointer[error]
	seq := func(yield func(Target) bool) {
		for {
			t, err := tr.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					err = fmt.Errorf("scan: reading targets: %w", err)
					readErr.Store(&err)
				}
				return
			}
			if !yield(t) {
				return
			}
		}
	}
	sum, err := e.run(ctx, seq, emit)
	if p := readErr.Load(); p != nil && err == nil {
		err = *p
	}
	return sum, err
}

// Run queries every target of targets, on sockets of its own, and calls
// emit with each outcome as soon as it is complete, as [Session.Run] does;
// it closes its sockets before returning. A program that scans the same
// servers again and again keeps a [Session] instead.
func (s *Scanner) Run(ctx context.Context, targets iter.Seq[Target], emit func(*Outcome)) (Summary, error) {
	e, err := s.open(false)
	if err != nil {
		return Summary{}, err
	}
	defer e.close()
	return e.run(ctx, targets, emit)
}

// Open opens the sockets of a [Session]. Close it when done.
func (s *Scanner) Open() (*Session, error) {
	e, err := s.open(true)
	if err != nil {
		return nil, err
	}
	return &Session{e: e}, nil
}

// Session is a Scanner's sockets, with what they learn from one scan to
// the next: each server's challenge (so that the next scan asks every
// section at once) and the network's round-trip time. Its Run may be
// called again and again, and by several goroutines at once.
type Session struct {
	e *engine
}

// Run queries every target of targets and calls emit with each outcome as
// soon as it is complete, as [Scanner.Scan] does. Targets are taken as
// the scan goes: a long or endless sequence is never held in memory. A
// sequence that waits (for a channel, say) should end when ctx is done;
// see [Channel]. A target with no valid Addr is resolved from its Host
// and Port, and one with Err set gets a failed outcome. Run returns when
// the sequence has ended and every target taken is done, or when ctx is
// canceled: then the targets in flight end with StatusCanceled, and Run
// returns ctx.Err() once their outcomes are emitted.
func (ss *Session) Run(ctx context.Context, targets iter.Seq[Target], emit func(*Outcome)) (Summary, error) {
	return ss.e.run(ctx, targets, emit)
}

// Close closes the session's sockets. Runs still going end with errors.
func (ss *Session) Close() error { return ss.e.close() }

// Channel returns the targets received from ch, until ch is closed or ctx
// is done, as a sequence for [Session.Run].
func Channel(ctx context.Context, ch <-chan Target) iter.Seq[Target] {
	return func(yield func(Target) bool) {
		for {
			select {
			case t, ok := <-ch:
				if !ok || !yield(t) {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}
}
