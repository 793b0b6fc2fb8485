package scan

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/result"
)

// sectionErr is the error of section s of r, nil when it has none.
func sectionErr(r *Outcome, s result.Section) error {
	if e := r.Result.SectionErr(s); e != nil {
		return e
	}
	return nil
}

// scriptServer is a fake A2S server on a loopback port whose answers the
// test scripts: handle sees each request, numbered from 0 in arrival
// order, and returns the datagrams to send back.
type scriptServer struct {
	addr netip.AddrPort
	mu   sync.Mutex
	log  []a2s.Request
}

func startScript(t *testing.T, handle func(n int, req a2s.Request) [][]byte) *scriptServer {
	t.Helper()
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptServer{addr: c.LocalAddr().(*net.UDPAddr).AddrPort()}
	done := make(chan struct{})
	t.Cleanup(func() {
		c.Close()
		<-done
	})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			req, err := a2s.ParseRequest(buf[:n])
			if err != nil {
				t.Errorf("server got a bad request %q: %v", buf[:n], err)
				continue
			}
			s.mu.Lock()
			i := len(s.log)
			s.log = append(s.log, req)
			s.mu.Unlock()
			for _, d := range handle(i, req) {
				if _, err := c.WriteToUDPAddrPort(d, from); err != nil {
					return
				}
			}
		}
	}()
	return s
}

// requests is the log as "T-", "U1234"...: the type, then the challenge
// or "-" when the request carried none.
func (s *scriptServer) requests() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var parts []string
	for _, r := range s.log {
		c := "-"
		if r.HasChallenge {
			c = fmt.Sprintf("%x", r.Challenge)
		}
		parts = append(parts, string(r.Type)+c)
	}
	return strings.Join(parts, " ")
}

// scriptContent is what the scripted servers say.
var (
	scriptInfo    = &a2s.Info{Format: a2s.TypeInfoReply, Name: a2s.Text("scripted"), Map: a2s.Text("de_dust2"), Players: 3}
	scriptPlayers = &a2s.Players{List: []a2s.Player{
		{Name: a2s.Text("alice, whose name is long enough"), Score: 3},
		{Name: a2s.Text("bob, whose name is long enough too"), Score: -1},
		{Name: a2s.Text("carol, so that the reply can be split")},
	}}
	scriptRules = func() *a2s.Rules {
		r := &a2s.Rules{}
		for i := range 40 {
			r.List = append(r.List, a2s.Rule{Name: a2s.Text(fmt.Sprintf("sv_rule_%02d", i)), Value: a2s.Text(fmt.Sprint(i * 7))})
		}
		return r
	}()
)

func encode(t *testing.T, m interface{ AppendBinary([]byte) ([]byte, error) }) []byte {
	t.Helper()
	b, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answer is the reply to a request carrying the right challenge.
func answer(t *testing.T, req a2s.Request) []byte {
	switch req.Type {
	case a2s.TypeInfoRequest:
		return encode(t, scriptInfo)
	case a2s.TypePlayerRequest:
		return encode(t, scriptPlayers)
	case a2s.TypeRulesRequest:
		return encode(t, scriptRules)
	}
	t.Errorf("unexpected request %q", req.Type)
	return nil
}

// split cuts reply into fragments of size bytes under id.
func split(t *testing.T, id uint32, size int, reply []byte) [][]byte {
	t.Helper()
	dgs, err := a2s.SplitWriter{Size: size}.AppendFragments(nil, id, reply)
	if err != nil {
		t.Fatal(err)
	}
	if len(dgs) < 2 {
		t.Fatalf("%d bytes in %d fragment(s) of %d", len(reply), len(dgs), size)
	}
	return dgs
}

// challenged answers every request that carries c, and challenges the
// others with c.
func challenged(t *testing.T, c uint32) func(int, a2s.Request) [][]byte {
	return func(_ int, req a2s.Request) [][]byte {
		if !req.HasChallenge || req.Challenge != c {
			return [][]byte{a2s.AppendChallenge(nil, c)}
		}
		return [][]byte{answer(t, req)}
	}
}

// scanOne scans one server and returns its result and the summary.
func scanOne(t *testing.T, s *Scanner, addr netip.AddrPort) (*Outcome, Summary) {
	t.Helper()
	got, sum := collect(t, s, strings.NewReader(addr.String()+"\n"))
	r := got[addr]
	if r == nil || len(got) != 1 {
		t.Fatalf("results %v", got)
	}
	return r, sum
}

func checkAnswered(t *testing.T, r *Outcome) {
	t.Helper()
	a := a2sOf(r)
	if r.Status != StatusAnswered || a == nil {
		t.Fatalf("status %v, %+v", r.Status, a)
	}
	if a.Info == nil || string(a.Info.Name) != "scripted" {
		t.Errorf("info %+v", a.Info)
	}
	if a.Players == nil || len(a.Players.List) != 3 || string(a.Players.List[2].Name) != string(scriptPlayers.List[2].Name) {
		t.Errorf("players %+v", a.Players)
	}
	if a.Rules == nil || len(a.Rules.List) != 40 {
		t.Fatalf("rules %+v", a.Rules)
	}
	if v, _ := a.Rules.Get("sv_rule_39"); string(v) != "273" {
		t.Errorf("sv_rule_39 = %q", v)
	}
}

// checkTraffic checks the requests the server saw, and that the scan
// counted them, resent ones included.
func checkTraffic(t *testing.T, srv *scriptServer, sum Summary, want string, resent int64) {
	t.Helper()
	got := srv.requests()
	if got != want {
		t.Errorf("server saw %s, want %s", got, want)
	}
	if n := int64(strings.Count(got, " ") + 1); sum.Sent != n || sum.Resent != resent {
		t.Errorf("sent %d, resent %d; want %d and %d", sum.Sent, sum.Resent, n, resent)
	}
}

// patient never resends within a test's lifetime: a request left
// unanswered shows up as a resend or a timeout.
var patient = Scanner{Timeout: 20 * time.Second, MinTimeout: 20 * time.Second, Retries: -1}

func TestScanAsksSectionsTogether(t *testing.T) {
	t.Parallel()
	// The server holds its answers back until it has all three requests
	// made with the challenge: a client asking one section at a time would
	// wait forever.
	var held [][]byte
	srv := startScript(t, func(_ int, req a2s.Request) [][]byte {
		if !req.HasChallenge || req.Challenge != 0x1234 {
			return [][]byte{a2s.AppendChallenge(nil, 0x1234)}
		}
		held = append(held, answer(t, req))
		if len(held) < 3 {
			return nil
		}
		return held
	})
	s := patient
	s.Timeout = 5 * time.Second
	s.MinTimeout = 5 * time.Second
	r, sum := scanOne(t, &s, srv.addr)
	checkAnswered(t, r)
	checkTraffic(t, srv, sum, "T- T1234 U1234 V1234", 0)
}

func TestScanRechallengeMidway(t *testing.T) {
	t.Parallel()
	// The server answers INFO with the first challenge, then changes its
	// challenge: PLAYER and RULES are asked again with the new one, INFO
	// is not.
	srv := startScript(t, func(n int, req a2s.Request) [][]byte {
		switch {
		case n == 0:
			return [][]byte{a2s.AppendChallenge(nil, 0xAAAA)}
		case n <= 3 && req.Type == a2s.TypeInfoRequest && req.Challenge == 0xAAAA:
			return [][]byte{answer(t, req)}
		case req.Challenge != 0xBBBB:
			return [][]byte{a2s.AppendChallenge(nil, 0xBBBB)}
		}
		return [][]byte{answer(t, req)}
	})
	r, sum := scanOne(t, &patient, srv.addr)
	checkAnswered(t, r)
	// A new challenge makes new requests, not retries.
	checkTraffic(t, srv, sum, "T- Taaaa Uaaaa Vaaaa Ubbbb Vbbbb", 0)
}

func TestScanTooManyChallenges(t *testing.T) {
	t.Parallel()
	// Every A2S_PLAYER earns a new challenge, and INFO with a challenge is
	// never answered: the sections in the air fail after MaxChallenges
	// challenges without an answer.
	srv := startScript(t, func(n int, req a2s.Request) [][]byte {
		if req.HasChallenge && req.Type == a2s.TypeInfoRequest {
			return nil
		}
		return [][]byte{a2s.AppendChallenge(nil, uint32(n+1))}
	})
	s := patient
	s.Query = a2sQuery([]result.Section{result.SectionInfo, result.SectionPlayers}, "max-challenges", "2")
	r, sum := scanOne(t, &s, srv.addr)
	if r.Status != StatusFailed || !errors.Is(sectionErr(r, result.SectionInfo), a2s.ErrTooManyChallenges) || !errors.Is(sectionErr(r, result.SectionPlayers), a2s.ErrTooManyChallenges) {
		t.Fatalf("status %v, info %v, players %v", r.Status, sectionErr(r, result.SectionInfo), sectionErr(r, result.SectionPlayers))
	}
	// INFO alone, then INFO and PLAYER with the challenges of requests 0
	// and 2; the challenge of request 4 is one too many.
	checkTraffic(t, srv, sum, "T- T1 U1 T3 U3", 0)
}

func TestScanResendsOnlyTheLostSection(t *testing.T) {
	t.Parallel()
	// The first PLAYER answer is lost: PLAYER alone is asked again.
	var once sync.Once
	handle := challenged(t, 0x77)
	srv := startScript(t, func(n int, req a2s.Request) [][]byte {
		out := handle(n, req)
		if req.Type == a2s.TypePlayerRequest && req.HasChallenge {
			drop := false
			once.Do(func() { drop = true })
			if drop {
				return nil
			}
		}
		return out
	})
	// Timeouts long enough that only the lost answer times out, even on a
	// slow machine.
	s := &Scanner{Retries: 2, MinTimeout: 200 * time.Millisecond, Timeout: 300 * time.Millisecond}
	r, sum := scanOne(t, s, srv.addr)
	checkAnswered(t, r)
	checkTraffic(t, srv, sum, "T- T77 U77 V77 U77", 1)
}

func TestScanRetriesPerSection(t *testing.T) {
	t.Parallel()
	// RULES is never answered: it alone uses up its retries and fails with
	// a timeout; the other sections stand.
	handle := challenged(t, 9)
	srv := startScript(t, func(n int, req a2s.Request) [][]byte {
		if req.Type == a2s.TypeRulesRequest && req.HasChallenge {
			return nil
		}
		return handle(n, req)
	})
	s := &Scanner{Retries: 2, MinTimeout: 100 * time.Millisecond, Timeout: 150 * time.Millisecond}
	r, sum := scanOne(t, s, srv.addr)
	a := a2sOf(r)
	if r.Status != StatusPartial || a.Info == nil || a.Players == nil || !errors.Is(sectionErr(r, result.SectionRules), a2s.ErrTimeout) {
		t.Fatalf("status %v, %+v", r.Status, a)
	}
	checkTraffic(t, srv, sum, "T- T9 U9 V9 V9 V9", 2)
}

func TestScanSplitRepliesInterleaved(t *testing.T) {
	t.Parallel()
	// PLAYER and RULES both come split, their fragments shuffled together
	// and one of them duplicated.
	var parked [][]byte
	srv := startScript(t, func(_ int, req a2s.Request) [][]byte {
		if !req.HasChallenge || req.Challenge != 5 {
			return [][]byte{a2s.AppendChallenge(nil, 5)}
		}
		switch req.Type {
		case a2s.TypePlayerRequest:
			parked = append(parked, split(t, 0x100, 64, encode(t, scriptPlayers))...)
			return nil
		case a2s.TypeRulesRequest:
			rules := split(t, 0x200, 200, encode(t, scriptRules))
			p := parked
			mixed := [][]byte{rules[2], p[1], rules[0], p[0], rules[0]}
			mixed = append(mixed, p[2:]...)
			mixed = append(mixed, rules[1])
			return append(mixed, rules[3:]...)
		}
		return [][]byte{answer(t, req)}
	})
	r, sum := scanOne(t, &patient, srv.addr)
	checkAnswered(t, r)
	if sum.Sent != 4 {
		t.Errorf("sent %d", sum.Sent)
	}
}

func TestScanGarbage(t *testing.T) {
	t.Parallel()
	// A datagram that is not A2S may be a stray: it ends nothing at once.
	// A section that then gets no answer reports the server as one that
	// answered, but not with A2S, rather than as silent.
	t.Run("then answers", func(t *testing.T) {
		handle := challenged(t, 3)
		srv := startScript(t, func(n int, req a2s.Request) [][]byte {
			out := handle(n, req)
			if req.Type == a2s.TypeInfoRequest && req.HasChallenge {
				out = append([][]byte{[]byte("\xFF\xFF\xFF")}, out...)
			}
			return out
		})
		r, _ := scanOne(t, &patient, srv.addr)
		checkAnswered(t, r)
	})
	t.Run("garbage only", func(t *testing.T) {
		srv := startScript(t, func(_ int, req a2s.Request) [][]byte {
			if !req.HasChallenge {
				return [][]byte{a2s.AppendChallenge(nil, 3)}
			}
			return [][]byte{[]byte("\xFF\xFF\xFF")}
		})
		s := &Scanner{Query: a2sInfo, Timeout: 30 * time.Millisecond, MinTimeout: 30 * time.Millisecond, Retries: -1}
		r, _ := scanOne(t, s, srv.addr)
		var pe *a2s.ParseError
		if err := sectionErr(r, result.SectionInfo); r.Status != StatusFailed || !errors.Is(err, a2s.ErrNotA2S) || errors.Is(err, a2s.ErrTimeout) || !errors.As(err, &pe) {
			t.Fatalf("status %v, info error %v", r.Status, err)
		}
	})
}

func TestScanProfiles(t *testing.T) {
	t.Parallel()
	// The quirks of real servers, played by a2stest, with what each
	// server must have seen.
	for _, tc := range []struct {
		profile  string
		requests int64
	}{
		{"modern", 4},          // INFO, then INFO, PLAYER and RULES with the challenge
		{"legacy", 3},          // no challenge: INFO, PLAYER, then RULES
		{"goldsource-dual", 4}, // 'm' and 'I' for one INFO
		{"split-out-of-order", 4},
		{"bzip2-nosize", 4},
		{"rust", 4},
	} {
		t.Run(tc.profile, func(t *testing.T) {
			p, err := a2stest.LookupProfile(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			srv := a2stest.NewServer(p)
			t.Cleanup(srv.Close)
			r, _ := scanOne(t, &patient, srv.Addr())
			a := a2sOf(r)
			if r.Status != StatusAnswered || a.Info == nil || a.Players == nil || a.Rules == nil {
				t.Fatalf("status %v, %+v", r.Status, a)
			}
			if tc.profile == "goldsource-dual" && (a.GoldSource == nil || a.Info.Format != a2s.TypeInfoReply) {
				t.Errorf("info %+v, goldsource %+v: want the 'I' reply, the 'm' one kept", a.Info, a.GoldSource)
			}
			// The server counts the datagrams it received; the client's
			// socket is gone once the scan returns, so none is in flight.
			if got := srv.Received(); got != tc.requests {
				t.Errorf("server received %d requests, want %d", got, tc.requests)
			}
		})
	}
}

func TestScanBanned(t *testing.T) {
	t.Parallel()
	// A server that refuses the client with an 'l' reply fails every
	// section at once with its message, and is never asked again.
	p, _ := a2stest.LookupProfile("banned")
	srv := a2stest.NewServer(p)
	t.Cleanup(srv.Close)
	r, _ := scanOne(t, &patient, srv.Addr())
	if r.Status != StatusFailed {
		t.Fatalf("status %v, want failed", r.Status)
	}
	for name, err := range map[string]error{"info": sectionErr(r, result.SectionInfo), "players": sectionErr(r, result.SectionPlayers), "rules": sectionErr(r, result.SectionRules)} {
		var be *a2s.BannedError
		if !errors.As(err, &be) || string(be.Message) != string(p.Banned) {
			t.Errorf("%s: error %v, want the server's ban message", name, err)
		}
	}
	if got := srv.Received(); got != 1 {
		t.Errorf("server received %d requests, want 1", got)
	}
}

func TestScanHostIntervalOneAtATime(t *testing.T) {
	t.Parallel()
	// With HostInterval, a server gets one request at a time, spaced: each
	// goes out at least HostInterval after the previous one left.
	srv := startScript(t, challenged(t, 0x42))
	const gap = 40 * time.Millisecond
	var sends sendTimes
	s := patient
	s.HostInterval = gap
	s.Debug = sends.hook
	r, sum := scanOne(t, &s, srv.addr)
	checkAnswered(t, r)
	checkTraffic(t, srv, sum, "T- T42 U42 V42", 0)
	sends.check(t, gap)
}

// sendTimes records when a scan sent each request, per server, from its
// Debug hook.
type sendTimes struct {
	mu sync.Mutex
	at map[netip.AddrPort][]time.Time
}

func (s *sendTimes) hook(dir string, addr netip.AddrPort, _ []byte) {
	if dir != "send" {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.at == nil {
		s.at = map[netip.AddrPort][]time.Time{}
	}
	s.at[addr] = append(s.at[addr], now)
}

// check fails t unless the requests to each server went out gap apart or
// more.
func (s *sendTimes) check(t *testing.T, gap time.Duration) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for addr, at := range s.at {
		for i := 1; i < len(at); i++ {
			if d := at[i].Sub(at[i-1]); d < gap {
				t.Errorf("%s: requests %d and %d %v apart, HostInterval %v", addr, i-1, i, d, gap)
			}
		}
	}
}

func TestScanContextDuringPipeline(t *testing.T) {
	t.Parallel()
	// Canceling while sections wait returns promptly, with the target's
	// canceled result.
	var once sync.Once
	asked := make(chan struct{})
	srv := startScript(t, func(_ int, req a2s.Request) [][]byte {
		if !req.HasChallenge {
			return [][]byte{a2s.AppendChallenge(nil, 1)}
		}
		once.Do(func() { close(asked) })
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-asked
		cancel()
	}()
	var results []*Outcome
	sum, err := patient.Scan(ctx, strings.NewReader(srv.addr.String()), func(r *Outcome) { results = append(results, r) })
	if !errors.Is(err, context.Canceled) || len(results) != 1 || sum.Canceled != 1 {
		t.Fatalf("err %v, %d results, %+v", err, len(results), sum)
	}
	r := results[0]
	if r.Status != StatusCanceled || !errors.Is(sectionErr(r, result.SectionRules), context.Canceled) || r.Result.Err.Kind != result.KindCanceled {
		t.Errorf("status %v, %+v, errors %+v", r.Status, r.Result.Err, r.Result.Errors)
	}
}

func TestScanCanceledKeepsAnswers(t *testing.T) {
	t.Parallel()
	// A server answers INFO, then nothing: canceled then, its result
	// keeps the info, and the sections left fail as canceled. With
	// HostInterval the client asks one section at a time, so PLAYER goes
	// out once the INFO answer is in.
	var once sync.Once
	asked := make(chan struct{})
	handle := challenged(t, 0x31)
	srv := startScript(t, func(n int, req a2s.Request) [][]byte {
		if req.Type == a2s.TypePlayerRequest && req.HasChallenge {
			once.Do(func() { close(asked) })
		}
		if req.Type == a2s.TypeInfoRequest {
			return handle(n, req)
		}
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-asked
		cancel()
	}()
	s := patient
	s.HostInterval = time.Millisecond
	var results []*Outcome
	sum, err := s.Scan(ctx, strings.NewReader(srv.addr.String()), func(r *Outcome) { results = append(results, r) })
	if !errors.Is(err, context.Canceled) || len(results) != 1 || sum.Canceled != 1 {
		t.Fatalf("err %v, %d results, %+v", err, len(results), sum)
	}
	r := results[0]
	if r.Status != StatusCanceled || a2sOf(r).Info == nil || r.Result.Err != nil {
		t.Fatalf("status %v, info %+v, error %v", r.Status, a2sOf(r).Info, r.Result.Err)
	}
	for _, sec := range []result.Section{result.SectionPlayers, result.SectionRules} {
		if e := r.Result.SectionErr(sec); e == nil || e.Kind != result.KindCanceled {
			t.Errorf("%s: %+v, want canceled", sec, e)
		}
	}
}

func TestScanWaitsForEmit(t *testing.T) {
	// Not parallel: it sets testHookWait.
	//
	// Bad lines are done at once. While emit is stuck, the scan stops
	// reading targets once maxUnemitted results wait, although it has
	// slots to spare: it never reads more than that ahead of what it
	// emitted, the targets taken ahead of the dispatcher and what the line
	// reader buffers (16 KB).
	const n = 500
	src := &lineSource{addrs: []string{"bad:0 # " + strings.Repeat("x", 900)}, n: n}
	lineLen := int64(len(src.addrs[0]) + 1)
	var emitted atomic.Int64
	limit := (maxUnemitted + 2 + feedBuffer + 1 + 16<<10/lineLen + 1) * lineLen
	src.check = func(read int64) {
		if ahead := read - emitted.Load()*lineLen; ahead > limit {
			t.Errorf("%d bytes read ahead of the results, limit %d", ahead, limit)
		}
	}
	waiting := make(chan struct{})
	var once sync.Once
	testHookWait = func() { once.Do(func() { close(waiting) }) }
	defer func() { testHookWait = nil }()
	release := make(chan struct{})
	done := make(chan Summary, 1)
	go func() {
		s := &Scanner{Concurrency: 10 * n}
		sum, err := s.Scan(context.Background(), src, func(*Outcome) {
			if emitted.Add(1) == 1 {
				<-release // stuck until the dispatcher waits
			}
		})
		if err != nil {
			t.Error(err)
		}
		done <- sum
	}()
	select {
	case <-waiting:
	case <-time.After(10 * time.Second):
		t.Fatal("the dispatcher never waited for the stuck emitter")
	}
	close(release)
	if sum := <-done; sum.Targets != n || sum.Failed != n {
		t.Errorf("%+v", sum)
	}
}

func TestSetBehind(t *testing.T) {
	e := &engine{caughtUp: make(chan struct{})}
	a, b := &socket{}, &socket{}
	wake := e.caughtUpChan()
	e.setBehind(a, true)
	e.setBehind(a, true) // no change
	e.setBehind(b, true)
	if got := e.behind.Load(); got != 2 {
		t.Fatalf("behind %d, want 2", got)
	}
	e.setBehind(a, false)
	select {
	case <-wake:
		t.Fatal("woken while a socket is still behind")
	default:
	}
	e.setBehind(b, false)
	select {
	case <-wake:
	default:
		t.Fatal("not woken once every socket caught up")
	}
	if got := e.behind.Load(); got != 0 {
		t.Errorf("behind %d, want 0", got)
	}
}

func TestScanDeadline(t *testing.T) {
	t.Parallel()
	// The server answers INFO, never PLAYER or RULES. Only the Deadline
	// can end the target: each send waits 20 s.
	srv := startScript(t, func(_ int, req a2s.Request) [][]byte {
		if req.Type == a2s.TypeInfoRequest {
			return [][]byte{answer(t, req)}
		}
		return nil
	})
	s := patient
	s.Retries = 5
	// Long enough for INFO's answer on a loaded machine under the race
	// detector (100 ms was not, one run in a few hundred).
	s.Deadline = 500 * time.Millisecond
	r, sum := scanOne(t, &s, srv.addr)
	a := a2sOf(r)
	if r.Status != StatusPartial || a.Info == nil || !errors.Is(sectionErr(r, result.SectionPlayers), a2s.ErrTimeout) || !errors.Is(sectionErr(r, result.SectionRules), a2s.ErrTimeout) {
		t.Fatalf("status %v, %+v", r.Status, a)
	}
	// A server without challenges gets PLAYER alone after INFO, and RULES
	// would follow PLAYER's answer.
	checkTraffic(t, srv, sum, "T- U-", 0)
}

func TestSessionKeepsChallenge(t *testing.T) {
	t.Parallel()
	// A poller runs the same server again and again on one Session: after
	// the first scan, the challenge is known and every section goes at once.
	srv := startScript(t, challenged(t, 0x51))
	ss, err := patient.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	targets := []Target{{Addr: srv.addr, Input: "my server", Line: 7}}
	for i := range 3 {
		var got []*Outcome
		sum, err := ss.Run(testutil.Context(t), slices.Values(targets), func(r *Outcome) { got = append(got, r) })
		if err != nil || len(got) != 1 || sum.Targets != 1 {
			t.Fatalf("run %d: %v, %d results, %+v", i, err, len(got), sum)
		}
		checkAnswered(t, got[0])
		if tg := got[0].Target; tg.Input != "my server" || tg.Line != 7 || got[0].Result.Addr != srv.addr {
			t.Errorf("run %d: target %+v, addr %v", i, tg, got[0].Result.Addr)
		}
	}
	checkTraffic(t, srv, Summary{Sent: 10}, "T- T51 U51 V51 T51 U51 V51 T51 U51 V51", 0)
}

func TestSessionTargetsFromChannel(t *testing.T) {
	t.Parallel()
	// Targets come from a channel, each with the sections it wants; two
	// runs share the session at once.
	srv := startScript(t, challenged(t, 0x99))
	other := startScript(t, challenged(t, 0x98))
	ss, err := patient.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	ctx := testutil.Context(t)
	runs := make(chan []*Outcome, 2)
	for _, tg := range []Target{
		{Addr: srv.addr, Query: a2sQuery([]result.Section{result.SectionRules})},
		{Addr: other.addr, Query: a2sQuery([]result.Section{result.SectionInfo, result.SectionPlayers})},
	} {
		ch := make(chan Target)
		go func() {
			ch <- tg
			close(ch)
		}()
		go func() {
			var got []*Outcome
			_, err := ss.Run(ctx, Channel(ctx, ch), func(r *Outcome) { got = append(got, r) })
			if err != nil {
				t.Error(err)
			}
			runs <- got
		}()
	}
	for range 2 {
		got := <-runs
		if len(got) != 1 || got[0].Status != StatusAnswered {
			t.Fatalf("results %+v", got)
		}
		a := a2sOf(got[0])
		switch got[0].Result.Addr {
		case srv.addr:
			if a.Info != nil || a.Players != nil || a.Rules == nil {
				t.Errorf("asked for rules, got %+v", a)
			}
		case other.addr:
			if a.Info == nil || a.Players == nil || a.Rules != nil {
				t.Errorf("asked for info and players, got %+v", a)
			}
		}
	}
	checkTraffic(t, srv, Summary{Sent: 2}, "V- V99", 0)
	checkTraffic(t, other, Summary{Sent: 3}, "T- T98 U98", 0)
}
