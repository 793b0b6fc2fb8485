package scan

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogptest"
)

func TestScanOGP(t *testing.T) {
	var list strings.Builder
	want := map[string]Status{}
	for _, name := range []string{"v0.91", "split-out-of-order", "challenge-churn", "banned"} {
		p, ok := ogptest.ProfileByName(name)
		if !ok {
			t.Fatalf("no profile %q", name)
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

	s := &Scanner{Protocol: OGP{Dialect: ogp.V091}, Timeout: 300 * time.Millisecond, Retries: 1}
	got, sum := collect(t, s, strings.NewReader(list.String()))
	if sum.Targets != len(want)+1 || sum.Failed != 4 || sum.TimedOut != 1 {
		t.Errorf("summary %+v", sum)
	}
	for addr, st := range want {
		var r *Result
		for a, res := range got {
			if a.String() == addr {
				r = res
			}
		}
		if r == nil {
			t.Fatalf("no result for %s", addr)
		}
		if r.Status != st || r.OGP == nil {
			t.Errorf("%s: status %v, want %v (%+v)", addr, r.Status, st, r.OGP)
			continue
		}
		if st == StatusAnswered && (r.OGP.Answer == nil || len(r.OGP.Answer.Players.Players) == 0) {
			t.Errorf("%s: answer %+v", addr, r.OGP.Answer)
		}
	}
}
