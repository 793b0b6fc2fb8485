package satisfactory

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

var server = netip.MustParseAddrPort("192.0.2.1:7777")

// reply is the reply of the "playing" state to the poll req.
func reply(t *testing.T, req []byte) []byte {
	t.Helper()
	p, err := ParsePoll(req)
	if err != nil {
		t.Fatalf("poll %x: %v", req, err)
	}
	s := &ServerState{Cookie: p.Cookie, State: StatePlaying, NetCL: 1, Name: Text("x")}
	b, _ := s.AppendBinary(nil)
	return b
}

// A reply to the first poll that comes after the resend still names its
// poll: the round trip is that poll's; each poll has its own cookie.
func TestConversationMatchesByCookie(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.Start(&Options{}, server, 0, false)
	t0 := time.Unix(100, 0)
	first, _ := c.AppendRequest(nil, t0)
	c.Tick(t0.Add(DefaultTimeout))
	if !c.Resending() {
		t.Fatal("no resend after the timeout")
	}
	second, _ := c.AppendRequest(nil, t0.Add(DefaultTimeout))
	p1, _ := ParsePoll(first)
	p2, _ := ParsePoll(second)
	if p1.Cookie == p2.Cookie {
		t.Fatal("two polls carry one cookie")
	}
	// Someone else's reply first: not this conversation's.
	other := &ServerState{Cookie: p1.Cookie + 1, Name: Text("other")}
	ob, _ := other.AppendBinary(nil)
	c.Receive(ob, t0.Add(1050*time.Millisecond))
	if c.Done() || c.Heard() {
		t.Fatal("a reply to another poll was taken")
	}
	c.Receive(reply(t, first), t0.Add(1100*time.Millisecond))
	r := c.Result()
	if !c.Done() || r.Err != nil || r.RTT != 1100*time.Millisecond || r.State.Name.String() != "x" {
		t.Errorf("done %v, %+v", c.Done(), r)
	}
	if rtt, clean := c.RoundTrip(); rtt != r.RTT || !clean {
		t.Errorf("RoundTrip = %v, %v", rtt, clean)
	}
	if _, ok := c.Challenge(); ok {
		t.Error("the protocol has no challenge")
	}
}

// Retries: 1 + Retries polls, then ErrTimeout, a net.Error matching
// os.ErrDeadlineExceeded that names the server.
func TestConversationRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ retries, sends int }{{-1, 1}, {0, 1 + DefaultRetries}, {4, 5}} {
		var c Conversation
		c.Start(&Options{Retries: tc.retries, Deadline: -1}, server, 0, false)
		now, sends := time.Unix(1, 0), 0
		for !c.Done() {
			if _, ok := c.AppendRequest(nil, now); ok {
				sends++
			}
			now = c.Wake()
			c.Tick(now)
		}
		err := c.Result().Err
		var ne net.Error
		if sends != tc.sends || !errors.Is(err, ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() ||
			!strings.HasPrefix(err.Error(), "satisfactory: state "+server.String()+": ") {
			t.Errorf("Retries %d: %d sends, %v", tc.retries, sends, err)
		}
	}
	// The default Deadline ends it within 5 s whatever the retries.
	var c Conversation
	c.Start(&Options{Retries: 100}, server, 0, false)
	now := time.Unix(1, 0)
	for !c.Done() {
		c.AppendRequest(nil, now)
		now = c.Wake()
		c.Tick(now)
	}
	if d := now.Sub(time.Unix(1, 0)); d != DefaultDeadline || !errors.Is(c.Result().Err, ErrTimeout) {
		t.Errorf("ended after %v: %v", d, c.Result().Err)
	}
}

// What is not a reply makes ErrNotSatisfactory (with the parse error),
// not a timeout; a reply in another version is one such; a malformed
// reply to our poll fails at once; ICMP, the context and the driver end
// it with their errors.
func TestConversationErrors(t *testing.T) {
	t.Parallel()
	now := time.Unix(1, 0)
	var c Conversation
	c.Start(&Options{Retries: -1}, server, 0, false)
	req, _ := c.AppendRequest(nil, now)
	v2 := reply(t, req)
	v2[3] = 2
	c.Receive(v2, now)
	c.Receive([]byte("\xff\xff\xff\xffI"), now)
	c.Tick(c.Wake())
	err := c.Result().Err
	var pe *ParseError
	if !errors.Is(err, ErrNotSatisfactory) || !errors.Is(err, ErrVersion) || !errors.As(err, &pe) || errors.Is(err, ErrTimeout) {
		t.Errorf("version 2: %v", err)
	}

	c.Start(&Options{}, server, 0, false)
	req, _ = c.AppendRequest(nil, now)
	bad := reply(t, req)
	bad[len(bad)-1] = 7
	c.Receive(bad, now)
	if err := c.Result().Err; !c.Done() || !errors.Is(err, ErrMalformed) {
		t.Errorf("a malformed reply: %v", err)
	}

	c.Start(&Options{}, server, 0, false)
	c.AppendRequest(nil, now)
	c.Unreachable(syscall.ECONNREFUSED)
	if err := c.Result().Err; !errors.Is(err, ErrUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("unreachable: %v", err)
	}
	c.Start(&Options{}, server, 0, false)
	c.AppendRequest(nil, now)
	c.Fail(context.DeadlineExceeded)
	if err := c.Result().Err; !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a context's deadline: %v", err)
	}
	c.Start(&Options{}, server, 0, false)
	c.Fail(context.Canceled)
	if err := c.Result().Err; !errors.Is(err, context.Canceled) || errors.Is(err, ErrTimeout) {
		t.Errorf("canceled: %v", err)
	}
	// A reply before any poll is nobody's.
	c.Start(&Options{}, server, 0, false)
	c.Receive(reply(t, req), now)
	if c.Done() {
		t.Error("a reply before the poll ended the conversation")
	}
}
