package battleye

import (
	"bytes"
	"net/netip"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
)

// FuzzParsePacket: no input panics, and what parses encodes back to the
// same bytes.
func FuzzParsePacket(f *testing.F) {
	for _, v := range vectors {
		f.Add(testutil.Unhex(f, v.hex))
	}
	part, _ := Packet{Type: TypeCommand, Seq: 3, Total: 2, Index: 1, Data: []byte("x")}.AppendBinary(nil)
	f.Add(part)
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePacket(b)
		if err != nil {
			return
		}
		enc, err := p.AppendBinary(nil)
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("round trip: %x -> %+v -> %x, %v", b, p, enc, err)
		}
	})
}

// FuzzParsePlayers: no panic, at most one player per line, and the
// names and GUIDs come from the text.
func FuzzParsePlayers(f *testing.F) {
	f.Add(playersDayZ)
	f.Add(playersReforger)
	f.Add("0 1.2.3.4 x - (Lobby)")
	f.Fuzz(func(t *testing.T, text string) {
		ps, _ := ParsePlayers(text)
		if len(ps) > strings.Count(text, "\n")+1 {
			t.Fatalf("%d players from %d lines", len(ps), strings.Count(text, "\n")+1)
		}
		for _, p := range ps {
			if !strings.Contains(text, p.Name) || !strings.Contains(text, p.GUID) {
				t.Fatalf("player %+v not in the text", p)
			}
		}
	})
}

// FuzzParseBans and FuzzParseAdmins: no panic, bounded output.
func FuzzParseBans(f *testing.F) {
	f.Add(bansText)
	f.Fuzz(func(t *testing.T, text string) {
		bs, _ := ParseBans(text)
		as, _ := ParseAdmins(text)
		if n := strings.Count(text, "\n") + 1; len(bs) > n || len(as) > n {
			t.Fatalf("%d bans, %d admins from %d lines", len(bs), len(as), n)
		}
	})
}

// capture is a server socket's writer that counts what it sends.
type capture struct{ n, datagrams int }

func (c *capture) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	c.n += len(b)
	c.datagrams++
	return len(b), nil
}

// FuzzServerDatagram: the server takes any datagram from a source that is
// not logged in without panicking, and never answers it with more than
// the request plus 32 bytes, nor three times the request (no
// amplification).
func FuzzServerDatagram(f *testing.F) {
	for _, v := range vectors {
		f.Add(testutil.Unhex(f, v.hex))
	}
	cmd, _ := Packet{Type: TypeCommand, Seq: 1, Data: []byte("players")}.AppendBinary(nil)
	f.Add(cmd)
	s := &Server{Password: "secret", RateLimit: -1, MaxFailedLogins: -1}
	s.init()
	defer s.Shutdown(f.Context())
	from := netip.MustParseAddrPort("192.0.2.1:5000")
	f.Fuzz(func(t *testing.T, b []byte) {
		var w capture
		s.handle(&w, from, b)
		if w.n > len(b)+32 || w.n > 3*len(b) {
			t.Fatalf("%d bytes answered to %d from an unauthenticated source", w.n, len(b))
		}
		s.mu.Lock()
		for _, cl := range s.clients {
			s.forget(cl, "")
		}
		s.mu.Unlock()
	})
}
