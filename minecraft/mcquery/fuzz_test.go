package mcquery

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
)

func statSeeds(f *testing.F) {
	full := &FullStat{Players: []Text{Text("Steve"), Text("Alex")}}
	for _, k := range VanillaKeys {
		full.Set(k, Text("v"))
	}
	full.Set("hostname", Text("A \x00 server \xe9"))
	b, _ := full.AppendReply(nil, 0x01020304)
	f.Add(b)
	basic, _ := full.Basic().AppendReply(nil, 1)
	f.Add(basic)
	f.Add(testutil.Unhex(f, "090000000035373033353037373800"))
	f.Add(testutil.Unhex(f, "09000000013935313333303700"))
}

// FuzzParseRequest: a request that parses encodes back to the bytes the
// server read (the padding of a full stat is anything).
func FuzzParseRequest(f *testing.F) {
	for _, h := range []string{"FEFD0900000001", "FEFD00000000010091295B", "FEFD00000000010091295B00000000", "FEFD00000000010091295B0000000000"} {
		f.Add(testutil.Unhex(f, h))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRequest(b)
		if err != nil {
			return
		}
		out, err := r.AppendBinary(nil)
		n := min(len(out), BasicStatRequestLen)
		if err != nil || len(out) > len(b) || !bytes.Equal(out[:n], b[:n]) || r.Type == TypeStat && r.Full != (len(b) == FullStatRequestLen) {
			t.Fatalf("%+v encodes to %x, read from %x (%v)", r, out, b, err)
		}
	})
}

// FuzzParseReplies: the reply parsers never panic, and a full or basic
// stat without NULs in its text comes back the same through its encoder.
func FuzzParseReplies(f *testing.F) {
	statSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = ParseHandshakeReply(b)
		if sid, s, err := ParseFullStat(b); err == nil {
			out, err := s.AppendReply(nil, sid)
			if err != nil {
				return // text with NULs or empty names: not encodable
			}
			_, back, err := ParseFullStat(out)
			if err != nil || len(back.KV) != len(s.KV) || len(back.Players) != len(s.Players) {
				t.Fatalf("%+v came back as %+v, %v", s, back, err)
			}
		}
		if sid, s, err := ParseBasicStat(b); err == nil {
			if bytes.IndexByte(s.MOTD, 0) >= 0 {
				return
			}
			out, err := s.AppendReply(nil, sid)
			if err != nil {
				return
			}
			if _, back, err := ParseBasicStat(out); err != nil || back.HostPort != s.HostPort || !bytes.Equal(back.MOTD, s.MOTD) {
				t.Fatalf("%+v came back as %+v, %v", s, back, err)
			}
		}
	})
}

// FuzzConversation feeds a conversation arbitrary datagrams between its
// requests: it never panics, never sends without end, and ends by its
// deadline.
func FuzzConversation(f *testing.F) {
	statSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, full := range []bool{false, true} {
			q := &Query{Full: full, Timeout: time.Second, Deadline: 3 * time.Second}
			var c Conversation
			c.Start(q, netip.MustParseAddrPort("192.0.2.1:25565"), 0, false)
			now := time.Unix(1000, 0)
			sends := 0
			for step := 0; !c.Done() && step < 100; step++ {
				for c.Pending() {
					if _, ok := c.AppendRequest(nil, now); ok {
						sends++
					}
				}
				reply := bytes.Clone(b)
				if len(reply) >= 5 {
					copy(reply[1:5], []byte{1, 2, 3, 4}) // the default session id, masked
				}
				c.Receive(reply, now)
				now = now.Add(500 * time.Millisecond)
				c.Tick(now)
			}
			if !c.Done() || sends > 8 {
				t.Fatalf("done %v after %d sends", c.Done(), sends)
			}
			if r := c.Result(); (r.Err == nil) == (r.Basic == nil && r.Full == nil) {
				t.Fatalf("result %+v", r)
			}
		}
	})
}
