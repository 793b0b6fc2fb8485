package bedrock

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

var server = netip.MustParseAddrPort("192.0.2.1:19132")

// A pong to the first ping that comes after the resend still names its
// ping: the round trip is that ping's.
func TestConversationMatchesPingByTime(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.Start(&Query{Timeout: time.Second}, server, 0, false)
	t0 := time.Unix(100, 0)
	first, _ := c.AppendRequest(nil, t0)
	c.Tick(t0.Add(time.Second))
	if !c.Resending() {
		t.Fatal("no resend after the timeout")
	}
	second, _ := c.AppendRequest(nil, t0.Add(time.Second))
	p1, _ := ParsePing(first)
	p2, _ := ParsePing(second)
	if p1.Time == p2.Time {
		t.Fatal("two pings carry one time")
	}
	pong, _ := Pong{Time: p1.Time, Status: Text("MCPE;x;1;1;1;1;")}.AppendBinary(nil)
	c.Receive(pong, t0.Add(1100*time.Millisecond))
	r := c.Result()
	if !c.Done() || r.Err != nil || r.RTT != 1100*time.Millisecond {
		t.Errorf("done %v, %+v", c.Done(), r)
	}
	if _, ok := c.Challenge(); ok {
		t.Error("Bedrock has no challenge")
	}
}

func TestConversationRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ retries, sends int }{{-1, 1}, {0, 3}, {4, 5}} {
		var c Conversation
		c.Start(&Query{Retries: tc.retries, Deadline: -1}, server, 0, false)
		now, sends := time.Unix(1, 0), 0
		for !c.Done() {
			if _, ok := c.AppendRequest(nil, now); ok {
				sends++
			}
			now = c.Wake()
			c.Tick(now)
		}
		if sends != tc.sends || !errors.Is(c.Result().Err, ErrTimeout) {
			t.Errorf("Retries %d: %d sends, %v", tc.retries, sends, c.Result().Err)
		}
	}
}
