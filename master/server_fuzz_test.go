package master

import (
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/serverlist"
)

// recorder is an in-memory PacketWriter that counts what each address is
// sent.
type recorder struct {
	mu    sync.Mutex
	sent  [][]byte
	bytes map[netip.AddrPort]int
}

func (r *recorder) WriteToUDPAddrPort(b []byte, to netip.AddrPort) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, append([]byte(nil), b...))
	if r.bytes == nil {
		r.bytes = map[netip.AddrPort]int{}
	}
	r.bytes[to] += len(b)
	return len(b), nil
}

// maxReply is the largest reply of a server with the default page size.
const maxReply = ReplyHeaderLen + EntryLen*DefaultPageSize

// testFleet is n servers of app 10 (every other one empty), in one
// region.
func testFleet(n int) *serverlist.Fleet {
	servers := make([]serverlist.Server, n)
	for i := range servers {
		servers[i] = serverlist.Server{
			Addr:  netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)}), 27015),
			AppID: 10, Players: i % 2, MaxPlayers: 8, Region: serverlist.RegionEurope, Dedicated: true,
		}
	}
	return serverlist.NewFleet(servers)
}

// clockServer is a Server with the default budgets over fleet whose clock
// the test sets.
func clockServer(fleet *serverlist.Fleet) (*Server, *int64) {
	now := new(int64)
	s := &Server{Handler: FleetHandler(fleet)}
	s.clock = func() int64 { return *now }
	return s, now
}

// FuzzServerHandlePacket sends one datagram again and again from four
// sources, at times the fuzzer picks, and checks the amplification
// bounds: a datagram that is not a well-formed query is never answered; a
// reply is one datagram of at most one page; and what each source is sent
// never exceeds its budget (RateBurst pages, and RateLimit pages a second
// since its first query) nor the server its global one, whatever the
// queries.
func FuzzServerHandlePacket(f *testing.F) {
	f.Add(testutil.Unhex(f, notesQuery), []byte{0, 0, 1, 0, 2, 0, 3, 0})
	f.Add(testutil.Unhex(f, "31 03 302E302E302E303A30 00 00"), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 0, 255})
	f.Add([]byte("1\xff10.2.0.230:27015\x00\x00"), []byte{1, 20, 1, 20, 1, 20})
	f.Add([]byte("1\xff0.0.0.0:0\x00"), []byte{0, 0})
	f.Add([]byte("1"), []byte{0, 0})
	fleet := testFleet(1000)
	f.Fuzz(func(t *testing.T, b []byte, script []byte) {
		s, now := clockServer(fleet)
		_, perr := ParseQuery(b)
		wellFormed := perr == nil && len(b) >= MinQueryLen
		var rec recorder
		first := map[netip.AddrPort]int64{}
		for i := 0; i+1 < len(script) && i < 512; i += 2 {
			from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{192, 0, 2, script[i] % 4}), 40000)
			*now += int64(script[i+1]) * int64(100*time.Millisecond)
			if _, ok := first[from]; !ok {
				first[from] = *now
			}
			before := len(rec.sent)
			s.HandlePacket(&rec, from, b)
			switch n := len(rec.sent) - before; {
			case n > 1:
				t.Fatalf("one query answered with %d datagrams", n)
			case n == 1 && !wellFormed:
				t.Fatalf("%x (%d bytes, %v) is no query, and was answered", b, len(b), perr)
			case n == 1 && len(rec.sent[before]) > maxReply:
				t.Fatalf("a reply of %d bytes, more than a page", len(rec.sent[before]))
			}
			for src, t0 := range first {
				budget := (DefaultRateBurst + DefaultRateLimit*float64(*now-t0)/1e9) * maxReply
				if got := rec.bytes[src]; float64(got) > budget {
					t.Fatalf("%v was sent %d bytes within %v, more than its budget of %.0f", src, got, time.Duration(*now-t0), budget)
				}
			}
		}
		if n := len(rec.sent); n > DefaultGlobalLimit+int(*now/1e9)*DefaultGlobalLimit {
			t.Fatalf("%d pages sent in %v, more than the global budget", n, time.Duration(*now))
		}
	})
}

// The amplification figures: a source flooding the server with the
// shortest query for a minute, and one that sends exactly its budget,
// are sent at most their budget; the figures are logged (see the
// package comment).
func TestServerAmplification(t *testing.T) {
	t.Parallel()
	query, _ := (&Query{Region: serverlist.RegionWorld}).AppendBinary(nil)
	victim := netip.MustParseAddrPort("198.51.100.1:27005")
	for _, tc := range []struct {
		name  string
		every time.Duration // between two queries
	}{
		{"flood of 1,000 queries a second", time.Millisecond},
		{"one query every 2 s (the sustained budget)", 2 * time.Second},
	} {
		s, now := clockServer(testFleet(10000))
		var rec recorder
		in := 0
		for *now = 0; *now < int64(time.Minute); *now += int64(tc.every) {
			s.HandlePacket(&rec, victim, query)
			in += len(query)
		}
		out := rec.bytes[victim]
		ceiling := (DefaultRateBurst + DefaultRateLimit*60) * maxReply
		if float64(out) > ceiling {
			t.Errorf("%s: %d bytes sent in a minute, above the ceiling of %.0f", tc.name, out, ceiling)
		}
		t.Logf("%s: %d bytes in, %d bytes out (%.2f×) in a minute; %d-byte query, %d-byte pages; ceiling %.0f bytes a minute",
			tc.name, in, out, float64(out)/float64(in), len(query), maxReply, ceiling)
	}
}
