package bedrock

import (
	"net/netip"
	"testing"
)

// recorder collects what a server sends.
type recorder struct{ sent [][]byte }

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.sent = append(r.sent, append([]byte(nil), b...))
	return len(b), nil
}

var client1 = netip.MustParseAddrPort("192.0.2.1:40000")

func testStatus() *Status {
	v := int32(1)
	return &Status{Edition: Text("MCPE"), MOTD: Text("fuzz"), Protocol: &v, Version: Text("1.21"), Online: &v, Max: &v}
}

// FuzzServerHandlePacket feeds a datagram to a Bedrock server 20 times
// from one source, and checks how its pongs are kept from amplifying: only
// a well-formed ping is answered, no pong is larger than MaxPongSize, and
// the source gets no more pongs than its budget (a burst of 2 here, the
// clock standing still).
func FuzzServerHandlePacket(f *testing.F) {
	ping, _ := Ping{Time: 7}.AppendBinary(nil)
	f.Add(ping)
	open, _ := Ping{Time: 7, OpenConnections: true}.AppendBinary(nil)
	f.Add(open)
	f.Add(append(ping, make([]byte, 1000)...))
	f.Add(ping[:32])
	f.Add([]byte{})
	f.Add([]byte{0xFE, 0xFD, 0x09, 0, 0, 0, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		s := &Server{Handler: NewStaticHandler(testStatus()), RateLimit: 1, RateBurst: 2, clock: func() int64 { return 1 }}
		var rec recorder
		for range 20 {
			s.HandlePacket(&rec, client1, b)
		}
		_, err := ParsePing(b)
		switch {
		case err != nil && len(rec.sent) > 0:
			t.Fatalf("%x is no ping (%v) and got %d replies", b, err, len(rec.sent))
		case len(rec.sent) > 2:
			t.Fatalf("%d pongs for 20 pings from one source; the budget is 2", len(rec.sent))
		}
		for _, out := range rec.sent {
			if len(out) > DefaultMaxPongSize {
				t.Fatalf("a %d-byte pong exceeds MaxPongSize", len(out))
			}
		}
	})
}

// A status that would make the pong larger than MaxPongSize is not sent;
// the global budget holds across sources.
func TestServerBudgets(t *testing.T) {
	t.Parallel()
	ping, _ := Ping{Time: 7}.AppendBinary(nil)
	big := testStatus()
	big.MOTD = make(Text, 600)
	for i := range big.MOTD {
		big.MOTD[i] = 'x'
	}
	s := &Server{Handler: NewStaticHandler(big), RateLimit: -1, GlobalLimit: -1}
	var rec recorder
	s.HandlePacket(&rec, client1, ping)
	if len(rec.sent) != 0 {
		t.Errorf("a pong over MaxPongSize went out")
	}
	now := int64(1)
	g := &Server{Handler: NewStaticHandler(testStatus()), RateLimit: -1, GlobalLimit: 3, clock: func() int64 { return now }}
	rec = recorder{}
	for i := range 10 {
		g.HandlePacket(&rec, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, byte(i)}), 1), ping)
	}
	if len(rec.sent) != 3 {
		t.Errorf("%d pongs to 10 sources, the global budget is 3", len(rec.sent))
	}
	now += 1e9 // a second later the budget is back
	g.HandlePacket(&rec, client1, ping)
	if len(rec.sent) != 4 {
		t.Errorf("the global budget did not refill")
	}
}

// Parsing a pong and answering a ping stay within their allocation
// budgets.
func TestAllocs(t *testing.T) {
	pong, _ := Pong{Time: 1, Status: Text("MCPE;x;545;1.19.21;111;300;-3;line2;Survival;1;19132;0;")}.AppendBinary(nil)
	if n := testing.AllocsPerRun(100, func() {
		p, _ := ParsePong(pong)
		_ = ParseStatus(p.Status)
	}); n > 8 {
		t.Errorf("pong: %v allocations, budget 8", n)
	}
	s := &Server{Handler: NewStaticHandler(testStatus()), RateLimit: -1, GlobalLimit: -1}
	ping, _ := Ping{Time: 7}.AppendBinary(nil)
	var rec recorder
	if n := testing.AllocsPerRun(100, func() { rec.sent = rec.sent[:0]; s.HandlePacket(&rec, client1, ping) }); n > 6 {
		t.Errorf("server: %v allocations a pong, budget 6", n)
	}
}
