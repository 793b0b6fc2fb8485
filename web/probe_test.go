package web

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"testing"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
)

// a2sProbe queries target over A2S as the monitor's probe would, with
// the library's client, honouring ctx's deadline.
func a2sProbe(t *testing.T) (func(ctx context.Context, target, protocol string) (monitor.ServerState, error), chan time.Duration) {
	client := &a2s.Client{Timeout: 300 * time.Millisecond, Retries: -1}
	t.Cleanup(func() { client.Close() })
	budgets := make(chan time.Duration, 10) // the time each probe was given
	return func(ctx context.Context, target, protocol string) (monitor.ServerState, error) {
		if dl, ok := ctx.Deadline(); ok {
			budgets <- time.Until(dl)
		}
		s := monitor.ServerState{Target: target, Protocol: protocol, Status: monitor.StatusDown}
		addr, err := netip.ParseAddrPort(target)
		if err != nil {
			return s, err
		}
		// Retry until the context ends, as the monitor's probe would.
		for {
			start := time.Now()
			res, err := client.Info(ctx, addr)
			s.QueryDuration = time.Since(start)
			if err == nil {
				info := res.Info
				s.Status = monitor.StatusUp
				s.Ping = res.RTT
				s.Summary = result.Summary{
					Name: ptr(info.Name.UTF8()), Map: ptr(info.Map.UTF8()), Game: ptr(info.Game.UTF8()),
					Players: ptr(int(info.Players)), MaxPlayers: ptr(int(info.MaxPlayers)), Bots: ptr(int(info.Bots)),
				}
				return s, nil
			}
			if ctx.Err() != nil {
				s.LastError = &result.Error{Kind: result.KindTimeout, Message: err.Error()}
				return s, err
			}
		}
	}, budgets
}

func probeURL(base, target, protocol string) string {
	v := url.Values{"target": {target}}
	if protocol != "" {
		v.Set("protocol", protocol)
	}
	return base + "/probe?" + v.Encode()
}

func TestProbeSuccess(t *testing.T) {
	t.Parallel()
	fake := a2stest.NewServer(a2stest.Profiles()[0])
	t.Cleanup(fake.Close)
	live := newTestLive()
	live.probeFn, _ = a2sProbe(t)
	srv, _ := newTestServer(t, newTestStore(t), live, Options{ProbeTimeout: 5 * time.Second})

	fams := scrape(t, probeURL(srv.URL, fake.Addr().String(), "a2s"), "")
	mustSample(t, fams, "probe_success", nil, 1)
	want := a2stest.DefaultInfo()
	mustSample(t, fams, "gameserver_up", nil, 1)
	mustSample(t, fams, "gameserver_players", nil, float64(want.Players))
	mustSample(t, fams, "gameserver_players_max", nil, float64(want.MaxPlayers))
	mustSample(t, fams, "gameserver_info", map[string]string{"map": want.Map.UTF8(), "name": want.Name.UTF8()}, 1)
	if d, ok := sample(fams, "probe_duration_seconds", nil); !ok || d <= 0 {
		t.Errorf("probe_duration_seconds = %v, %v", d, ok)
	}
	// A fresh registry per request: the monitor's series are not there.
	if _, ok := fams["gameserver_queries_total"]; ok {
		t.Error("the probe exposes the monitor's counters")
	}
	if fake.Received() == 0 {
		t.Error("the fake server got no query")
	}
}

func TestProbeFailure(t *testing.T) {
	t.Parallel()
	// A closed UDP port: bind one, remember it, close it.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := pc.LocalAddr().String()
	pc.Close()
	live := newTestLive()
	live.probeFn, _ = a2sProbe(t)
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})

	req, _ := http.NewRequest(http.MethodGet, probeURL(srv.URL, closed, ""), nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "1")
	status, _, body := testutil.Do(t, req)
	if status != http.StatusOK {
		t.Fatalf("status %d, want 200: %s", status, body)
	}
	fams := parseExposition(t, body)
	mustSample(t, fams, "probe_success", nil, 0)
	mustSample(t, fams, "gameserver_up", nil, 0)
	noSample(t, fams, "gameserver_players", nil)
}

// TestProbeTimeout checks that a probe of a silent server is given the
// scrape's timeout less the margin, and that the answer does not wait
// for a probe that ignores its deadline.
func TestProbeTimeout(t *testing.T) {
	t.Parallel()
	silent, err := net.ListenPacket("udp", "127.0.0.1:0") // reads nothing, answers nothing
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })

	live := newTestLive()
	var budgets chan time.Duration
	live.probeFn, budgets = a2sProbe(t)
	srv, _ := newTestServer(t, newTestStore(t), live, Options{ProbeTimeout: 800 * time.Millisecond})
	req, _ := http.NewRequest(http.MethodGet, probeURL(srv.URL, silent.LocalAddr().String(), "a2s"), nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "1")
	status, _, body := testutil.Do(t, req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if got := <-budgets; got > 500*time.Millisecond || got < 250*time.Millisecond {
		t.Errorf("a 1 s scrape gave the probe %v, want 0.5 s", got)
	}

	// Without the header: Options.ProbeTimeout.
	status, _, _ = testutil.Get(t, probeURL(srv.URL, "127.0.0.1:1", "ogp"), "")
	if status != http.StatusOK {
		t.Fatalf("status %d", status)
	}
	if got := <-budgets; got > 800*time.Millisecond || got < 500*time.Millisecond {
		t.Errorf("no header gave the probe %v, want 0.8 s", got)
	}

	// A probe that ignores its context: the answer still comes when the
	// deadline passes.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	stuck := newTestLive()
	stuck.probeFn = func(ctx context.Context, _, _ string) (monitor.ServerState, error) {
		<-release
		return monitor.ServerState{}, errors.New("late")
	}
	srv2, _ := newTestServer(t, newTestStore(t), stuck, Options{})
	req, _ = http.NewRequest(http.MethodGet, probeURL(srv2.URL, "127.0.0.1:27015", "a2s"), nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "0.3")
	status, _, body = testutil.Do(t, req)
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	mustSample(t, parseExposition(t, body), "probe_success", nil, 0)
}

func TestProbeBadParameters(t *testing.T) {
	t.Parallel()
	live := newTestLive()
	srv, _ := newTestServer(t, newTestStore(t), live, Options{})
	for _, q := range []string{
		"",
		"target=",
		"target=127.0.0.1",
		"target=127.0.0.1:0",
		"target=127.0.0.1:70000",
		"target=:27015",
		"target=127.0.0.1:27015&protocol=quake3",
	} {
		status, _, body := testutil.Get(t, srv.URL+"/probe?"+q, "")
		if status != http.StatusBadRequest {
			t.Errorf("/probe?%s: %d %q, want 400", q, status, body)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, probeURL(srv.URL, "127.0.0.1:27015", "a2s"), nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "soon")
	if status, _, _ := testutil.Do(t, req); status != http.StatusBadRequest {
		t.Errorf("bad timeout header: %d, want 400", status)
	}
	if n := live.probes.Load(); n != 0 {
		t.Errorf("bad requests probed %d times", n)
	}
}

func TestProbeTimeoutFromHeader(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		header string
		want   time.Duration
	}{
		{"", 5 * time.Second},
		{"10", 9500 * time.Millisecond},
		{"0.6", 300 * time.Millisecond},
		{"1e9", maxProbeTimeout - probeMargin},
	} {
		got, err := probeTimeout(c.header, 5*time.Second)
		if err != nil || got != c.want {
			t.Errorf("probeTimeout(%q) = %v, %v; want %v", c.header, got, err, c.want)
		}
	}
	for _, bad := range []string{"0", "-1", "NaN", "x"} {
		if _, err := probeTimeout(bad, time.Second); err == nil {
			t.Errorf("probeTimeout(%q): no error", bad)
		}
	}
}
