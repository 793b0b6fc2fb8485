package master

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/serverlist"
)

// FuzzParseQuery checks that any datagram parses or fails with a
// *ParseError, and that a query that parses writes a datagram that parses
// to the same query.
func FuzzParseQuery(f *testing.F) {
	f.Add(testutil.Unhex(f, notesQuery))
	for _, q := range []Query{
		{Region: serverlist.RegionEurope},
		{Region: serverlist.RegionUSEast, Seed: ap("203.0.113.7:27015"), Filter: `\gamedir\cstrike`},
		{Region: serverlist.RegionWorld, Filter: `\nor\1\secure\1\napp\500`},
	} {
		b, _ := q.AppendBinary(nil)
		f.Add(b)
	}
	f.Add([]byte("1\xff0.0.0.0:0\x00\\gamedir\\cstrike")) // no final NUL
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := ParseQuery(b)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(b) {
				t.Fatalf("ParseQuery(%x): %v, not a *ParseError within the datagram", b, err)
			}
			return
		}
		out, err := q.AppendBinary(nil)
		if err != nil {
			if errors.Is(err, ErrNULInText) {
				t.Fatalf("ParseQuery(%x) returned a filter holding a NUL: %q", b, q.Filter)
			}
			t.Fatalf("ParseQuery(%x) = %+v, which does not encode: %v", b, q, err)
		}
		back, err := ParseQuery(out)
		if err != nil || back != q {
			t.Fatalf("round trip %+v -> %x -> %+v, %v", q, out, back, err)
		}
	})
}

// FuzzParseReply checks that any datagram parses or fails with a
// *ParseError, that what parses encodes back to the bytes it was read
// from (up to the marker), and that dst is extended, never replaced.
func FuzzParseReply(f *testing.F) {
	f.Add(testutil.Unhex(f, "FFFFFFFF660A CB007107 6987 C0000201 0050 000000000000"))
	f.Add(testutil.Unhex(f, "FFFFFFFF660A"))
	f.Add(testutil.Unhex(f, "FFFFFFFF660A 000000000000 0A000001 0001"))
	f.Add(testutil.Unhex(f, "FFFFFFFF660A 0A0000"))
	f.Fuzz(func(t *testing.T, b []byte) {
		prior := ap("192.0.2.9:9")
		addrs, end, err := ParseReply(b, []netip.AddrPort{prior})
		if len(addrs) == 0 || addrs[0] != prior {
			t.Fatalf("dst lost its first entry: %v", addrs)
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(b) {
				t.Fatalf("ParseReply(%x): %v", b, err)
			}
			return
		}
		out, err := AppendReply(nil, addrs[1:], end)
		if err != nil {
			t.Fatalf("AppendReply(%v): %v", addrs[1:], err)
		}
		if !bytes.HasPrefix(b, out) || !end && len(out) != len(b) {
			t.Fatalf("round trip %x -> %v (end %v) -> %x", b, addrs[1:], end, out)
		}
	})
}

// FuzzConversation hands a listing arbitrary datagrams, cut at every
// entry boundary into replies, between its requests and timer ticks:
// nothing may panic, every request it hands out must be a query a master
// reads and seeded with an address it received (or the start), the
// addresses it hands out are distinct, and it ends by its deadline at
// the latest.
func FuzzConversation(f *testing.F) {
	f.Add(testutil.Unhex(f, "FFFFFFFF660A CB007107 6987 C0000201 0050 000000000000"))
	f.Add(testutil.Unhex(f, "FFFFFFFF660A CB007107 6987"))
	f.Add(testutil.Unhex(f, "FFFFFFFF660A"))
	f.Add([]byte("\xff\xff\xff\xffI\x11name\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var c Conversation
		o := &Options{Query: Query{Filter: `\appid\10`}, Timeout: time.Second, Retries: 1, Deadline: 10 * time.Second, MaxPages: 50}
		c.Start(o, masterAddr, 0, false)
		now := time.Unix(1000, 0)
		received := map[netip.AddrPort]bool{Seed: true}
		handed := map[netip.AddrPort]bool{}
		send := func() {
			for {
				b, ok := c.AppendRequest(nil, now)
				if !ok {
					return
				}
				q, err := ParseQuery(b)
				if err != nil || q.Filter != o.Query.Filter {
					t.Fatalf("request %x: %+v, %v", b, q, err)
				}
				if !received[q.Seed] {
					t.Fatalf("request seeded with %v, which no reply listed", q.Seed)
				}
			}
		}
		take := func() {
			for _, a := range c.TakeNew() {
				if handed[a] {
					t.Fatalf("%v handed out twice", a)
				}
				handed[a] = true
			}
		}
		send()
		for _, d := range [][]byte{data, data[:len(data)/2]} {
			addrs, _, _ := ParseReply(d, nil)
			for _, a := range addrs {
				received[a] = true
			}
			c.Receive(d, now)
			take()
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
		take()
		r := c.Result()
		if now.After(time.Unix(1010, 0)) {
			t.Fatalf("done at %v, after the deadline", now)
		}
		if r.Addresses != len(handed) || r.Err == nil && !r.Complete {
			t.Fatalf("result %+v, %d handed out", r, len(handed))
		}
	})
}
