package bedrock

import (
	"bytes"
	"net/netip"
	"testing"
	"time"
)

func pongSeeds(f *testing.F) {
	for _, s := range []string{
		"MCPE;§r§4G§r§6a§r§ey§r§2B§r§1o§r§9w§r§ds§r§4e§r§6r;422;;1;69;3767071975391053022;;Default;1;19132;-1;",
		"MCPE;§r§aWILDWOOD SMP§r;545;1.19.21;111;300;-305653527360353208;line2;Survival;1;19132;0;",
		"", "MCEE;Class;", "MCPE;x;y;z;1;2;3;4;5;6;7;8;9;10;11;",
	} {
		b, _ := Pong{Time: 5, ServerGUID: -1, Status: Text(s)}.AppendBinary(nil)
		f.Add(b)
	}
	p, _ := Ping{Time: 5}.AppendBinary(nil)
	f.Add(p)
}

// FuzzParsePong: a pong that parses encodes back to the bytes read, and
// its status string comes back the same through ParseStatus and
// AppendStatus once normalised.
func FuzzParsePong(f *testing.F) {
	pongSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParsePing(b)
		p, err := ParsePong(b)
		if err != nil {
			return
		}
		out, err := p.AppendBinary(nil)
		if err != nil || !bytes.Equal(out, b[:len(out)]) {
			t.Fatalf("%+v encodes to %x (%v)", p, out, err)
		}
		s := ParseStatus(p.Status)
		norm, err := s.AppendStatus(nil)
		if err != nil {
			t.Fatalf("a parsed status does not encode: %v", err)
		}
		again, err := ParseStatus(norm).AppendStatus(nil)
		if err != nil || !bytes.Equal(again, norm) {
			t.Fatalf("status %q normalised to %q, then %q", p.Status, norm, again)
		}
	})
}

// FuzzConversation: arbitrary datagrams never panic a conversation, and it
// ends by its deadline.
func FuzzConversation(f *testing.F) {
	pongSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		q := &Query{Timeout: time.Second, Deadline: 3 * time.Second}
		var c Conversation
		c.Start(q, netip.MustParseAddrPort("192.0.2.1:19132"), 0, false)
		now := time.Unix(1000, 0)
		for step := 0; !c.Done() && step < 100; step++ {
			for c.Pending() {
				c.AppendRequest(nil, now)
			}
			reply := bytes.Clone(b)
			if len(reply) >= 9 && step%2 == 0 {
				copy(reply[1:9], []byte{0, 0, 0, 0xE8, 0xD4, 0xA5, 0x10, 0x00}) // the first ping's time, 1e12 ms
			}
			c.Receive(reply, now)
			now = now.Add(500 * time.Millisecond)
			c.Tick(now)
		}
		if r := c.Result(); !c.Done() || (r.Err == nil) == (r.Status == nil) {
			t.Fatalf("done %v, result %+v", c.Done(), r)
		}
	})
}
