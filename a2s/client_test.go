package a2s_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/testutil"
)

func newClient(t *testing.T) *a2s.Client {
	c := &a2s.Client{Timeout: 500 * time.Millisecond, Retries: 3}
	t.Cleanup(func() { c.Close() })
	return c
}

// newModernServer starts a server of the default profile without a rate
// limit, closed with the test, and returns it with what it answers.
func newModernServer(t *testing.T) (*a2stest.Server, *a2s.Info, *a2s.Players, *a2s.Rules) {
	p := a2stest.Profile{RateLimit: -1}
	srv := a2stest.NewServer(p)
	t.Cleanup(srv.Close)
	info, players, rules := p.Content()
	return srv, info, players, rules
}

func checkInfo(t *testing.T, got, want *a2s.Info) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("info:\n got %+v\nwant %+v", got, want)
	}
}

func checkPlayers(t *testing.T, got, want *a2s.Players) {
	t.Helper()
	if got.Count != want.Count || got.Ship != want.Ship || !reflect.DeepEqual(got.List, want.List) {
		t.Errorf("players: got count %d ship %v %d entries, want count %d ship %v %d entries",
			got.Count, got.Ship, len(got.List), want.Count, want.Ship, len(want.List))
	}
}

func checkRules(t *testing.T, got, want *a2s.Rules) {
	t.Helper()
	if got.Count != want.Count || !reflect.DeepEqual(got.List, want.List) {
		t.Errorf("rules: got count %d, %d entries, want count %d, %d entries", got.Count, len(got.List), want.Count, len(want.List))
	}
}

// TestClientProfiles has the client query every built-in profile over
// loopback and get exactly the profile's content.
func TestClientProfiles(t *testing.T) {
	t.Parallel()
	for _, p := range a2stest.Profiles() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			srv := a2stest.NewServer(p)
			defer srv.Close()
			c := newClient(t)
			if p.Loss > 0 {
				c.Timeout, c.Retries = 200*time.Millisecond, 20
			}
			ctx := testutil.Context(t)
			if p.Banned != nil {
				checkBanned(t, c, srv.Addr(), p.Banned)
				return
			}
			wantInfo, wantPlayers, wantRules := p.Content()
			res, err := c.Info(ctx, srv.Addr())
			if err != nil {
				t.Fatalf("Info: %v", err)
			}
			checkInfo(t, res.Info, wantInfo)
			if p.GoldSourceDual {
				if res.GoldSource == nil || res.GoldSource.Format != a2s.TypeInfoReplyGoldSource {
					t.Errorf("GoldSource reply missing: %+v", res.GoldSource)
				} else if string(res.GoldSource.Name) != string(wantInfo.Name) {
					t.Errorf("GoldSource name %q, want %q", res.GoldSource.Name, wantInfo.Name)
				}
			} else if res.GoldSource != nil {
				t.Errorf("unexpected GoldSource reply %+v", res.GoldSource)
			}
			players, err := c.Players(ctx, srv.Addr())
			if err != nil {
				t.Fatalf("Players: %v", err)
			}
			checkPlayers(t, players, wantPlayers)
			rules, err := c.Rules(ctx, srv.Addr())
			if err != nil {
				t.Fatalf("Rules: %v", err)
			}
			checkRules(t, rules, wantRules)
		})
	}
}

// checkBanned checks that every query of a refusing server fails at
// once with its message, without waiting out retries.
func checkBanned(t *testing.T, c *a2s.Client, addr netip.AddrPort, msg a2s.Text) {
	t.Helper()
	c.Timeout, c.Retries = 10*time.Second, 5
	ctx := testutil.Context(t)
	queries := map[string]func() error{
		"info":    func() error { _, err := c.Info(ctx, addr); return err },
		"players": func() error { _, err := c.Players(ctx, addr); return err },
		"rules":   func() error { _, err := c.Rules(ctx, addr); return err },
	}
	for name, query := range queries {
		start := time.Now()
		err := query()
		var be *a2s.BannedError
		// A short query gets the text cut: a2stest answers an unproven
		// query with at most three times its size.
		if !errors.Is(err, a2s.ErrBanned) || !errors.As(err, &be) || len(be.Message) == 0 || !strings.HasPrefix(string(msg), string(be.Message)) {
			t.Errorf("%s: err = %v, want a BannedError %q", name, err, msg)
		}
		if waited := time.Since(start); waited >= c.Timeout {
			t.Errorf("%s: refused after %v, not at once", name, waited)
		}
	}
}

// TestClientRustCounts checks the Rust profile's >255 counts come through
// the keywords.
func TestClientRustCounts(t *testing.T) {
	t.Parallel()
	p, _ := a2stest.LookupProfile("rust")
	srv := a2stest.NewServer(p)
	defer srv.Close()
	res, err := newClient(t).Info(testutil.Context(t), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if n, m := res.Info.PlayerCounts(); n != 280 || m != 300 {
		t.Errorf("PlayerCounts = %d, %d, want 280, 300", n, m)
	}
	if res.Info.Players != 24 || res.Info.MaxPlayers != 44 {
		t.Errorf("raw counts %d/%d, want the wrapped 24/44", res.Info.Players, res.Info.MaxPlayers)
	}
}

// TestClientChallengeCached checks that PLAYER and RULES reuse the
// challenge INFO earned: 2 datagrams for INFO, then 1 each.
func TestClientChallengeCached(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{RateLimit: -1})
	defer srv.Close()
	c := newClient(t)
	ctx := testutil.Context(t)
	if _, err := c.Info(ctx, srv.Addr()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Received(); n != 2 {
		t.Errorf("INFO took %d datagrams, want 2 (request, request+challenge)", n)
	}
	if _, err := c.Players(ctx, srv.Addr()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Rules(ctx, srv.Addr()); err != nil {
		t.Fatal(err)
	}
	if n := srv.Received(); n != 4 {
		t.Errorf("INFO+PLAYER+RULES took %d datagrams, want 4", n)
	}
}

// TestClientStaleChallenge: a server restarted with a new secret rejects
// the cached challenge; the client follows the new 'A'.
func TestClientStaleChallenge(t *testing.T) {
	t.Parallel()
	c := newClient(t)
	ctx := testutil.Context(t)
	srv := a2stest.NewServer(a2stest.Profile{RateLimit: -1})
	if _, err := c.Info(ctx, srv.Addr()); err != nil {
		t.Fatal(err)
	}
	addr := srv.Addr()
	srv.Close()
	// a new server on the same port has a new secret
	pc, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(addr))
	if err != nil {
		t.Skipf("port %v reused by someone else: %v", addr, err)
	}
	h, err := a2s.NewStaticHandler(a2stest.DefaultInfo(), a2stest.DefaultPlayers(), a2stest.DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	s2 := &a2s.Server{Handler: h, RateLimit: -1}
	go s2.Serve(pc)
	defer s2.Shutdown(context.Background())
	if _, err := c.Players(ctx, addr); err != nil {
		t.Fatalf("Players after the server changed its secret: %v", err)
	}
}

func TestClientLegacyChallenge(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{RateLimit: -1})
	defer srv.Close()
	c := newClient(t)
	c.LegacyChallenge = true
	var sent []byte
	var mu sync.Mutex
	c.Debug = func(dir string, _ netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if dir == "send" {
			sent = append(sent, b[4])
		}
	}
	p, err := c.Players(testutil.Context(t), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	checkPlayers(t, p, a2stest.DefaultPlayers())
	mu.Lock()
	defer mu.Unlock()
	if string(sent) != "WU" {
		t.Errorf("sent request types %q, want \"WU\"", sent)
	}
}

func TestClientPadInfo(t *testing.T) {
	t.Parallel()
	// A padded A2S_INFO is answered at once by a server that accepts it,
	// and after an 'A' reply by one that insists on the challenge; every
	// INFO request is PaddedInfoSize bytes either way.
	for _, tc := range []struct {
		accept bool
		sends  int
	}{{true, 1}, {false, 2}} {
		pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		h, err := a2s.NewStaticHandler(a2stest.DefaultInfo(), a2stest.DefaultPlayers(), a2stest.DefaultRules())
		if err != nil {
			t.Fatal(err)
		}
		s := &a2s.Server{Handler: h, RateLimit: -1, AcceptPaddedInfo: tc.accept}
		go s.Serve(pc)
		c := newClient(t)
		c.PadInfo = true
		var mu sync.Mutex
		var sizes []int
		c.Debug = func(dir string, _ netip.AddrPort, b []byte) {
			mu.Lock()
			defer mu.Unlock()
			if dir == "send" {
				sizes = append(sizes, len(b))
			}
		}
		res, err := c.Info(testutil.Context(t), pc.LocalAddr().(*net.UDPAddr).AddrPort())
		s.Shutdown(context.Background())
		if err != nil {
			t.Fatalf("accept %v: %v", tc.accept, err)
		}
		checkInfo(t, res.Info, a2stest.DefaultInfo())
		mu.Lock()
		if len(sizes) != tc.sends {
			t.Errorf("accept %v: sent %d requests, want %d", tc.accept, len(sizes), tc.sends)
		}
		for _, n := range sizes {
			if n != a2s.PaddedInfoSize {
				t.Errorf("accept %v: a %d-byte INFO request, want %d", tc.accept, n, a2s.PaddedInfoSize)
			}
		}
		mu.Unlock()
	}
}

func TestClientPing(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	rtt, err := newClient(t).Ping(testutil.Context(t), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if rtt <= 0 {
		t.Errorf("rtt = %v", rtt)
	}
}

// fakePeer is a scripted UDP server: answer is called for every request.
type fakePeer struct {
	conn *net.UDPConn
	done chan struct{}
}

func newFakePeer(t *testing.T, answer func(conn *net.UDPConn, from netip.AddrPort, req []byte)) netip.AddrPort {
	conn, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakePeer{conn: conn, done: make(chan struct{})}
	go func() {
		defer close(f.done)
		buf := make([]byte, 2048)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			if answer != nil {
				answer(conn, from, buf[:n])
			}
		}
	}()
	t.Cleanup(func() {
		conn.Close()
		<-f.done
	})
	return conn.LocalAddr().(*net.UDPAddr).AddrPort()
}

func TestClientSilentServer(t *testing.T) {
	t.Parallel()
	addr := newFakePeer(t, nil)
	c := &a2s.Client{Timeout: 50 * time.Millisecond, Retries: 1}
	defer c.Close()
	_, err := c.Info(testutil.Context(t), addr)
	if !errors.Is(err, a2s.ErrTimeout) || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout and os.ErrDeadlineExceeded", err)
	}
	var te interface{ Timeout() bool }
	if !errors.As(err, &te) || !te.Timeout() {
		t.Errorf("err %v has no Timeout method returning true", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c.Timeout = time.Hour
	_, err = c.Players(ctx, addr)
	if !errors.Is(err, a2s.ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout and context.DeadlineExceeded", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = c.Rules(ctx, addr)
	if !errors.Is(err, context.Canceled) || errors.Is(err, a2s.ErrTimeout) {
		t.Fatalf("err = %v, want context.Canceled only", err)
	}
}

func challengeReply(c uint32) []byte {
	return binary.LittleEndian.AppendUint32([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'A'}, c)
}

// TestClientChallengeLoop: a server that answers every request with a new
// challenge makes the query fail with ErrTooManyChallenges.
func TestClientChallengeLoop(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	requests := 0
	n := uint32(1)
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, _ []byte) {
		mu.Lock()
		requests++
		n++
		c := n
		mu.Unlock()
		conn.WriteToUDPAddrPort(challengeReply(c), from)
	})
	c := newClient(t)
	c.MaxChallenges = 4
	_, err := c.Info(testutil.Context(t), addr)
	if !errors.Is(err, a2s.ErrTooManyChallenges) {
		t.Fatalf("err = %v, want ErrTooManyChallenges", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != 5 {
		t.Errorf("server saw %d requests, want 5 (first + 4 challenged)", requests)
	}
}

// TestClientMismatchedReplies: junk, replies of the wrong type and replies
// from another address are ignored; the right reply still completes the
// query.
func TestClientMismatchedReplies(t *testing.T) {
	t.Parallel()
	other, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	want := a2stest.DefaultInfo()
	infoReply, err := want.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	wrongName := a2stest.DefaultInfo()
	wrongName.Name = a2s.Text("impostor")
	impostor, _ := wrongName.AppendBinary(nil)
	playersReply, _ := a2stest.DefaultPlayers().AppendBinary(nil)
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, req []byte) {
		if req[4] != a2s.TypeInfoRequest {
			return
		}
		other.WriteToUDPAddrPort(impostor, from)                      // wrong source address
		conn.WriteToUDPAddrPort([]byte{0xFF, 0xFF}, from)             // runt
		conn.WriteToUDPAddrPort([]byte("hello, world"), from)         // not A2S
		conn.WriteToUDPAddrPort(playersReply, from)                   // wrong type
		conn.WriteToUDPAddrPort([]byte{0xFF, 0xFF, 0xFF, 0xFE}, from) // bad fragment
		conn.WriteToUDPAddrPort(infoReply, from)
	})
	res, err := newClient(t).Info(testutil.Context(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, res.Info, want)
}

// TestClientParseError: a reply of the right type that does not parse is
// reported as a *ParseError.
func TestClientParseError(t *testing.T) {
	t.Parallel()
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, req []byte) {
		conn.WriteToUDPAddrPort([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'I', 17, 'x'}, from)
	})
	_, err := newClient(t).Info(testutil.Context(t), addr)
	var pe *a2s.ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a *ParseError", err)
	}
}

// TestClientConcurrent shares one client between many goroutines querying
// several servers at once (run with -race).
func TestClientConcurrent(t *testing.T) {
	t.Parallel()
	var servers []*a2stest.Server
	for _, name := range []string{"modern", "legacy", "split-out-of-order", "goldsource-dual"} {
		p, _ := a2stest.LookupProfile(name)
		p.RateLimit = -1
		s := a2stest.NewServer(p)
		defer s.Close()
		servers = append(servers, s)
	}
	c := newClient(t)
	ctx := testutil.Context(t)
	var wg sync.WaitGroup
	errs := make(chan error, 1000)
	for g := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				s := servers[(g+i)%len(servers)]
				_, wantPlayers, wantRules := s.Profile.Content()
				var err error
				switch i % 3 {
				case 0:
					_, err = c.Info(ctx, s.Addr())
				case 1:
					var p *a2s.Players
					if p, err = c.Players(ctx, s.Addr()); err == nil && len(p.List) != len(wantPlayers.List) {
						err = fmt.Errorf("%d players, want %d", len(p.List), len(wantPlayers.List))
					}
				case 2:
					var r *a2s.Rules
					if r, err = c.Rules(ctx, s.Addr()); err == nil && len(r.List) != len(wantRules.List) {
						err = fmt.Errorf("%d rules, want %d", len(r.List), len(wantRules.List))
					}
				}
				if err != nil {
					errs <- fmt.Errorf("%s: %w", s.Profile.Name, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestClientClose(t *testing.T) {
	t.Parallel()
	addr := newFakePeer(t, nil)
	sent := make(chan struct{}, 1)
	c := &a2s.Client{Timeout: time.Hour, Debug: func(dir string, _ netip.AddrPort, _ []byte) {
		if dir == "send" {
			sent <- struct{}{}
		}
	}}
	done := make(chan error, 1)
	go func() {
		_, err := c.Info(context.Background(), addr)
		done <- err
	}()
	<-sent // the query is in flight
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, a2s.ErrClientClosed) {
		t.Fatalf("in-flight query: err = %v, want ErrClientClosed", err)
	}
	if _, err := c.Info(context.Background(), addr); !errors.Is(err, a2s.ErrClientClosed) {
		t.Fatalf("after Close: err = %v, want ErrClientClosed", err)
	}
}

func TestQueryInfo(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{})
	defer srv.Close()
	info, err := a2s.QueryInfo(testutil.Context(t), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, info, a2stest.DefaultInfo())
}

// BenchmarkClientQuery measures one client doing INFO, PLAYER and RULES
// (a 3-fragment split) against a modern server, from parallel goroutines.
func BenchmarkClientQuery(b *testing.B) {
	srv := a2stest.NewServer(a2stest.Profile{RateLimit: -1})
	defer srv.Close()
	c := &a2s.Client{}
	defer c.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Info(ctx, srv.Addr()); err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Players(ctx, srv.Addr()); err != nil {
				b.Error(err)
				return
			}
			if _, err := c.Rules(ctx, srv.Addr()); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// TestClientSendError: a request the kernel refuses (port 0) fails at once
// with the socket's error, not a timeout.
func TestClientSendError(t *testing.T) {
	t.Parallel()
	c := &a2s.Client{Timeout: 10 * time.Second}
	defer c.Close()
	_, err := c.Info(testutil.Context(t), netip.MustParseAddrPort("127.0.0.1:0"))
	if err == nil || errors.Is(err, a2s.ErrTimeout) {
		t.Fatalf("err = %v, want the send error", err)
	}
}

// wrappedConn hides *net.UDPConn so that the client takes its generic
// net.PacketConn path.
type wrappedConn struct{ net.PacketConn }

func TestClientGenericPacketConn(t *testing.T) {
	t.Parallel()
	srv := a2stest.NewServer(a2stest.Profile{RateLimit: -1})
	defer srv.Close()
	pc := listenLoopback(t)
	c := &a2s.Client{Timeout: time.Second, PacketConn: wrappedConn{pc}}
	defer c.Close()
	ctx := testutil.Context(t)
	res, err := c.Info(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, res.Info, a2stest.DefaultInfo())
	rules, err := c.Rules(ctx, srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	checkRules(t, rules, a2stest.DefaultRules())
}

// TestClientQueryAllocs: INFO, PLAYER and RULES (a 3-fragment split) with
// the challenge cached allocate 9 times in all, the server included (it
// answers from its cache): per reply one owned buffer that the result
// aliases (the reassembled RULES payload is that buffer), plus the result
// structs and lists. The budget of 10 leaves room for a pool refilled after
// a GC.
func TestClientQueryAllocs(t *testing.T) {
	if testutil.Race {
		t.Skip("the race detector allocates")
	}
	srv := a2stest.NewServer(a2stest.Profile{RateLimit: -1})
	defer srv.Close()
	c := newClient(t)
	ctx := testutil.Context(t)
	var err error
	query := func() {
		if err != nil {
			return
		}
		if _, err = c.Info(ctx, srv.Addr()); err != nil {
			return
		}
		if _, err = c.Players(ctx, srv.Addr()); err != nil {
			return
		}
		_, err = c.Rules(ctx, srv.Addr())
	}
	query() // opens the socket and caches the challenge
	allocs := testing.AllocsPerRun(100, query)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%.1f allocations per INFO+PLAYER+RULES", allocs)
	if allocs > 10 {
		t.Errorf("%.0f allocations per INFO+PLAYER+RULES, want at most 10", allocs)
	}
}

// TestClientResultsIndependent: results alias the buffers the client
// received them in, so those buffers must never be reused: earlier results
// stay intact while later queries run, alone or concurrently.
func TestClientResultsIndependent(t *testing.T) {
	t.Parallel()
	srv, wantInfo, wantPlayers, wantRules := newModernServer(t)
	c := newClient(t)
	ctx := testutil.Context(t)
	var infos []*a2s.Info
	var players []*a2s.Players
	var rules []*a2s.Rules
	var mu sync.Mutex
	for range 3 {
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in, err := c.Info(ctx, srv.Addr())
				if err != nil {
					t.Error(err)
					return
				}
				pl, err := c.Players(ctx, srv.Addr())
				if err != nil {
					t.Error(err)
					return
				}
				rl, err := c.Rules(ctx, srv.Addr())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				infos, players, rules = append(infos, in.Info), append(players, pl), append(rules, rl)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	for i := range infos {
		checkInfo(t, infos[i], wantInfo)
		checkPlayers(t, players[i], wantPlayers)
		checkRules(t, rules[i], wantRules)
	}
	// Each result owns its bytes: scribbling over one leaves the others.
	for i := range rules[0].Raw {
		rules[0].Raw[i] = 0
	}
	for i := range infos[0].Name {
		infos[0].Name[i] = 0
	}
	for i := 1; i < len(infos); i++ {
		checkInfo(t, infos[i], wantInfo)
		checkRules(t, rules[i], wantRules)
	}
}

// infoRequest parses a request the fake peer got, failing the test if it
// is not A2S_INFO.
func infoRequest(t *testing.T, b []byte) a2s.Request {
	req, err := a2s.ParseRequest(b)
	if err != nil || req.Type != a2s.TypeInfoRequest {
		t.Errorf("request %x: %+v, %v; want A2S_INFO", b, req, err)
	}
	return req
}

// TestClientRetryKeepsChallenge: the challenged request is lost once; the
// retry carries the challenge the read loop received, and succeeds.
func TestClientRetryKeepsChallenge(t *testing.T) {
	t.Parallel()
	want := a2stest.DefaultInfo()
	reply, err := want.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []a2s.Request
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, b []byte) {
		req := infoRequest(t, b)
		mu.Lock()
		seen = append(seen, req)
		n := len(seen)
		mu.Unlock()
		switch {
		case !req.HasChallenge:
			conn.WriteToUDPAddrPort(challengeReply(7), from)
		case n == 2: // the first challenged request is lost
		case req.Challenge == 7:
			conn.WriteToUDPAddrPort(reply, from)
		}
	})
	c := &a2s.Client{Timeout: 500 * time.Millisecond, Retries: 2} // only the lost request times out, even when slow
	defer c.Close()
	res, err := c.Info(testutil.Context(t), addr)
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, res.Info, want)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 || seen[0].HasChallenge || !seen[1].HasChallenge || !seen[2].HasChallenge || seen[2].Challenge != 7 {
		t.Errorf("server saw %+v, want a request without a challenge, then two with 7", seen)
	}
}

// TestClientCancelWhileReplyInFlight cancels queries just as their reply
// is sent. Each returns the reply or context.Canceled, and the next query
// on the same client gets its own reply, never the canceled one's.
func TestClientCancelWhileReplyInFlight(t *testing.T) {
	t.Parallel()
	info, err := a2stest.DefaultInfo().AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPlayers := a2stest.DefaultPlayers()
	players, err := wantPlayers.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var cancel context.CancelFunc
	addr := newFakePeer(t, func(conn *net.UDPConn, from netip.AddrPort, b []byte) {
		req, err := a2s.ParseRequest(b)
		if err != nil {
			t.Error(err)
			return
		}
		switch req.Type {
		case a2s.TypeInfoRequest:
			mu.Lock()
			cancel()
			mu.Unlock()
			conn.WriteToUDPAddrPort(info, from)
		case a2s.TypePlayerRequest:
			conn.WriteToUDPAddrPort(players, from)
		}
	})
	c := newClient(t)
	for range 50 {
		ctx, cf := context.WithCancel(testutil.Context(t))
		mu.Lock()
		cancel = cf
		mu.Unlock()
		if _, err := c.Info(ctx, addr); err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled Info: %v", err)
		}
		p, err := c.Players(testutil.Context(t), addr)
		if err != nil {
			t.Fatalf("Players after a canceled Info: %v", err)
		}
		checkPlayers(t, p, wantPlayers)
	}
}

// TestClientConcurrentChallenges: many queries of every kind start at once
// against one server that challenges every query, with nothing cached yet.
// Each 'A' reply goes to one query, which the read loop resends; all
// succeed.
func TestClientConcurrentChallenges(t *testing.T) {
	t.Parallel()
	srv, wantInfo, wantPlayers, wantRules := newModernServer(t)
	c := newClient(t)
	ctx := testutil.Context(t)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			switch g % 3 {
			case 0:
				res, err := c.Info(ctx, srv.Addr())
				if err != nil {
					t.Error(err)
					return
				}
				checkInfo(t, res.Info, wantInfo)
			case 1:
				p, err := c.Players(ctx, srv.Addr())
				if err != nil {
					t.Error(err)
					return
				}
				checkPlayers(t, p, wantPlayers)
			case 2:
				r, err := c.Rules(ctx, srv.Addr())
				if err != nil {
					t.Error(err)
					return
				}
				checkRules(t, r, wantRules)
			}
		}()
	}
	close(start)
	wg.Wait()
}
