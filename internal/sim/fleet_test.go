package sim

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
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

func TestRunFleet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var done chan error
	base := 0
	for try := 0; ; try++ {
		base = 10000 + (int(time.Now().UnixNano()/1000)+try*7919)%22000 // below the ephemeral ports
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
		case <-time.After(10 * time.Second):
			t.Fatal("fleet did not start")
		}
		break
	}
	c := &a2s.Client{Timeout: time.Second}
	defer c.Close()
	qctx, qcancel := context.WithTimeout(ctx, 10*time.Second)
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
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RunFleet returned %v after cancel", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("RunFleet did not return after cancel")
	}
}

// exchange sends req to addr and returns the datagrams received until
// the line is quiet for quiet.
func exchange(t *testing.T, c *net.UDPConn, addr netip.AddrPort, req []byte, quiet time.Duration) [][]byte {
	t.Helper()
	if _, err := c.WriteToUDPAddrPort(req, addr); err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	buf := make([]byte, 65536)
	for {
		c.SetReadDeadline(time.Now().Add(quiet))
		n, _, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return got
		}
		got = append(got, append([]byte(nil), buf[:n]...))
	}
}

func TestFleetChallengeAndSplit(t *testing.T) {
	f := startTestFleet(t, FleetConfig{N: 2, Host: "127.0.0.1", Challenge: true})
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ask, _ := a2s.Request{Type: a2s.TypeRulesRequest}.AppendBinary(nil)
	got := exchange(t, c, f.Addr(1), ask, 300*time.Millisecond)
	if len(got) != 1 {
		t.Fatalf("%d datagrams for a rules request without challenge, want one challenge", len(got))
	}
	ch, err := a2s.ParseChallenge(got[0])
	if err != nil {
		t.Fatal(err)
	}
	req, _ := a2s.Request{Type: a2s.TypeRulesRequest, Challenge: ch, HasChallenge: true}.AppendBinary(nil)
	frags := exchange(t, c, f.Addr(1), req, 300*time.Millisecond)
	if len(frags) != 3 {
		t.Fatalf("rules reply in %d datagrams, want a 3-fragment split", len(frags))
	}
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
		t.Fatalf("rules %v, %+v", err, rules)
	}
	// A wrong challenge earns a new challenge, not the reply.
	bad, _ := a2s.Request{Type: a2s.TypeRulesRequest, Challenge: ch + 1, HasChallenge: true}.AppendBinary(nil)
	if got := exchange(t, c, f.Addr(1), bad, 300*time.Millisecond); len(got) != 1 || got[0][4] != a2s.TypeChallengeReply {
		t.Errorf("wrong challenge answered with %d datagrams", len(got))
	}
}

// dropsAfter sends n INFO requests to server 0 of a fresh fleet and
// returns how many replies the fault injector dropped.
func dropsAfter(t *testing.T, seed int64, n int) int64 {
	t.Helper()
	f := startTestFleet(t, FleetConfig{N: 1, Host: "127.0.0.1", Loss: 0.3, Duplicate: 0.1, Seed: seed})
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req, _ := a2s.Request{Type: a2s.TypeInfoRequest}.AppendBinary(nil)
	for range n {
		// One at a time, so the server's socket never overflows.
		exchange(t, c, f.Addr(0), req, 20*time.Millisecond)
	}
	s := f.Stats()
	if s.Requests != int64(n) {
		t.Fatalf("fleet saw %d of %d requests", s.Requests, n)
	}
	return s.Dropped
}

func TestFleetFaultsFollowSeed(t *testing.T) {
	const n = 60
	a, b := dropsAfter(t, 42, n), dropsAfter(t, 42, n)
	if a != b {
		t.Errorf("same seed dropped %d then %d replies", a, b)
	}
	if a == 0 || a == n {
		t.Errorf("loss 0.3 dropped %d of %d replies", a, n)
	}
}

func TestStartFleetRejects(t *testing.T) {
	for _, cfg := range []FleetConfig{{N: 0}, {N: 1, Loss: 1.5}, {N: 10, BasePort: 65530}, {N: 1, Host: "nowhere"}} {
		if f, err := StartFleet(cfg); err == nil {
			f.Close()
			t.Errorf("StartFleet(%+v) accepted", cfg)
		}
	}
}

func TestFleetAnswersOGP(t *testing.T) {
	// Each fleet server answers OGP v0.91 on its A2S socket, with its own
	// content, behind the challenge and through the fault injector.
	f := startTestFleet(t, FleetConfig{N: 3, Challenge: true})
	c := &ogp.Client{Timeout: time.Second}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
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
