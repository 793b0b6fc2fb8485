package a2s

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
)

// FuzzClientDispatch hands arbitrary datagrams to the client's demultiplexer
// while a query of every kind is pending: nothing may panic, and whatever is
// delivered must be a whole reply of the kind the query waits for.
func FuzzClientDispatch(f *testing.F) {
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A', 1, 2, 3, 4})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'I', 17, 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'D', 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'E', 0, 0})
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'j', 0})
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 2, 0, 0xE0, 0x04, 0xFF, 0xFF, 0xFF, 0xFF, 'E', 1, 0})
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 1, 0, 0, 0, 2, 1, 0xE0, 0x04, 'a', 0, 'b', 0})
	f.Add([]byte{0xFE, 0xFF, 0xFF, 0xFF, 9, 0, 0, 0, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 'D', 0})
	addr := netip.MustParseAddrPort("127.0.0.1:27015")
	f.Fuzz(func(t *testing.T, data []byte) {
		sent := &recordingConn{}
		c := &Client{conn: sent, peers: make(map[netip.AddrPort]*peer), challenges: make(map[netip.AddrPort]uint32)}
		var calls []*call
		for _, k := range []queryKind{kindInfo, kindPlayers, kindRules, kindPing} {
			cl, _, _, err := c.register(addr, k)
			if err != nil {
				t.Fatal(err)
			}
			calls = append(calls, cl)
		}
		// the datagram, then its halves, as if split across reads
		c.dispatch(addr, data)
		c.dispatch(addr, data[:len(data)/2])
		c.dispatch(addr, data[len(data)/2:])
		for _, cl := range calls {
			for len(cl.ch) > 0 {
				ev := <-cl.ch
				if ev.reply == nil {
					continue
				}
				b := ev.reply
				if !hasHeader(b) {
					t.Fatalf("delivered %x without the header", b)
				}
				if k, ok := kindOf(b[4]); !ok || k != cl.kind {
					t.Fatalf("%v query got a %q reply", cl.kind, b[4])
				}
			}
			c.finish(cl)
		}
		// What the client resent after 'A' replies are requests carrying
		// a challenge (which may be the -1 of "no challenge", if that is
		// what the 'A' said), to the server.
		for _, d := range sent.datagrams {
			req, err := ParseRequest(d.b)
			if err != nil || d.to != addr || (!req.HasChallenge && !bytes.HasSuffix(d.b, []byte{0xFF, 0xFF, 0xFF, 0xFF})) {
				t.Fatalf("resent %x to %v: %+v, %v", d.b, d.to, req, err)
			}
		}
	})
}

// recordingConn is a net.PacketConn that records what is written to it.
type recordingConn struct {
	net.PacketConn // nil: only WriteTo is called
	datagrams      []sentDatagram
}

type sentDatagram struct {
	to netip.AddrPort
	b  []byte
}

func (r *recordingConn) WriteTo(b []byte, to net.Addr) (int, error) {
	r.datagrams = append(r.datagrams, sentDatagram{to: to.(*net.UDPAddr).AddrPort(), b: bytes.Clone(b)})
	return len(b), nil
}
