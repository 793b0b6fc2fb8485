package mcquery

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

var server = netip.MustParseAddrPort("192.0.2.1:25565")

// sent drives c with no answer until it is done and returns the types of
// the requests it sent.
func drive(c *Conversation, now time.Time, answer func(req []byte) []byte) (types []byte) {
	for step := 0; !c.Done() && step < 1000; step++ {
		for c.Pending() {
			req, _ := c.AppendRequest(nil, now)
			types = append(types, req[2])
			if reply := answer(req); reply != nil {
				c.Receive(reply, now.Add(time.Millisecond))
			}
		}
		if w := c.Wake(); !w.IsZero() {
			now = w
		}
		c.Tick(now)
	}
	return types
}

// A stat that gets no answer is a stale token: the conversation
// handshakes again once, then resends the stat Retries times.
func TestConversationStaleToken(t *testing.T) {
	t.Parallel()
	q := &Query{Retries: 1}
	var c Conversation
	c.Start(q, server, 0, false)
	types := drive(&c, time.Unix(1, 0), func(req []byte) []byte {
		if req[2] == TypeHandshake {
			return AppendHandshakeReply(nil, q.sessionID(), 77)
		}
		return nil
	})
	if string(types) != "\x09\x00\x09\x00\x00" {
		t.Errorf("sent % x, want handshake, stat, handshake, stat, stat", types)
	}
	if err := c.Result().Err; !errors.Is(err, ErrTimeout) {
		t.Errorf("%v", err)
	}
}

// A cached token goes straight to the stat; the round trip is the stat's.
func TestConversationCachedToken(t *testing.T) {
	t.Parallel()
	q := &Query{Full: true}
	var c Conversation
	c.Start(q, server, 77, true)
	full := &FullStat{Players: []Text{Text("a")}}
	full.Set("numplayers", Text("1"))
	reply, _ := full.AppendReply(nil, q.sessionID())
	types := drive(&c, time.Unix(1, 0), func(req []byte) []byte { return reply })
	r := c.Result()
	if string(types) != "\x00" || r.Err != nil || r.Full.NumPlayers() != 1 || r.RTT != time.Millisecond {
		t.Errorf("sent % x, result %+v", types, r)
	}
	if rtt, clean := c.RoundTrip(); rtt != time.Millisecond || !clean {
		t.Errorf("RoundTrip %v %v", rtt, clean)
	}
	if tok, ok := c.Challenge(); !ok || tok != 77 {
		t.Errorf("Challenge %d %v", tok, ok)
	}
}

// Replies of another session are ignored; the Deadline ends everything.
func TestConversationDeadline(t *testing.T) {
	t.Parallel()
	q := &Query{Timeout: time.Second, Retries: 100, Deadline: 2500 * time.Millisecond}
	var c Conversation
	c.Start(q, server, 0, false)
	start := time.Unix(1, 0)
	n := len(drive(&c, start, func(req []byte) []byte { return AppendHandshakeReply(nil, 999, 5) }))
	if n != 2 || !errors.Is(c.Result().Err, ErrTimeout) || c.Heard() {
		t.Errorf("%d requests, %v, heard %v", n, c.Result().Err, c.Heard())
	}
}

// Session ids are masked so that every byte is below 0x80.
func TestConversationSessionMask(t *testing.T) {
	t.Parallel()
	var c Conversation
	c.Start(&Query{SessionID: 0xFFFFFFFF}, server, 0, false)
	req, _ := c.AppendRequest(nil, time.Unix(1, 0))
	for _, b := range req[3:7] {
		if b >= 0x80 {
			t.Fatalf("session id bytes % x", req[3:7])
		}
	}
}

// Receive does not retain the datagram, as its driver reuses it (the
// read loop's buffer, a pooled copy): the stat read survives the buffer
// being overwritten.
func TestConversationDoesNotRetain(t *testing.T) {
	t.Parallel()
	for _, full := range []bool{false, true} {
		q := &Query{Full: full}
		var c Conversation
		c.Start(q, server, 77, true)
		fs := &FullStat{Players: []Text{Text("Steve")}}
		fs.Set("hostname", Text("a server"))
		fs.Set("numplayers", Text("1"))
		reply, _ := fs.AppendReply(nil, q.sessionID())
		if !full {
			reply, _ = (&BasicStat{MOTD: Text("a server"), NumPlayers: 1}).AppendReply(nil, q.sessionID())
		}
		drive(&c, time.Unix(1, 0), func([]byte) []byte { return reply })
		for i := range reply {
			reply[i] = 'x'
		}
		r := c.Result()
		var host Text
		if r.Full != nil {
			host, _ = r.Full.Value("hostname")
		}
		switch {
		case r.Err != nil:
			t.Errorf("full %v: %v", full, r.Err)
		case full && (host.String() != "a server" || r.Full.Players[0].String() != "Steve"):
			t.Errorf("full stat overwritten: %q, %q", host, r.Full.Players)
		case !full && r.Basic.MOTD.String() != "a server":
			t.Errorf("basic stat overwritten: %q", r.Basic.MOTD)
		}
	}
}
