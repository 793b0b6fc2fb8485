package satisfactory

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

// FuzzParseServerState checks that any datagram parses or fails with a
// *ParseError within it, and that a reply that parses encodes back to the
// bytes it was read from (up to its terminator).
func FuzzParseServerState(f *testing.F) {
	f.Add(testutil.Unhex(f, aReply))
	f.Add(testutil.Unhex(f, aReply)[:37])
	f.Add(testutil.Unhex(f, gamedigPoll))
	f.Add(testutil.Unhex(f, "D5F6 01 01 0505050505050505 00 00000000 0000000000000000 00 0000 01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := ParseServerState(b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(b) {
				t.Fatalf("ParseServerState(%x): %v", b, err)
			}
			if _, ok := ReplyCookie(b); !ok && len(b) >= 12 && errors.Is(err, ErrTruncated) && b[2] == TypeReply && b[3] == Version {
				t.Fatalf("%x: a reply header ReplyCookie does not read", b)
			}
			return
		}
		out, err := s.AppendBinary(nil)
		if err != nil || !bytes.HasPrefix(b, out) || s.Len() != len(out) {
			t.Fatalf("round trip %x -> %+v -> %x, %v", b, s, out, err)
		}
	})
}

// FuzzParsePoll checks that a poll parses or fails with a *ParseError,
// and round-trips.
func FuzzParsePoll(f *testing.F) {
	f.Add(testutil.Unhex(f, gamedigPoll))
	f.Add(testutil.Unhex(f, aReply))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePoll(b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParsePoll(%x): %v", b, err)
			}
			return
		}
		out, _ := p.AppendBinary(nil)
		if !bytes.Equal(out, b[:PollLen]) {
			t.Fatalf("round trip %x -> %x", b, out)
		}
	})
}

// FuzzConversation hands a poll arbitrary datagrams, and the same with
// the cookie of its poll written in: nothing may panic, every request is
// a poll, and it ends by its deadline at the latest, answered or with an
// error.
func FuzzConversation(f *testing.F) {
	f.Add(testutil.Unhex(f, aReply))
	f.Add(testutil.Unhex(f, "D5F6 01 02 0505050505050505"))
	f.Add([]byte("\xff\xff\xff\xffI"))
	addr := netip.MustParseAddrPort("192.0.2.1:7777")
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Conversation
		c.Start(&Options{Timeout: time.Second, Retries: 1, Deadline: 10 * time.Second}, addr, 0, false)
		now := time.Unix(1000, 0)
		var cookie []byte
		send := func() {
			for {
				b, ok := c.AppendRequest(nil, now)
				if !ok {
					return
				}
				if _, err := ParsePoll(b); err != nil {
					t.Fatalf("request %x: %v", b, err)
				}
				cookie = b[4:12]
			}
		}
		send()
		mine := bytes.Clone(data)
		if len(mine) >= 12 {
			copy(mine[4:12], cookie)
		}
		for _, d := range [][]byte{data, mine} {
			c.Receive(d, now)
			send()
		}
		for i := 0; !c.Done(); i++ {
			wake := c.Wake()
			if wake.IsZero() || i > 100 {
				t.Fatalf("not done, and wake %v after %d ticks", wake, i)
			}
			now = wake
			c.Tick(now)
			send()
		}
		if r := c.Result(); (r.State == nil) == (r.Err == nil) || now.After(time.Unix(1010, 0)) {
			t.Fatalf("result %+v at %v", r, now)
		}
	})
}

// FuzzServerHandlePacket checks the amplification bound: only a
// well-formed poll is answered, with one reply of at most MaxReplySize,
// and a source gets at most its burst of replies at once.
func FuzzServerHandlePacket(f *testing.F) {
	f.Add(testutil.Unhex(f, gamedigPoll))
	f.Add(testutil.Unhex(f, aReply))
	f.Add(testutil.Unhex(f, "D5F6 00 01 0505050505050505"))
	name := bytes.Repeat([]byte("n"), 400)
	s := &Server{Handler: HandlerFunc(func(netip.AddrPort) *ServerState {
		return &ServerState{State: StatePlaying, Name: name, SubStates: make([]SubState, 20)}
	})}
	s.clock = func() int64 { return 1 }
	burst := int(2 * DefaultRateLimit)
	f.Fuzz(func(t *testing.T, b []byte) {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, byte(len(b))}), 1)
		var rec recorder
		for range burst + 5 {
			s.HandlePacket(&rec, from, b)
		}
		_, perr := ParsePoll(b)
		switch {
		case perr != nil && len(rec.sent) > 0:
			t.Fatalf("%x is no poll (%v), and was answered", b, perr)
		case len(rec.sent) > burst:
			t.Fatalf("%d replies to one source at once, the burst is %d", len(rec.sent), burst)
		}
		for _, out := range rec.sent {
			if len(out) > DefaultMaxReplySize {
				t.Fatalf("a %d-byte reply", len(out))
			}
		}
	})
}
