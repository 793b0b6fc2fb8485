package scan

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// lineProtocol is a stream protocol of the test's own, not in the
// registry: a TCP server that sends its name on a line.
var lineProtocol = &protocol.Protocol{Name: "line", Transport: protocol.TCP, Sections: []result.Section{result.SectionInfo}}

// lineQuery asks lineProtocol's servers, counting the queries in flight,
// and tells started of each query that starts.
type lineQuery struct {
	inFlight, peak atomic.Int32
	started        chan struct{}
}

func newLineQuery() *lineQuery { return &lineQuery{started: make(chan struct{}, 100)} }

// waitStarted waits for n queries to start.
func (q *lineQuery) waitStarted(ctx context.Context, n int) bool {
	for range n {
		select {
		case <-q.started:
		case <-ctx.Done():
			return false
		}
	}
	return true
}

func (q *lineQuery) Protocol() *protocol.Protocol { return lineProtocol }
func (q *lineQuery) Sections() []result.Section   { return lineProtocol.Sections }
func (q *lineQuery) NewResult(target string, addr netip.AddrPort) *result.Result {
	return result.New(target, addr, lineProtocol.Name)
}

func (q *lineQuery) Do(ctx context.Context, addr netip.AddrPort, _ protocol.Waits, r *result.Result) {
	n := q.inFlight.Add(1)
	defer q.inFlight.Add(-1)
	for p := q.peak.Load(); n > p && !q.peak.CompareAndSwap(p, n); p = q.peak.Load() {
	}
	q.started <- struct{}{}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		r.Fail(err)
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		r.Fail(err)
		return
	}
	name := strings.TrimSpace(line)
	r.Summary.Name = &name
}

// lineServer accepts connections on loopback and answers each with its
// name once release is closed (never, if the test ends first).
func lineServer(t *testing.T, release <-chan struct{}) netip.AddrPort {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		l.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				select {
				case <-release:
					fmt.Fprintf(c, "server %s\n", l.Addr())
				case <-done:
				}
			})
		}
	})
	return l.Addr().(*net.TCPAddr).AddrPort()
}

// A stream protocol's queries run on goroutines, at most Connections at
// once, each ending with its own outcome; mixed with UDP targets in one
// scan, each target asks its own protocol.
func TestScanStreamProtocol(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	q := newLineQuery()
	var targets []Target
	for range 12 {
		targets = append(targets, Target{Addr: lineServer(t, release), Query: q})
	}
	closed := lineServer(t, release)
	targets = append(targets, Target{Addr: closed, Query: q})
	s := &Scanner{Connections: 3}
	ss, err := s.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	go func() {
		// Let the first queries pile up at the limit, then answer all.
		q.waitStarted(testutil.Context(t), 3)
		close(release)
	}()
	got := map[netip.AddrPort]*Outcome{}
	var mu sync.Mutex
	sum, err := ss.Run(testutil.Context(t), slices.Values(targets), func(o *Outcome) {
		mu.Lock()
		got[o.Target.Addr] = o
		mu.Unlock()
	})
	if err != nil || sum.Targets != len(targets) || sum.Answered != len(targets) {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if p := q.peak.Load(); p > 3 {
		t.Errorf("%d queries at once, over Connections (3)", p)
	}
	for _, tg := range targets {
		o := got[tg.Addr]
		if o == nil || o.Status != StatusAnswered || o.Result.Protocol != "line" || o.Result.Summary.Name == nil {
			t.Errorf("%v: %+v", tg.Addr, o)
		}
	}
}

// A canceled scan ends the stream queries in flight with StatusCanceled;
// one that fails says how.
func TestScanStreamCanceledAndFailed(t *testing.T) {
	t.Parallel()
	q := newLineQuery()
	ctx, cancel := context.WithCancel(testutil.Context(t))
	defer cancel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().(*net.TCPAddr).AddrPort()
	l.Close()
	targets := []Target{{Addr: lineServer(t, nil), Query: q}, {Addr: refused, Query: q}}
	refusedDone := make(chan struct{})
	go func() {
		// Both queries have started, and the refused one has ended.
		if q.waitStarted(ctx, 2) {
			select {
			case <-refusedDone:
			case <-ctx.Done():
			}
		}
		cancel()
	}()
	var outcomes []*Outcome
	_, err = (&Scanner{}).Run(ctx, slices.Values(targets), func(o *Outcome) {
		outcomes = append(outcomes, o)
		if o.Target.Addr == refused {
			close(refusedDone)
		}
	})
	if err == nil || len(outcomes) != 2 {
		t.Fatalf("%d outcomes, %v", len(outcomes), err)
	}
	for _, o := range outcomes {
		want := StatusCanceled
		if o.Target.Addr == refused {
			want = StatusUnreachable
		}
		if o.Status != want {
			t.Errorf("%v: %v (%v), want %v", o.Target.Addr, o.Status, o.Result.Err, want)
		}
	}
}
