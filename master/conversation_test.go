package master

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

var masterAddr = netip.MustParseAddrPort("192.0.2.1:27011")

// fleetList returns n addresses in ascending order.
func fleetList(n int) []netip.AddrPort {
	out := make([]netip.AddrPort, n)
	for i := range out {
		out[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)}), 27015)
	}
	return out
}

// pager answers requests from list as a master pages, size entries a
// page.
type pager struct {
	t    *testing.T
	list []netip.AddrPort
	size int
}

// answer parses a request the conversation handed out and returns the
// reply.
func (p *pager) answer(req []byte) []byte {
	p.t.Helper()
	q, err := ParseQuery(req)
	if err != nil {
		p.t.Fatalf("request %x: %v", req, err)
	}
	page, end := Page(p.list, q.Seed, p.size)
	b, err := AppendReply(nil, page, end)
	if err != nil {
		p.t.Fatal(err)
	}
	return b
}

// step hands out the conversation's requests and returns them.
func requests(c *Conversation, now time.Time) [][]byte {
	var out [][]byte
	for {
		b, ok := c.AppendRequest(nil, now)
		if !ok {
			return out
		}
		out = append(out, b)
	}
}

// A listing pages by the last address received until the marker, one
// request in the air at a time, and hands each page's addresses out as
// they come.
func TestConversationPages(t *testing.T) {
	t.Parallel()
	list := fleetList(1000)
	p := &pager{t: t, list: list, size: DefaultPageSize}
	var c Conversation
	c.Start(&Options{Query: Query{Filter: `\appid\730`}}, masterAddr, 0, false)
	now := time.Unix(100, 0)
	var got []netip.AddrPort
	var seeds []netip.AddrPort
	for !c.Done() {
		reqs := requests(&c, now)
		if len(reqs) != 1 {
			t.Fatalf("%d requests at once, want 1", len(reqs))
		}
		q, _ := ParseQuery(reqs[0])
		seeds = append(seeds, q.Seed)
		if q.Filter != `\appid\730` {
			t.Fatalf("filter %q", q.Filter)
		}
		now = now.Add(10 * time.Millisecond)
		c.Receive(p.answer(reqs[0]), now)
		got = append(got, c.TakeNew()...)
	}
	r := c.Result()
	if r.Err != nil || !r.Complete || r.Pages != 5 || r.Addresses != 1000 || r.Next != list[999] {
		t.Fatalf("result %+v", r)
	}
	if !slices.Equal(got, list) {
		t.Errorf("got %d addresses, not the list in order", len(got))
	}
	want := []netip.AddrPort{Seed, list[230], list[461], list[692], list[923]}
	if !slices.Equal(seeds, want) {
		t.Errorf("seeds %v, want %v", seeds, want)
	}
	if rtt, clean := c.RoundTrip(); rtt != 10*time.Millisecond || !clean {
		t.Errorf("RoundTrip = %v, %v", rtt, clean)
	}
	if r.Stats.Sent != 5 || r.Stats.Resent != 0 || !c.Heard() {
		t.Errorf("stats %+v, heard %v", r.Stats, c.Heard())
	}
	if _, ok := c.Challenge(); ok {
		t.Error("the protocol has no challenge")
	}
	if !c.Wake().IsZero() || c.Pending() {
		t.Error("a finished listing still waits or sends")
	}
}

// A lost reply is asked again with the same seed; the late answer to the
// first request, coming after the answer to the resend moved the listing
// on, is stale: dropped whole, and the paging goes on without a request
// more.
func TestConversationLateReply(t *testing.T) {
	t.Parallel()
	list := fleetList(500)
	p := &pager{t: t, list: list, size: 100}
	var c Conversation
	c.Start(&Options{Timeout: time.Second}, masterAddr, 0, false)
	t0 := time.Unix(100, 0)
	first := requests(&c, t0)[0]
	c.Receive(p.answer(first), t0.Add(time.Millisecond))
	second := requests(&c, t0)[0] // seed list[99]: lost, for now
	c.Tick(t0.Add(time.Second + time.Millisecond))
	if !c.Resending() {
		t.Fatal("no resend after the timeout")
	}
	resent := requests(&c, t0.Add(time.Second+time.Millisecond))
	if len(resent) != 1 || string(resent[0]) != string(second) {
		t.Fatalf("resend %q, want %q again", resent, second)
	}
	c.Receive(p.answer(resent[0]), t0.Add(1100*time.Millisecond))
	third := requests(&c, t0.Add(1100*time.Millisecond))
	if len(third) != 1 {
		t.Fatal("no request for the third page")
	}
	// The first answer to the second request, late: the page the
	// listing already has, ending with the seed now in the air.
	c.Receive(p.answer(second), t0.Add(1200*time.Millisecond))
	if reqs := requests(&c, t0.Add(1200*time.Millisecond)); len(reqs) != 0 {
		t.Fatalf("a stale reply made %d requests", len(reqs))
	}
	for req := third[0]; !c.Done(); {
		c.Receive(p.answer(req), t0.Add(1300*time.Millisecond))
		if reqs := requests(&c, t0.Add(1300*time.Millisecond)); len(reqs) == 1 {
			req = reqs[0]
		}
	}
	r := c.Result()
	if r.Err != nil || r.Addresses != 500 || r.Stale != 1 || r.Duplicates != 0 || r.Stats.Resent != 1 {
		t.Errorf("result %+v", r)
	}
}

// A master that answers every request with the first page fails the
// listing with ErrStalled once the retries are spent; one whose pages
// list nothing new fails it after StallPages of them.
func TestConversationStalls(t *testing.T) {
	t.Parallel()
	list := fleetList(300)
	firstPage, _ := AppendReply(nil, list[:100], false)
	var c Conversation
	c.Start(&Options{Timeout: time.Second, Retries: 1, Deadline: -1}, masterAddr, 0, false)
	now := time.Unix(100, 0)
	for !c.Done() {
		if reqs := requests(&c, now); len(reqs) > 0 {
			c.Receive(firstPage, now)
			continue
		}
		now = c.Wake()
		c.Tick(now)
	}
	r := c.Result()
	if !errors.Is(r.Err, ErrStalled) || errors.Is(r.Err, ErrTimeout) || r.Stale != 2 || !strings.Contains(r.Err.Error(), "ignores the seed") {
		t.Errorf("ignoring the seed: %v (%+v)", r.Err, r)
	}

	// Pages that move on but repeat what came: the seed advances, nothing
	// is new.
	var d Conversation
	d.Start(&Options{}, masterAddr, 0, false)
	pages := [][]netip.AddrPort{list[:100], {list[5], list[6]}, {list[7], list[8]}, {list[9], list[10]}}
	for _, page := range pages {
		if len(requests(&d, now)) != 1 {
			t.Fatal("no request")
		}
		b, _ := AppendReply(nil, page, false)
		d.Receive(b, now)
	}
	if r := d.Result(); !errors.Is(r.Err, ErrStalled) || r.Duplicates != 6 || r.Pages != 4 {
		t.Errorf("no progress: %v (%+v)", r.Err, r)
	}
}

// Timeouts: Retries resends, each waiting half as long again, then
// ErrTimeout, a net.Error matching os.ErrDeadlineExceeded, naming the
// master and the page; the Deadline bounds the whole listing.
func TestConversationTimeout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		retries, sends int
	}{{-1, 1}, {0, 1 + DefaultRetries}, {3, 4}} {
		var c Conversation
		c.Start(&Options{Retries: tc.retries, Deadline: -1}, masterAddr, 0, false)
		now, sends := time.Unix(1, 0), 0
		var waits []time.Duration
		for !c.Done() {
			if len(requests(&c, now)) > 0 {
				sends++
			}
			wake := c.Wake()
			waits = append(waits, wake.Sub(now))
			now = wake
			c.Tick(now)
		}
		err := c.Result().Err
		var ne net.Error
		if sends != tc.sends || !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) ||
			!errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), masterAddr.String()) {
			t.Errorf("Retries %d: %d sends, %v", tc.retries, sends, err)
		}
		if waits[0] != DefaultTimeout || len(waits) > 1 && waits[1] != DefaultTimeout*3/2 {
			t.Errorf("Retries %d: waits %v", tc.retries, waits)
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "master: list "+masterAddr.String()+": ") || !strings.Contains(msg, "page 1") {
			t.Errorf("message %q", msg)
		}
	}
	// The Deadline ends a listing whose master answers slowly, page by
	// page.
	p := &pager{t: t, list: fleetList(10000), size: 10}
	var c Conversation
	c.Start(&Options{Deadline: 5 * time.Second, MaxPages: -1}, masterAddr, 0, false)
	now := time.Unix(1, 0)
	for !c.Done() {
		for _, req := range requests(&c, now) {
			now = now.Add(time.Second)
			if wake := c.Wake(); !wake.IsZero() && !now.Before(wake) {
				c.Tick(now)
			}
			if !c.Done() {
				c.Receive(p.answer(req), now)
			}
		}
	}
	if r := c.Result(); !errors.Is(r.Err, ErrTimeout) || r.Pages < 3 || r.Addresses != 10*r.Pages || r.Next != p.list[r.Addresses-1] {
		t.Errorf("deadline: %v (%+v)", r.Err, r)
	}
}

// Limits: MaxPages and MaxAddresses cut a listing short with ErrLimit,
// after handing out what came; Next resumes it.
func TestConversationLimits(t *testing.T) {
	t.Parallel()
	list := fleetList(1000)
	run := func(o *Options) (*Result, []netip.AddrPort) {
		p := &pager{t: t, list: list, size: 100}
		var c Conversation
		c.Start(o, masterAddr, 0, false)
		var got []netip.AddrPort
		for !c.Done() {
			for _, req := range requests(&c, time.Unix(1, 0)) {
				c.Receive(p.answer(req), time.Unix(1, 0))
			}
			got = append(got, c.TakeNew()...)
		}
		return c.Result(), got
	}
	r, got := run(&Options{MaxPages: 3})
	if !errors.Is(r.Err, ErrLimit) || r.Pages != 3 || len(got) != 300 || r.Next != list[299] || r.Complete {
		t.Errorf("MaxPages: %v, %d addresses (%+v)", r.Err, len(got), r)
	}
	r, got = run(&Options{MaxAddresses: 250})
	if !errors.Is(r.Err, ErrLimit) || len(got) != 250 || r.Next != list[249] {
		t.Errorf("MaxAddresses: %v, %d addresses (%+v)", r.Err, len(got), r)
	}
	// Resuming after Next lists the rest.
	rest, more := run(&Options{Query: Query{Seed: r.Next}})
	if rest.Err != nil || !slices.Equal(more, list[250:]) {
		t.Errorf("resume: %v, %d addresses", rest.Err, len(more))
	}
	if r, got := run(&Options{MaxPages: -1, MaxAddresses: -1}); r.Err != nil || len(got) != 1000 {
		t.Errorf("no bounds: %v, %d", r.Err, len(got))
	}
}

// A master that sends what is not a reply fails the listing with
// ErrNotMaster and the parse error, not a timeout; an ICMP report fails
// it with ErrUnreachable at once; the driver's failure ends it; a query
// that cannot be sent fails at Start.
func TestConversationErrors(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.Start(&Options{Retries: -1}, masterAddr, 0, false)
	now := time.Unix(1, 0)
	requests(&c, now)
	c.Receive([]byte("\xff\xff\xff\xffInot a list"), now)
	c.Receive([]byte{0xFF, 0xFF, 0xFF, 0xFF, 0x66, 0x0A, 1, 2, 3}, now)
	c.Tick(c.Wake())
	err := c.Result().Err
	var pe *ParseError
	if !errors.Is(err, ErrNotMaster) || !errors.As(err, &pe) || pe.Message != "reply" || errors.Is(err, ErrTimeout) {
		t.Errorf("not a master: %v", err)
	}

	c.Start(&Options{}, masterAddr, 0, false)
	requests(&c, now)
	c.Unreachable(syscall.ECONNREFUSED)
	if err := c.Result().Err; !c.Done() || !errors.Is(err, ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("unreachable: %v", err)
	}

	c.Start(&Options{}, masterAddr, 0, false)
	requests(&c, now)
	c.Fail(fmt.Errorf("wrapped: %w", context.DeadlineExceeded))
	if err := c.Result().Err; !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a context's deadline: %v", err)
	}
	c.Start(&Options{}, masterAddr, 0, false)
	c.Fail(context.Canceled)
	if err := c.Result().Err; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("canceled: %v", err)
	}

	c.Start(&Options{Query: Query{Filter: "a\x00b"}}, masterAddr, 0, false)
	if err := c.Result().Err; !c.Done() || !errors.Is(err, ErrNULInText) || c.Pending() {
		t.Errorf("a bad query: %v, done %v", err, c.Done())
	}

	// Stop ends it without an error; what came stays.
	c.Start(&Options{}, masterAddr, 0, false)
	requests(&c, now)
	page, _ := AppendReply(nil, fleetList(3), false)
	c.Receive(page, now)
	c.Stop()
	if r := c.Result(); r.Err != nil || r.Complete || r.Addresses != 3 || !c.Done() {
		t.Errorf("stopped: %+v", r)
	}
}

// A master that sends its whole list at once (no paging) is read in one
// go; an empty reply without the marker ends the list; repeated addresses
// are dropped; a restarted conversation forgets the last one.
func TestConversationShapes(t *testing.T) {
	t.Parallel()
	list := fleetList(600)
	now := time.Unix(1, 0)
	var c Conversation
	c.Start(&Options{}, masterAddr, 0, false)
	requests(&c, now)
	for i := 0; i < 600; i += 200 {
		b, _ := AppendReply(nil, list[i:i+200], i == 400)
		c.Receive(b, now)
	}
	if r := c.Result(); r.Err != nil || !r.Complete || r.Addresses != 600 || r.Pages != 3 {
		t.Errorf("all at once: %+v", r)
	}

	c.Start(&Options{}, masterAddr, 0, false)
	requests(&c, now)
	b, _ := AppendReply(nil, list[:10], false)
	c.Receive(b, now)
	requests(&c, now)
	header, _ := AppendReply(nil, nil, false)
	c.Receive(header, now)
	if r := c.Result(); r.Err != nil || !r.Complete || r.Addresses != 10 {
		t.Errorf("empty page without the marker: %+v", r)
	}

	c.Start(&Options{}, masterAddr, 0, false)
	requests(&c, now)
	b, _ = AppendReply(nil, []netip.AddrPort{list[0], list[1], list[0]}, true)
	c.Receive(b, now)
	if r := c.Result(); r.Addresses != 2 || r.Duplicates != 1 || len(c.TakeNew()) != 2 {
		t.Errorf("repeats: %+v", r)
	}
	// A reply before any request is not an answer.
	c.Start(&Options{}, masterAddr, 0, false)
	c.Receive(b, now)
	if r := c.Result(); r.Pages != 0 || c.Heard() {
		t.Errorf("a reply before the request was read: %+v", r)
	}
}
