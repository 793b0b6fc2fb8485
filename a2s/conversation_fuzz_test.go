package a2s

import (
	"net/netip"
	"testing"
	"time"
)

// FuzzConversation hands arbitrary datagrams to conversations asking every
// section, with and without a known challenge: nothing may panic, every
// request handed out must be one a server reads, the conversation must end
// by its deadline at the latest, and then every section asked holds a
// value or an error, and no other does.
func FuzzConversation(f *testing.F) {
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A', 1, 2, 3, 4})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'I', 17, 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'D', 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'E', 0, 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'j', 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'l', 'n', 'o', 0})
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 2, 0, 0xE0, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 'E', 1, 0})
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 2, 1, 0xE0, 0x04, 'a', 0, 'b', 0})
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 9, 0, 0, 0, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 'D', 0})
	addr := netip.MustParseAddrPort("127.0.0.1:27015")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, sections := range []Sections{AllSections, SectionInfo | SectionPing} {
			for _, known := range []bool{false, true} {
				q := &Options{Sections: sections, Timeout: time.Second, Retries: 1, Deadline: 10 * time.Second, LegacyChallenge: known}
				var c Conversation
				c.Start(q, addr, 7, known)
				now := time.Unix(1000, 0)
				send := func() {
					for {
						b, ok := c.AppendRequest(nil, now)
						if !ok {
							return
						}
						if _, err := ParseRequest(b); err != nil {
							t.Fatalf("request %x: %v", b, err)
						}
					}
				}
				send()
				// the datagram, then its halves, as if split across reads
				for _, d := range [][]byte{data, data[:len(data)/2], data[len(data)/2:]} {
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
				if now.After(time.Unix(1010, 0)) {
					t.Fatalf("done at %v, after the deadline", now)
				}
				r := c.Result()
				for i, got := range [numSections]bool{
					r.Info != nil || r.InfoErr != nil,
					r.Players != nil || r.PlayersErr != nil,
					r.Rules != nil || r.RulesErr != nil,
					r.PingErr != nil || (sections&SectionPing != 0 && r.RTT > 0),
				} {
					if asked := sections&(1<<i) != 0; got != asked && (i != 3 || got) {
						t.Fatalf("section %s: asked %v, has a value or error %v: %+v", sectionNames[i], asked, got, r)
					}
				}
			}
		}
	})
}
