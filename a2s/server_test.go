package a2s_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/testutil"
)

// recorder is an in-memory PacketWriter.
type recorder struct {
	mu    sync.Mutex
	sent  [][]byte
	bytes int
}

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, append([]byte(nil), b...))
	r.bytes += len(b)
	return len(b), nil
}

func (r *recorder) take() (sent [][]byte, bytes int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	sent, bytes = r.sent, r.bytes
	r.sent, r.bytes = nil, 0
	return sent, bytes
}

func staticHandler(t testing.TB) *a2s.StaticHandler {
	h, err := a2s.NewStaticHandler(a2stest.DefaultInfo(), a2stest.DefaultPlayers(), a2stest.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func request(t testing.TB, typ byte, chal uint32, has bool, padding int) []byte {
	b, err := a2s.Request{Type: typ, Challenge: chal, HasChallenge: has, Padding: padding}.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var (
	client1 = netip.MustParseAddrPort("127.0.0.1:40001")
	client2 = netip.MustParseAddrPort("127.0.0.2:40001")
)

// challengeFor asks s for the challenge of from.
func challengeFor(t *testing.T, s *a2s.Server, from netip.AddrPort) uint32 {
	t.Helper()
	var rec recorder
	s.HandlePacket(&rec, from, request(t, a2s.TypePlayerRequest, a2s.AskChallenge, true, 0))
	sent, _ := rec.take()
	if len(sent) != 1 {
		t.Fatalf("challenge request got %d replies", len(sent))
	}
	c, err := a2s.ParseChallenge(sent[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestServerAmplification sends every kind of request without a valid
// challenge and checks that the replies never total more bytes than the
// request; then it checks that a proven request is answered in full.
func TestServerAmplification(t *testing.T) {
	t.Parallel()
	for _, accept := range []bool{false, true} {
		t.Run(fmt.Sprintf("AcceptPaddedInfo=%v", accept), func(t *testing.T) {
			testServerAmplification(t, &a2s.Server{Handler: staticHandler(t), RateLimit: -1, AcceptPaddedInfo: accept})
		})
	}
}

func testServerAmplification(t *testing.T, s *a2s.Server) {
	other := challengeFor(t, s, client2) // valid, but for another address
	raw := func(b ...byte) []byte { return append([]byte{0xFF, 0xFF, 0xFF, 0xFF}, b...) }
	cases := map[string][]byte{
		"info":                    request(t, a2s.TypeInfoRequest, 0, false, 0),
		"info wrong challenge":    request(t, a2s.TypeInfoRequest, 12345, true, 0),
		"info other address":      request(t, a2s.TypeInfoRequest, other, true, 0),
		"info padded":             request(t, a2s.TypeInfoRequest, 0, false, 1171),
		"info padded short":       request(t, a2s.TypeInfoRequest, 0, false, 1170),
		"rules padded":            request(t, a2s.TypeRulesRequest, a2s.AskChallenge, true, 1191),
		"info truncated":          raw('T', 'S', 'o'),
		"info bare":               raw('T'),
		"players ask":             request(t, a2s.TypePlayerRequest, a2s.AskChallenge, true, 0),
		"players wrong":           request(t, a2s.TypePlayerRequest, 777, true, 0),
		"players other address":   request(t, a2s.TypePlayerRequest, other, true, 0),
		"players no challenge":    raw('U'),
		"players short challenge": raw('U', 1, 2),
		"rules ask":               request(t, a2s.TypeRulesRequest, a2s.AskChallenge, true, 0),
		"rules wrong":             request(t, a2s.TypeRulesRequest, 42, true, 0),
		"rules no challenge":      raw('V'),
		"getchallenge":            raw('W'),
		"getchallenge padded":     raw('W', 0xFF, 0xFF, 0xFF, 0xFF),
		"ping":                    raw('i'),
		"ping padded":             append(raw('i'), make([]byte, 20)...),
		"unknown type":            raw('q', 1, 2, 3, 4, 5, 6, 7, 8),
		"split header":            {0xFE, 0xFF, 0xFF, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8},
		"challenge reply":         challengeReplyBytes(99),
		"empty":                   {},
	}
	answered := 0
	for name, req := range cases {
		var rec recorder
		s.HandlePacket(&rec, client1, req)
		sent, n := rec.take()
		if n > len(req) {
			t.Errorf("%s: %d-byte request got %d bytes in %d datagrams", name, len(req), n, len(sent))
		}
		if len(sent) > 0 {
			answered++
		}
	}
	if answered < 10 {
		t.Errorf("only %d of %d requests answered at all; the check is vacuous", answered, len(cases))
	}

	// A proven request gets the full reply.
	c := challengeFor(t, s, client1)
	for i, typ := range []byte{a2s.TypeInfoRequest, a2s.TypePlayerRequest, a2s.TypeRulesRequest, a2s.TypeInfoRequest} {
		var rec recorder
		req := request(t, typ, c, true, i/3*1175) // the last one padded
		s.HandlePacket(&rec, client1, req)
		sent, n := rec.take()
		if len(sent) == 0 || n <= 29 || sent[0][4] == a2s.TypeChallengeReply {
			t.Errorf("proven %q request (%d bytes): %d bytes answered in %d datagrams", typ, len(req), n, len(sent))
		}
	}
}

// TestServerAcceptPaddedInfo: with AcceptPaddedInfo, an A2S_INFO request
// of PaddedInfoSize bytes is answered without a challenge when the reply
// fits in it, and gets the 'A' reply otherwise; nothing else changes.
func TestServerAcceptPaddedInfo(t *testing.T) {
	t.Parallel()
	padded := request(t, a2s.TypeInfoRequest, 0, false, a2s.PaddedInfoSize-29)
	if len(padded) != a2s.PaddedInfoSize {
		t.Fatalf("padded request of %d bytes", len(padded))
	}
	replyType := func(s *a2s.Server, req []byte) (byte, int) {
		t.Helper()
		var rec recorder
		s.HandlePacket(&rec, client1, req)
		sent, n := rec.take()
		if len(sent) != 1 || n > len(req) {
			t.Fatalf("%d-byte request: %d bytes in %d datagrams, want one datagram", len(req), n, len(sent))
		}
		return sent[0][4], len(sent[0])
	}
	s := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, AcceptPaddedInfo: true}
	if typ, _ := replyType(s, padded); typ != a2s.TypeInfoReply {
		t.Errorf("padded INFO: reply %q, want 'I'", typ)
	}
	// Other clients pad with zeros right after the payload, which read
	// as challenge 0.
	zeroPadded := append(request(t, a2s.TypeInfoRequest, 0, false, 0), make([]byte, a2s.PaddedInfoSize-25)...)
	if typ, _ := replyType(s, zeroPadded); typ != a2s.TypeInfoReply {
		t.Errorf("zero-padded INFO: reply %q, want 'I'", typ)
	}
	for name, req := range map[string][]byte{
		"short padding": request(t, a2s.TypeInfoRequest, 0, false, a2s.PaddedInfoSize-30),
		"padded rules":  request(t, a2s.TypeRulesRequest, a2s.AskChallenge, true, a2s.PaddedInfoSize-9),
	} {
		if typ, _ := replyType(s, req); typ != a2s.TypeChallengeReply {
			t.Errorf("%s: reply %q, want 'A'", name, typ)
		}
	}
	if typ, _ := replyType(&a2s.Server{Handler: staticHandler(t), RateLimit: -1}, padded); typ != a2s.TypeChallengeReply {
		t.Errorf("padded INFO, AcceptPaddedInfo off: reply %q, want 'A'", typ)
	}

	// A reply that does not fit is held back, and the 'A' reply goes out.
	var wrote error
	big := &a2s.Server{RateLimit: -1, AcceptPaddedInfo: true, Handler: a2s.HandlerFunc(func(w a2s.ResponseWriter, r *a2s.Request) {
		if r.HasChallenge || r.Padding != a2s.PaddedInfoSize-29 {
			t.Errorf("handler saw %+v: padding read as a challenge", r)
		}
		wrote = w.WriteDatagram(append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'I'}, make([]byte, a2s.PaddedInfoSize)...))
	})}
	if typ, n := replyType(big, padded); typ != a2s.TypeChallengeReply || n != 9 {
		t.Errorf("oversized reply: got %q (%d bytes), want the 'A' reply", typ, n)
	}
	if !errors.Is(wrote, a2s.ErrTooLarge) {
		t.Errorf("WriteDatagram of the oversized reply: %v, want ErrTooLarge", wrote)
	}
}

func challengeReplyBytes(c uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A'}, c)
}

// TestServerChallengeSecret: servers that share the secret accept each
// other's challenges, and a server with another secret rejects them.
func TestServerChallengeSecret(t *testing.T) {
	t.Parallel()
	secret := []byte("test secret")
	s := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, ChallengeSecret: secret, ChallengeLifetime: time.Hour}
	c := challengeFor(t, s, client1)
	same := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, ChallengeSecret: secret, ChallengeLifetime: time.Hour}
	other := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, ChallengeSecret: []byte("other"), ChallengeLifetime: time.Hour}
	req := request(t, a2s.TypeRulesRequest, c, true, 0)
	for _, tc := range []struct {
		name string
		s    *a2s.Server
		want byte
	}{
		{"same server", s, a2s.TypeRulesReply},
		{"same secret", same, a2s.TypeRulesReply},
		{"other secret", other, a2s.TypeChallengeReply},
	} {
		var rec recorder
		tc.s.HandlePacket(&rec, client1, req)
		sent, _ := rec.take()
		if len(sent) == 0 {
			t.Errorf("%s: no reply", tc.name)
			continue
		}
		// a split reply starts with 0xFFFFFFFE; its type is in the payload
		if got := sent[0][4]; sent[0][0] == 0xFF && sent[0][3] == 0xFF && got != tc.want {
			t.Errorf("%s: reply type %q, want %q", tc.name, got, tc.want)
		}
		if tc.want == a2s.TypeRulesReply && len(sent) != 3 {
			t.Errorf("%s: rules in %d datagrams, want 3 fragments", tc.name, len(sent))
		}
	}
}

// TestServerChallengeLifetime: a challenge stays valid at least
// ChallengeLifetime after it was given, and at most twice that, wherever
// in its time bucket it was given.
func TestServerChallengeLifetime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const life = time.Minute
		s := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, ChallengeLifetime: life}
		valid := func(c uint32) bool {
			var rec recorder
			s.HandlePacket(&rec, client1, request(t, a2s.TypeRulesRequest, c, true, 0))
			sent, _ := rec.take()
			return len(sent) > 0 && !(sent[0][0] == 0xFF && sent[0][4] == a2s.TypeChallengeReply)
		}
		for _, offset := range []time.Duration{0, time.Second, life / 2, life - time.Nanosecond} {
			time.Sleep(offset)
			c := challengeFor(t, s, client1)
			time.Sleep(life - time.Nanosecond)
			if !valid(c) {
				t.Errorf("challenge given %v into a bucket: refused before its lifetime", offset)
			}
			time.Sleep(life + time.Nanosecond)
			if valid(c) {
				t.Errorf("challenge given %v into a bucket: accepted after twice its lifetime", offset)
			}
		}
	})
}

// TestServerRateLimitIPv6Prefix: the addresses of one IPv6 /64 share one
// token bucket.
func TestServerRateLimitIPv6Prefix(t *testing.T) {
	t.Parallel()
	s := &a2s.Server{Handler: staticHandler(t), NoChallenge: true, RateLimit: 0.001, RateBurst: 3}
	req := request(t, a2s.TypeInfoRequest, 0, false, 0)
	var rec recorder
	for i := range 10 {
		s.HandlePacket(&rec, netip.AddrPortFrom(netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i + 1)}), 27005), req)
	}
	if sent, _ := rec.take(); len(sent) != 3 {
		t.Errorf("10 requests from one /64: %d answered, want the burst of 3", len(sent))
	}
	s.HandlePacket(&rec, netip.MustParseAddrPort("[2001:db8:0:1::1]:27005"), req)
	if sent, _ := rec.take(); len(sent) != 1 {
		t.Error("the next /64 was limited too")
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) WriteToUDPAddrPort([]byte, netip.AddrPort) (int, error) {
	return 0, syscall.ECONNREFUSED
}

// TestServerWriteErrorsRateLimited: failed sends, which a peer can cause
// at will, log a few lines and then count the rest.
func TestServerWriteErrorsRateLimited(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var lines []string
		s := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, Logf: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, fmt.Sprintf(format, args...))
		}}
		req := request(t, a2s.TypeInfoRequest, 0, false, 0)
		for range 1000 {
			s.HandlePacket(failingWriter{}, client1, req)
		}
		time.Sleep(time.Minute)
		s.HandlePacket(failingWriter{}, client1, req)
		mu.Lock()
		defer mu.Unlock()
		if len(lines) < 2 || len(lines) > 10 || !strings.Contains(lines[len(lines)-1], "995 more like this suppressed") {
			t.Errorf("1001 failed writes logged as %d lines, the last %q", len(lines), lines[len(lines)-1:])
		}
	})
}

func TestServerLocalAddr(t *testing.T) {
	t.Parallel()
	s := &a2s.Server{Handler: staticHandler(t)}
	if a := s.LocalAddr(); a != nil {
		t.Errorf("LocalAddr before Serve = %v", a)
	}
	pc := listenLoopback(t)
	served := make(chan error, 1)
	go func() { served <- s.Serve(pc) }()
	c := newClient(t)
	if _, err := c.Info(testutil.Context(t), pc.LocalAddr().(*net.UDPAddr).AddrPort()); err != nil {
		t.Fatal(err)
	}
	if a := s.LocalAddr(); a == nil || a.String() != pc.LocalAddr().String() {
		t.Errorf("LocalAddr = %v, want %v", a, pc.LocalAddr())
	}
	if err := s.Shutdown(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	<-served
	if a := s.LocalAddr(); a != nil {
		t.Errorf("LocalAddr after Shutdown = %v", a)
	}
}

// TestServerSplitSize checks the fragment sizes for 1248 and 1188.
func TestServerSplitSize(t *testing.T) {
	t.Parallel()
	for _, size := range []int{0, 1188} {
		s := &a2s.Server{Handler: staticHandler(t), RateLimit: -1, NoChallenge: true, SplitSize: size}
		var rec recorder
		s.HandlePacket(&rec, client1, request(t, a2s.TypeRulesRequest, a2s.AskChallenge, true, 0))
		sent, _ := rec.take()
		want := size
		if want == 0 {
			want = a2s.DefaultSplitSize
		}
		if len(sent) < 2 {
			t.Fatalf("size %d: %d datagrams", size, len(sent))
		}
		for i, f := range sent {
			frag, err := a2s.ParseFragment(f)
			if err != nil {
				t.Fatalf("size %d: fragment %d: %v", size, i, err)
			}
			if len(frag.Payload) > want || (i < len(sent)-1 && int(frag.Size) != want) {
				t.Errorf("size %d: fragment %d carries %d bytes, Size field %d", size, i, len(frag.Payload), frag.Size)
			}
		}
	}
}

func TestServerRateLimit(t *testing.T) {
	t.Parallel()
	s := &a2s.Server{Handler: staticHandler(t), NoChallenge: true, RateLimit: 0.001, RateBurst: 3}
	req := request(t, a2s.TypeInfoRequest, 0, false, 0)
	count := func(from netip.AddrPort) int {
		var rec recorder
		for range 10 {
			s.HandlePacket(&rec, from, req)
		}
		sent, _ := rec.take()
		return len(sent)
	}
	if n := count(client1); n != 3 {
		t.Errorf("first source: %d of 10 answered, want the burst of 3", n)
	}
	if n := count(client2); n != 3 {
		t.Errorf("second source: %d of 10 answered, want its own burst of 3", n)
	}
	if n := count(client1); n != 0 {
		t.Errorf("first source again: %d answered, want 0", n)
	}

	unlimited := &a2s.Server{Handler: staticHandler(t), NoChallenge: true, RateLimit: -1}
	var rec recorder
	for range 100 {
		unlimited.HandlePacket(&rec, client1, req)
	}
	if sent, _ := rec.take(); len(sent) != 100 {
		t.Errorf("RateLimit -1: %d of 100 answered", len(sent))
	}
}

func TestStaticHandlerSet(t *testing.T) {
	t.Parallel()
	h := staticHandler(t)
	v := h.Version()
	s := &a2s.Server{Handler: h, NoChallenge: true, RateLimit: -1}
	info := a2stest.DefaultInfo()
	info.Name = a2s.Text("renamed")
	if err := h.Set(info, nil, nil); err != nil {
		t.Fatal(err)
	}
	if h.Version() != v+1 {
		t.Errorf("Version %d after Set, want %d", h.Version(), v+1)
	}
	var rec recorder
	s.HandlePacket(&rec, client1, request(t, a2s.TypeInfoRequest, 0, false, 0))
	s.HandlePacket(&rec, client1, request(t, a2s.TypePlayerRequest, a2s.AskChallenge, true, 0))
	sent, _ := rec.take()
	if len(sent) != 1 {
		t.Fatalf("%d replies, want 1 (players unset)", len(sent))
	}
	got, err := a2s.ParseInfo(sent[0])
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Name) != "renamed" {
		t.Errorf("name %q after Set", got.Name)
	}
	bad := a2stest.DefaultInfo()
	bad.Name = a2s.Text("nul\x00inside")
	if err := h.Set(bad, nil, nil); err == nil {
		t.Error("Set accepted a name with a NUL")
	}
	if h.Version() != v+1 {
		t.Error("a failed Set changed the version")
	}
}

// TestServerAllocs: answering a proven INFO request allocates nothing.
func TestServerAllocs(t *testing.T) {
	if testutil.Race {
		t.Skip("the race detector allocates")
	}
	s := &a2s.Server{Handler: staticHandler(t), RateLimit: -1}
	req := request(t, a2s.TypeInfoRequest, challengeFor(t, s, client1), true, 0)
	var w countWriter
	allocs := testing.AllocsPerRun(200, func() { s.HandlePacket(&w, client1, req) })
	if w.n == 0 {
		t.Fatal("no reply")
	}
	if allocs > 0 {
		t.Errorf("%.1f allocations per proven INFO request, want 0", allocs)
	}
}

type countWriter struct{ n int }

func (w *countWriter) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	w.n++
	return len(b), nil
}

func listenLoopback(t testing.TB) *net.UDPConn {
	pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func TestServerServeShutdown(t *testing.T) {
	t.Parallel()
	pc := listenLoopback(t)
	s := &a2s.Server{Handler: staticHandler(t)}
	served := make(chan error, 1)
	go func() { served <- s.Serve(pc) }()
	c := newClient(t)
	addr := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	res, err := c.Info(testutil.Context(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, res.Info, a2stest.DefaultInfo())
	if err := s.Shutdown(testutil.Context(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-served; !errors.Is(err, a2s.ErrServerClosed) {
		t.Errorf("Serve returned %v, want ErrServerClosed", err)
	}
	if err := s.Serve(listenLoopback(t)); !errors.Is(err, a2s.ErrServerClosed) {
		t.Errorf("Serve after Shutdown returned %v", err)
	}
	if err := s.ListenAndServe(); !errors.Is(err, a2s.ErrServerClosed) {
		t.Errorf("ListenAndServe after Shutdown returned %v", err)
	}
}

// BenchmarkServerInfo measures answered INFO queries per second on
// loopback, challenge on: 4 sockets keep 16 proven requests each in flight.
func BenchmarkServerInfo(b *testing.B) {
	pc := listenLoopback(b)
	s := &a2s.Server{Handler: staticHandler(b), RateLimit: -1}
	go s.Serve(pc)
	defer s.Shutdown(context.Background())
	addr := pc.LocalAddr().(*net.UDPAddr)

	const sockets, window = 4, 16
	var conns []*net.UDPConn
	var reqs [][]byte
	for range sockets {
		conn, err := net.DialUDP("udp4", nil, addr)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		conn.SetReadBuffer(1 << 20)
		// earn this socket's challenge
		conn.Write(request(b, a2s.TypeInfoRequest, 0, false, 0))
		buf := make([]byte, 2048)
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, err := conn.Read(buf)
		if err != nil {
			b.Fatal(err)
		}
		c, err := a2s.ParseChallenge(buf[:n])
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, conn)
		reqs = append(reqs, request(b, a2s.TypeInfoRequest, c, true, 0))
	}

	var remaining, answered atomic.Int64
	remaining.Store(int64(b.N))
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i, conn := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 2048)
			inflight := 0
			for {
				for inflight < window && remaining.Add(-1) >= 0 {
					conn.Write(reqs[i])
					inflight++
				}
				if inflight == 0 {
					return
				}
				conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
				if _, err := conn.Read(buf); err != nil {
					inflight = 0 // lost on loopback: count them unanswered
					continue
				}
				if buf[4] == a2s.TypeInfoReply {
					answered.Add(1)
				}
				inflight--
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(answered.Load())/time.Since(start).Seconds(), "queries/s")
	b.ReportMetric(float64(answered.Load())/float64(b.N), "answered/op")
}
