package ogp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

// recorder is a PacketWriter that keeps what the server sends.
type recorder struct{ pkts [][]byte }

func (r *recorder) WriteToUDPAddrPort(b []byte, _ netip.AddrPort) (int, error) {
	r.pkts = append(r.pkts, append([]byte(nil), b...))
	return len(b), nil
}

var client1 = netip.MustParseAddrPort("192.0.2.1:5000")

// handle passes req to s as if from client1 and returns the answer.
func handle(s *ogp.Server, req []byte) [][]byte {
	var r recorder
	s.HandlePacket(&r, client1, req)
	return r.pkts
}

func packet(h ogp.Header, body ...byte) []byte {
	b, _ := h.AppendBinary(nil)
	return append(b, body...)
}

func sampleServer(d ogp.Dialect, players int) *ogp.Server {
	a := ogptest.SampleAnswer(d, players)
	return &ogp.Server{Dialect: d, RateLimit: -1,
		Handler: ogp.HandlerFunc(func(netip.AddrPort, *ogp.Query) (*ogp.Answer, error) { return a, nil })}
}

// errorCode returns the error code of a single error answer, or -1.
func errorCode(pkts [][]byte) int {
	if len(pkts) != 1 {
		return -1
	}
	h, body, err := ogp.ParseHeader(pkts[0])
	if err != nil || h.Type != ogp.TypeError {
		return -1
	}
	e, err := ogp.ParseErrorAnswer(body)
	if err != nil {
		return -1
	}
	return int(e.Code)
}

// learnChallenge asks s for client1's challenge with a Ping.
func learnChallenge(t *testing.T, s *ogp.Server) uint32 {
	t.Helper()
	got := handle(s, packet(ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge}))
	if len(got) != 1 {
		t.Fatalf("ping: %d answers", len(got))
	}
	h, _, err := ogp.ParseHeader(got[0])
	if err != nil || h.Flags&ogp.FlagChallenge == 0 || h.Challenge == 0 {
		t.Fatalf("ping answer %+v, %v", h, err)
	}
	return h.Challenge
}

// TestServerAmplificationLimit: before the challenge is proven, every
// answer is at most the request plus 32 bytes and at most three times the
// request; the specification's error 3 fits that.
func TestServerAmplificationLimit(t *testing.T) {
	t.Parallel()
	srv := sampleServer(ogp.V091, 60)
	all := ogp.QueryAll(ogp.V091)
	body, _ := all.Append(nil, ogp.V091)
	cases := map[string][]byte{
		"query challenge 0":  packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 9}, body...),
		"query no flags":     packet(ogp.Header{Type: ogp.TypeDefault}, body...),
		"tiny query":         packet(ogp.Header{Type: ogp.TypeDefault}, 0x00),
		"ping":               packet(ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge}),
		"ping with id":       packet(ogp.Header{Type: ogp.TypePing, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 3}),
		"ping with a body":   packet(ogp.Header{Type: ogp.TypePing}, make([]byte, 100)...),
		"unknown type":       packet(ogp.Header{Type: 0x42}),
		"bad packet size":    packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagSplit, MaxBytesPerPacket: 20}, body...),
		"wrong challenge":    packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: 12345}, body...),
		"rcon":               packet(ogp.Header{Type: ogp.TypeRcon, Flags: ogp.FlagChallenge}, 1, 2, 3),
		"answer is ignored":  packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagAnswer}, body...),
		"error is ignored":   packet(ogp.Header{Type: ogp.TypeError}, 3),
		"uplink is ignored":  packet(ogp.Header{Type: ogp.TypeMasterUplink}, 1, 0),
		"garbage after pref": append([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0}, 0xFF, 0xFF),
	}
	answered := map[string]bool{}
	for name, req := range cases {
		got := handle(srv, req)
		total := 0
		for _, p := range got {
			total += len(p)
		}
		if limit := min(len(req)+32, 3*len(req)); total > limit {
			t.Errorf("%s: %d bytes in %d datagrams answer a %d-byte request (limit %d)", name, total, len(got), len(req), limit)
		}
		answered[name] = len(got) > 0
	}
	for _, name := range []string{"query challenge 0", "query no flags", "tiny query", "ping", "ping with id",
		"ping with a body", "unknown type", "bad packet size", "wrong challenge", "rcon"} {
		if !answered[name] {
			t.Errorf("%s: no answer", name)
		}
	}
	for _, name := range []string{"answer is ignored", "error is ignored", "uplink is ignored", "garbage after pref"} {
		if answered[name] {
			t.Errorf("%s: answered", name)
		}
	}
	// Proven, the same query gets the whole (split) answer.
	chal := learnChallenge(t, srv)
	got := handle(srv, packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: chal}, body...))
	if len(got) < 3 {
		t.Errorf("proven query: %d datagrams, want a split answer", len(got))
	}
}

// TestServerMalformedBody: a Default Query whose body does not parse gets
// error 4, whatever its challenge.
func TestServerMalformedBody(t *testing.T) {
	t.Parallel()
	srv := sampleServer(ogp.V091, 4)
	chal := learnChallenge(t, srv)
	for _, h := range []ogp.Header{
		{Type: ogp.TypeDefault},
		{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge},
		{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: chal + 1},
		{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, Challenge: chal, RequestID: 4},
	} {
		for _, body := range [][]byte{nil, {0x81}, {0x01}, {0x01, 0x80, 0x80}} {
			if code := errorCode(handle(srv, packet(h, body...))); code != int(ogp.ErrorInvalidQuery) {
				t.Errorf("flags %v challenge %#x body % X: answer code %d, want 4", h.Flags, h.Challenge, body, code)
			}
		}
	}
}

// TestServerErrorAnswers: errors 0, 1, 2 and 3, the last with the copy of
// the request holding the new challenge.
func TestServerErrorAnswers(t *testing.T) {
	t.Parallel()
	srv := sampleServer(ogp.V091, 4)
	chal := learnChallenge(t, srv)
	proven := ogp.Header{Flags: ogp.FlagChallenge | ogp.FlagRequestID, Challenge: chal, RequestID: 6}
	withType := func(h ogp.Header, typ ogp.Type) ogp.Header { h.Type = typ; return h }
	for _, tc := range []struct {
		name string
		req  []byte
		code ogp.ErrorCode
	}{
		{"invalid type", packet(withType(proven, ogp.TypeRcon), 1), ogp.ErrorInvalidType},
		{"invalid value", packet(ogp.Header{Type: ogp.TypeDefault, Flags: proven.Flags | ogp.FlagSplit, Challenge: chal, MaxBytesPerPacket: 1501}, 0), ogp.ErrorInvalidValue},
		{"invalid value, unproven", packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagSplit, MaxBytesPerPacket: 499}, 0), ogp.ErrorInvalidValue},
	} {
		if code := errorCode(handle(srv, tc.req)); code != int(tc.code) {
			t.Errorf("%s: code %d, want %d", tc.name, code, tc.code)
		}
	}
	banned := sampleServer(ogp.V091, 4)
	banned.Banned = func(a netip.Addr) bool { return a == client1.Addr() }
	if code := errorCode(handle(banned, packet(proven, 0))); code != int(ogp.ErrorBanned) {
		t.Errorf("banned: code %d", code)
	}
	banned.IgnoreBanned = true
	if got := handle(banned, packet(proven, 0)); len(got) != 0 {
		t.Errorf("ignored banned: %d answers", len(got))
	}

	q := ogp.Query{Request: ogp.RequestRules}
	body, _ := q.Append(nil, ogp.V091)
	for _, tc := range []struct {
		name string
		req  ogp.Header
	}{
		{"challenge 0", ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge | ogp.FlagRequestID, RequestID: 77}},
		{"no challenge flag", ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagRequestID | ogp.FlagSplit, RequestID: 78, MaxBytesPerPacket: 1400}},
		{"wrong challenge", ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: chal ^ 1}},
	} {
		got := handle(srv, packet(tc.req, body...))
		if errorCode(got) != int(ogp.ErrorInvalidChallenge) {
			t.Fatalf("%s: %d answers, code %d", tc.name, len(got), errorCode(got))
		}
		h, b, _ := ogp.ParseHeader(got[0])
		e, _ := ogp.ParseErrorAnswer(b)
		if h.Flags&ogp.FlagChallenge == 0 || h.Challenge != chal || h.RequestID != tc.req.RequestID {
			t.Errorf("%s: error 3 header %+v", tc.name, h)
		}
		want := tc.req
		want.Flags |= ogp.FlagChallenge
		want.Challenge = chal
		if !bytes.Equal(e.Request, packet(want, body...)) {
			t.Errorf("%s: copy % X\nwant      % X", tc.name, e.Request, packet(want, body...))
		}
		// Sending the copy back gets the answer.
		ans := handle(srv, e.Request)
		ah, ab, _ := ogp.ParseHeader(ans[0])
		a, err := ogp.ParseAnswer(ab, ogp.V091)
		if err != nil || ah.Type != ogp.TypeDefault || len(a.Rules) != 2 || ah.Challenge != chal {
			t.Errorf("%s: answer to the copy %+v %+v %v", tc.name, ah, a, err)
		}
	}
	// The copy keeps header bytes beyond the known fields.
	req := packet(ogp.Header{Type: ogp.TypeDefault}, body...)
	req[8] += 2
	req = append(req[:11:11], append([]byte{0xAB, 0xCD}, req[11:]...)...)
	got := handle(srv, req)
	_, b, _ := ogp.ParseHeader(got[0])
	e, _ := ogp.ParseErrorAnswer(b)
	want := []byte{0xFF, 0xFF, 0xFF, 0xFF, 'O', 'G', 'P', 0, 9, 1, 2, 0, 0, 0, 0, 0xAB, 0xCD}
	want = append(want, body...)
	copy(want[11:15], []byte{byte(chal), byte(chal >> 8), byte(chal >> 16), byte(chal >> 24)})
	if !bytes.Equal(e.Request, want) {
		t.Errorf("copy with extra header bytes % X\nwant                           % X", e.Request, want)
	}
}

// TestServerLatin1: a V1 server answers in UTF-8 when the query sets
// bUTF8 and in Latin-1 otherwise.
func TestServerLatin1(t *testing.T) {
	t.Parallel()
	srv := sampleServer(ogp.V1, 4)
	srv.NoChallenge = true
	q := ogp.Query{Request: ogp.RequestRules}
	body, _ := q.Append(nil, ogp.V1)
	for _, utf := range []bool{false, true} {
		h := ogp.Header{Type: ogp.TypeDefault}
		if utf {
			h.Flags |= ogp.FlagUTF8
		}
		got := handle(srv, packet(h, body...))
		ah, ab, _ := ogp.ParseHeader(got[0])
		a, err := ogp.ParseAnswer(ab, ogp.V1)
		if err != nil {
			t.Fatal(err)
		}
		want := "h\xe9llo"
		if utf {
			want = "héllo"
		}
		if a.Rules[1].Value.String() != want || (ah.Flags&ogp.FlagUTF8 != 0) != utf {
			t.Errorf("utf8=%v: %q flags %v", utf, a.Rules[1].Value, ah.Flags)
		}
		if a.Rules[1].Value.UTF8() != "héllo" {
			t.Errorf("UTF8() = %q", a.Rules[1].Value.UTF8())
		}
	}
}

// TestServerRateLimit: RateLimit and RateBurst per source address (an
// IPv6 /64 being one), and the drop lines are rate-limited. That other
// addresses keep their own budget is TestRateLimiterSources.
func TestServerRateLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var lines []string
		s := &ogp.Server{RateLimit: 1, RateBurst: 3, Logf: func(f string, args ...any) {
			mu.Lock()
			lines = append(lines, fmt.Sprintf(f, args...))
			mu.Unlock()
		}}
		ping := packet(ogp.Header{Type: ogp.TypePing})
		answers := func(from string, n int) int {
			got := 0
			for range n {
				var r recorder
				s.HandlePacket(&r, netip.MustParseAddrPort(from), ping)
				got += len(r.pkts)
			}
			return got
		}
		if got := answers("192.0.2.1:1", 100); got != 3 {
			t.Errorf("burst: %d answers, want 3", got)
		}
		if got := answers("[2001:db8::1]:1", 3) + answers("[2001:db8::2]:1", 3); got != 3 {
			t.Errorf("one IPv6 /64: %d answers, want 3", got)
		}
		time.Sleep(2 * time.Second)
		if got := answers("192.0.2.1:1", 3); got != 2 {
			t.Errorf("after 2 s at 1/s: %d answers, want 2", got)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(lines) == 0 || len(lines) > 5 || !strings.HasPrefix(lines[0], "ogp: rate limit: dropped a request from 192.0.2.1") {
			t.Errorf("%d log lines for about 100 drops: %q", len(lines), lines)
		}
	})
}

// TestServerChallengeSecretAndLifetime: servers sharing ChallengeSecret
// accept each other's challenges, and a challenge lives at least
// ChallengeLifetime and less than twice that.
func TestServerChallengeSecretAndLifetime(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		mk := func(secret string) *ogp.Server {
			s := sampleServer(ogp.V091, 1)
			s.ChallengeSecret = []byte(secret)
			s.ChallengeLifetime = time.Minute
			return s
		}
		a, b, other := mk("shared"), mk("shared"), mk("other")
		time.Sleep(59 * time.Second) // late in a period: the challenge still lives a minute
		chal := learnChallenge(t, a)
		q := packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: chal}, byte(ogp.RequestRules))
		answer := func(s *ogp.Server) bool {
			got := handle(s, q)
			h, _, _ := ogp.ParseHeader(got[0])
			return h.Type == ogp.TypeDefault
		}
		if !answer(a) || !answer(b) || answer(other) {
			t.Fatalf("same secret: %v %v, other secret: %v", answer(a), answer(b), answer(other))
		}
		time.Sleep(time.Minute)
		if !answer(a) {
			t.Errorf("not valid for ChallengeLifetime")
		}
		time.Sleep(time.Minute)
		if answer(a) {
			t.Errorf("still valid after twice ChallengeLifetime")
		}
		// RotateChallenge twice retires every challenge at once.
		chal = learnChallenge(t, a)
		q = packet(ogp.Header{Type: ogp.TypeDefault, Flags: ogp.FlagChallenge, Challenge: chal}, byte(ogp.RequestRules))
		a.RotateChallenge()
		if !answer(a) {
			t.Errorf("invalid after one rotation")
		}
		a.RotateChallenge()
		if answer(a) {
			t.Errorf("valid after two rotations")
		}
	})
}

// TestServerServeAndShutdown: Serve and ListenAndServe answer on a real
// socket, LocalAddr tells where, and Shutdown ends them with
// ErrServerClosed.
func TestServerServeAndShutdown(t *testing.T) {
	t.Parallel()
	s := sampleServer(ogp.V091, 1)
	s.Addr = "127.0.0.1:0"
	if s.LocalAddr() != nil {
		t.Fatalf("LocalAddr before serving: %v", s.LocalAddr())
	}
	done := make(chan error, 1)
	go func() { done <- s.ListenAndServe() }()
	deadline := time.Now().Add(10 * time.Second)
	for s.LocalAddr() == nil {
		if time.Now().After(deadline) {
			t.Fatal("ListenAndServe did not start")
		}
		runtime.Gosched()
	}
	addr := s.LocalAddr().(*net.UDPAddr).AddrPort()
	c := newClient(t, ogp.V091)
	q := ogp.Query{Request: ogp.RequestRules}
	if _, err := c.Query(ctxT(t), addr, &q); err != nil {
		t.Fatalf("query %v: %v", addr, err)
	}
	if err := s.Shutdown(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ogp.ErrServerClosed) {
		t.Fatalf("ListenAndServe returned %v", err)
	}
	if err := s.ListenAndServe(); !errors.Is(err, ogp.ErrServerClosed) {
		t.Fatalf("ListenAndServe after Shutdown: %v", err)
	}
}

// failConn is a PacketConn whose reads fail with err, counting them.
type failConn struct {
	memConn
	err   func(i int) error
	reads int
}

func (c *failConn) ReadFrom([]byte) (int, net.Addr, error) {
	c.reads++
	return 0, nil, c.err(c.reads)
}

// TestServeGivesUpAfterReadErrors: Serve returns after 16 read errors in
// a row, timeouts included, as a2s's does: a socket whose read deadline
// has passed fails every read at once, and skipping those would spin.
func TestServeGivesUpAfterReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	pc := &failConn{err: func(i int) error {
		if i%2 == 0 {
			return boom
		}
		return timeoutErr{}
	}}
	s := sampleServer(ogp.V091, 1)
	if err := s.Serve(pc); !errors.Is(err, boom) || pc.reads != 16 {
		t.Fatalf("Serve = %v after %d reads, want boom after 16 reads", err, pc.reads)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
