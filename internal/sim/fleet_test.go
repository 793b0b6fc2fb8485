package sim

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/internal/lossy"
	"github.com/gsq-project/gsq/ogp"
)

// startTestFleet starts cfg's fleet on free ports and closes it after
// the test.
func startTestFleet(t *testing.T, cfg FleetConfig) *Fleet {
	t.Helper()
	f, err := StartFleetAnywhere(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// dial returns a UDP socket connected to addr, closed after the test.
func dial(t *testing.T, addr netip.AddrPort) *net.UDPConn {
	t.Helper()
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// ask sends req on c and returns the next n datagrams. Loopback keeps
// order, so a datagram too many would come out in the next ask. The
// deadline only keeps a broken server from hanging the test.
func ask(t *testing.T, c *net.UDPConn, req []byte, n int) [][]byte {
	t.Helper()
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for range n {
		buf := make([]byte, 65536)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		m, err := c.Read(buf)
		if err != nil {
			t.Fatalf("%d of %d datagrams: %v", len(got), n, err)
		}
		got = append(got, buf[:m])
	}
	return got
}

func request(t *testing.T, typ byte, challenge *uint32) []byte {
	t.Helper()
	r := a2s.Request{Type: typ}
	if challenge != nil {
		r.Challenge, r.HasChallenge = *challenge, true
	}
	b, err := r.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRunFleet(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done chan error
	base := 0
	for try := 0; ; try++ {
		base = 10000 + rand.IntN(22000) // below the ephemeral ports
		logs := make(chan string, 4)
		done = make(chan error, 1)
		go func() {
			done <- RunFleet(ctx, FleetConfig{N: 5, BasePort: base, Challenge: true}, func(format string, args ...any) {
				logs <- fmt.Sprintf(format, args...)
			})
		}()
		select {
		case l := <-logs:
			if !strings.Contains(l, fmt.Sprintf("127.0.0.1:%d-%d", base, base+4)) {
				t.Errorf("log %q does not name the ports", l)
			}
		case err := <-done:
			if try < 20 && strings.Contains(err.Error(), "in use") {
				continue
			}
			t.Fatalf("RunFleet: %v", err)
		}
		break
	}
	c := &a2s.Client{Timeout: 5 * time.Second}
	defer c.Close()
	qctx, qcancel := context.WithTimeout(ctx, 30*time.Second)
	defer qcancel()
	for i := range 5 {
		addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(base+i))
		want := FleetContent(i)
		info, err := c.Info(qctx, addr)
		if err != nil {
			t.Fatalf("server %d info: %v", i, err)
		}
		if string(info.Info.Name) != want.Name || int(info.Info.Players) != len(want.Players) || info.Info.Port != addr.Port() {
			t.Errorf("server %d: %+v", i, info.Info)
		}
		players, err := c.Players(qctx, addr)
		if err != nil || len(players.List) != len(want.Players) {
			t.Errorf("server %d players: %v, %+v", i, err, players)
		}
		rules, err := c.Rules(qctx, addr)
		if err != nil || len(rules.List) != len(want.Rules) {
			t.Fatalf("server %d rules: %v, %+v", i, err, rules)
		}
		if v, _ := rules.Get("sv_fleet_index"); string(v) != fmt.Sprint(i) {
			t.Errorf("server %d: sv_fleet_index %q", i, v)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("RunFleet returned %v after cancel", err)
	}
}

func TestFleetChallengeAndSplit(t *testing.T) {
	t.Parallel()
	f := startTestFleet(t, FleetConfig{N: 2, Host: "127.0.0.1", Challenge: true})
	c := dial(t, f.Addr(1))
	got := ask(t, c, request(t, a2s.TypeRulesRequest, nil), 1)
	ch, err := a2s.ParseChallenge(got[0])
	if err != nil {
		t.Fatalf("a rules request without challenge: %v", err)
	}
	frags := ask(t, c, request(t, a2s.TypeRulesRequest, &ch), 3)
	var r a2s.Reassembler
	var payload []byte
	for _, b := range frags {
		fr, err := a2s.ParseFragment(b)
		if err != nil {
			t.Fatal(err)
		}
		if p, done, err := r.Add(fr); err != nil {
			t.Fatal(err)
		} else if done {
			payload = p
		}
	}
	rules, err := a2s.ParseRules(payload)
	if err != nil || len(rules.List) != len(FleetContent(1).Rules) {
		t.Fatalf("rules in a 3-fragment split: %v, %+v", err, rules)
	}
	// A wrong challenge earns a new challenge, not the reply.
	bad := ch + 1
	if got := ask(t, c, request(t, a2s.TypeRulesRequest, &bad), 1); got[0][4] != a2s.TypeChallengeReply {
		t.Errorf("wrong challenge answered with %q", got[0])
	}
	got = ask(t, c, request(t, a2s.TypeInfoRequest, &ch), 1)
	if info, err := a2s.ParseInfo(got[0]); err != nil || string(info.Name) != FleetContent(1).Name {
		t.Errorf("info: %v, %+v", err, info)
	}
	if st := f.Stats(); st.Requests != 4 || st.Challenges != 2 || st.Sent != 6 {
		t.Errorf("stats %+v, want 4 requests, 2 challenges, 6 datagrams sent", st)
	}
}

// TestFleetFaultsFollowSeed: a fleet server drops and duplicates exactly
// the replies its fault injector draws from the seed.
func TestFleetFaultsFollowSeed(t *testing.T) {
	t.Parallel()
	cfg := FleetConfig{N: 3, Loss: 0.3, Duplicate: 0.2, Seed: 42}
	f := startTestFleet(t, cfg)
	const server = 2
	fates := lossy.Foretell(cfg.faults(server), 80)
	for len(fates) > 40 && fates[len(fates)-1] == 0 {
		fates = fates[:len(fates)-1] // end on a reply, which comes after every drop
	}
	c := dial(t, f.Addr(server))
	req := request(t, a2s.TypeInfoRequest, nil)
	sent, dropped, doubled := len(fates), 0, 0
	for _, n := range fates {
		switch n {
		case 0:
			dropped++
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
			continue // nothing comes back
		case 2:
			doubled++
		}
		for _, b := range ask(t, c, req, n) {
			if _, err := a2s.ParseInfo(b); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The last reply came after every earlier request was handled.
	st := f.Stats()
	if st.Requests != int64(sent) || st.Dropped != int64(dropped) || st.Sent != int64(sent-dropped+doubled) {
		t.Errorf("stats %+v; want %d requests, %d dropped, %d sent", st, sent, dropped, sent-dropped+doubled)
	}
	if dropped == 0 || doubled == 0 {
		t.Errorf("%d dropped and %d doubled of %d: the test proves nothing", dropped, doubled, sent)
	}
}

func TestStartFleetRejects(t *testing.T) {
	t.Parallel()
	for _, cfg := range []FleetConfig{{N: 0}, {N: -1}, {N: 1, Loss: 1.5}, {N: 1, Reorder: -0.5}, {N: 10, BasePort: 65530}, {N: 1, Host: "nowhere"}} {
		if f, err := StartFleet(cfg); err == nil {
			f.Close()
			t.Errorf("StartFleet(%+v) accepted", cfg)
		}
	}
}

func TestFleetAnswersOGP(t *testing.T) {
	t.Parallel()
	// Each fleet server answers OGP v0.91 on its A2S socket, with its own
	// content, behind the challenge and through the fault injector.
	f := startTestFleet(t, FleetConfig{N: 3, Challenge: true})
	c := &ogp.Client{Timeout: 5 * time.Second}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all := ogp.QueryAll(ogp.V091)
	for i := range f.Len() {
		resp, err := c.Query(ctx, f.Addr(i), &all)
		if err != nil {
			t.Fatalf("server %d: %v", i, err)
		}
		want := FleetContent(i)
		a := resp.Answer
		if string(a.Info.HostName) != want.Name || string(a.Info.Map.Name) != want.Map || a.Info.ConnectPort != f.Addr(i).Port() {
			t.Errorf("server %d: info %+v, want %q on %s", i, a.Info, want.Name, want.Map)
		}
		if len(a.Players.Players) != len(want.Players) || len(a.Rules) != len(want.Rules) {
			t.Errorf("server %d: %d players and %d rules, want %d and %d", i, len(a.Players.Players), len(a.Rules), len(want.Players), len(want.Rules))
		}
	}
	if st := f.Stats(); st.Challenges != 0 {
		t.Errorf("%d A2S challenges counted for OGP traffic", st.Challenges)
	}
}
