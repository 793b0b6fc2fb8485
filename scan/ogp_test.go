package scan

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func TestScanOGP(t *testing.T) {
	t.Parallel()
	var list strings.Builder
	want := map[string]Status{}
	for _, name := range []string{"v0.91", "split-out-of-order", "challenge-churn", "banned"} {
		p, err := ogptest.LookupProfile(name)
		if err != nil {
			t.Fatal(err)
		}
		for range 3 {
			srv := ogptest.NewServer(p)
			t.Cleanup(srv.Close)
			fmt.Fprintln(&list, srv.Addr())
			want[srv.Addr().String()] = StatusAnswered
			if p.Banned {
				want[srv.Addr().String()] = StatusFailed
			}
		}
	}
	silent, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	fmt.Fprintln(&list, silent.LocalAddr())
	want[silent.LocalAddr().String()] = StatusTimedOut
	list.WriteString("127.0.0.1\n") // OGP has no default port

	s := &Scanner{Query: ogpQuery(ogp.V091), Timeout: 300 * time.Millisecond, Retries: 1}
	got, sum := collect(t, s, strings.NewReader(list.String()))
	if sum.Targets != len(want)+1 || sum.Failed != 4 || sum.TimedOut != 1 {
		t.Errorf("summary %+v", sum)
	}
	for addr, st := range want {
		var r *Outcome
		for a, res := range got {
			if a.String() == addr {
				r = res
			}
		}
		if r == nil {
			t.Fatalf("no result for %s", addr)
		}
		if r.Status != st || ogpOf(r) == nil {
			t.Errorf("%s: status %v, want %v (%+v)", addr, r.Status, st, ogpOf(r))
			continue
		}
		if st == StatusAnswered && (ogpOf(r).Answer == nil || len(ogpOf(r).Answer.Players.Players) == 0) {
			t.Errorf("%s: answer %+v", addr, ogpOf(r).Answer)
		}
	}
}

func TestScanOGPFleet(t *testing.T) {
	t.Parallel()
	// A fleet answers OGP on its A2S ports: every server comes back with
	// its own content, all of them queried at once.
	f := startFleet(t, sim.FleetConfig{N: 300, Challenge: true})
	// Patient: under the race detector on a busy machine, an answer may
	// take seconds.
	s := &Scanner{Query: ogpQuery(ogp.V091), Concurrency: 300, Timeout: 5 * time.Second, MinTimeout: 5 * time.Second, Deadline: -1}
	got, sum := collect(t, s, strings.NewReader(fleetTargets(f)))
	if sum.Answered != f.Len() {
		t.Errorf("summary %+v, want all %d answered", sum, f.Len())
	}
	for i := range f.Len() {
		r := got[f.Addr(i)]
		if r == nil || ogpOf(r) == nil || ogpOf(r).Answer == nil {
			t.Fatalf("server %d: %+v", i, r)
		}
		want := sim.FleetContent(i)
		if a := ogpOf(r).Answer; string(a.Info.HostName) != want.Name || len(a.Rules) != len(want.Rules) {
			t.Errorf("server %d: %q with %d rules, want %q with %d", i, a.Info.HostName, len(a.Rules), want.Name, len(want.Rules))
		}
	}
}

func TestScanOGPCounts(t *testing.T) {
	t.Parallel()
	// The summary counts the datagrams OGP queries sent, resends included.
	list := silentTargets(t, 2)
	s := &Scanner{Query: ogpQuery(ogp.V091), Timeout: 20 * time.Millisecond, Retries: 2}
	_, sum := collect(t, s, strings.NewReader(list))
	if sum.TimedOut != 2 || sum.Sent != 6 || sum.Resent != 4 {
		t.Errorf("summary %+v, want 2 timed out, 6 sent, 4 resent", sum)
	}
}
