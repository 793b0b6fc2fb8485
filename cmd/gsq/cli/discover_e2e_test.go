package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/master"
	"github.com/gsq-project/gsq/serverlist"
	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// pipeline runs `gsq DISCOVER... | gsq scan SCAN...` in-process, the
// first's stdout piped into the second's stdin, and returns both exit
// codes, scan's stdout and both stderrs.
func pipeline(t *testing.T, environ map[string]string, discover, scanArgs []string) (dcode, scode int, stdout, derr, serr string) {
	t.Helper()
	ctx := testutil.Context(t)
	pr, pw := io.Pipe()
	var dErr, sOut, sErr strings.Builder
	denv := testEnv(nil, environ)
	denv.Stdout, denv.Stderr = pw, &dErr
	senv := testEnv(pr, nil)
	senv.Stdout, senv.Stderr = &sOut, &sErr
	done := make(chan int, 1)
	go func() {
		code := denv.Run(ctx, append([]string{"discover"}, discover...))
		pw.Close()
		done <- code
	}()
	scode = senv.Run(ctx, append([]string{"scan"}, scanArgs...))
	pr.Close() // a scan that stopped early must not leave discover blocked
	dcode = <-done
	return dcode, scode, sOut.String(), dErr.String(), sErr.String()
}

// checkFleetScanned checks that scan's output holds one answered line for
// each of the fleet's n servers.
func checkFleetScanned(t *testing.T, stdout string, n int, addr func(int) netip.AddrPort) {
	t.Helper()
	lines := scanLines(t, stdout)
	if len(lines) != n {
		t.Errorf("scan wrote %d lines, want %d", len(lines), n)
	}
	missing := 0
	for i := range n {
		o, ok := lines[addr(i).String()]
		if !ok || o["error"] != nil || o["info"] == nil {
			missing++
		}
	}
	if missing > 0 {
		t.Errorf("%d of the %d servers were not found and answered", missing, n)
	}
}

// startListMaster runs a gsq master server on loopback that lists list,
// without a budget per source, until the test ends; it returns its
// address.
func startListMaster(t *testing.T, list *serverlist.Fleet) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ms := &master.Server{Handler: master.FleetHandler(list), RateLimit: -1}
	go ms.Serve(pc)
	t.Cleanup(func() { ms.Shutdown(context.Background()) })
	return pc.LocalAddr().String()
}

// TestDiscoverScanFleet is discover → scan end to end on loopback: 3,000
// simulated servers, listed by a gsq master server and by the fake Steam
// Web API, found and queried through a pipe.
func TestDiscoverScanFleet(t *testing.T) {
	const n = 3000
	f := startScanFleet(t, n)
	list := fleetList(n, f.Addr)

	masterAddr := startListMaster(t, list)

	t.Run("master", func(t *testing.T) {
		dcode, scode, stdout, derr, serr := pipeline(t, nil,
			[]string{"--master", masterAddr, "--game", "css"}, []string{"--info"})
		if dcode != ExitOK || scode != ExitOK {
			t.Fatalf("discover exit %d: %s\nscan exit %d: %s", dcode, derr, scode, serr)
		}
		checkFleetScanned(t, stdout, n, f.Addr)
		if !strings.Contains(derr, fmt.Sprintf("listed %d servers", n)) || !strings.Contains(serr, fmt.Sprintf("%d answered", n)) {
			t.Errorf("summaries:\n%s%s", derr, serr)
		}
	})

	t.Run("steamapi", func(t *testing.T) {
		srv := steamapitest.NewServer(steamapitest.Profile{}, list, testSteamKey)
		defer srv.Close()
		dcode, scode, stdout, derr, serr := pipeline(t, map[string]string{"STEAM_API_KEY": testSteamKey},
			[]string{"--api-url", srv.URL(), "--appid", "240"}, []string{"--game", "css", "--info"})
		if dcode != ExitOK || scode != ExitOK {
			t.Fatalf("discover exit %d: %s\nscan exit %d: %s", dcode, derr, scode, serr)
		}
		checkFleetScanned(t, stdout, n, f.Addr)
	})

	// A filter the list evaluates: the servers on one map, an eighth of
	// the fleet, each checked by its own answer.
	t.Run("filter", func(t *testing.T) {
		dcode, scode, stdout, derr, serr := pipeline(t, nil,
			[]string{"--master", masterAddr, "--filter", `\map\de_nuke`}, []string{"--info"})
		if dcode != ExitOK || scode != ExitOK {
			t.Fatalf("discover exit %d: %s\nscan exit %d: %s", dcode, derr, scode, serr)
		}
		lines := scanLines(t, stdout)
		if len(lines) != n/8 {
			t.Errorf("%d servers on de_nuke, want %d", len(lines), n/8)
		}
		for a, o := range lines {
			if m := o["info"].(map[string]any)["map"]; m != "de_nuke" {
				t.Errorf("%s answers map %v", a, m)
			}
		}
	})
}

// TestServeFleetMaster runs gsq serve --fleet N --master, and lists the
// fleet with gsq discover.
func TestServeFleetMaster(t *testing.T) {
	ctx, cancel := context.WithCancel(testutil.Context(t))
	stderr := newWatchedBuffer("master: lists")
	env := testEnv(nil, nil)
	env.Stderr = stderr
	done := make(chan int, 1)
	go func() {
		done <- env.Run(ctx, []string{"serve", "--fleet", "20", "--base-port", "24960", "--master", "127.0.0.1:0"})
	}()
	select {
	case <-stderr.seen:
	case code := <-done:
		t.Fatalf("gsq serve ended with %d: %s", code, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("no master after 10s: %s", stderr.String())
	}
	defer func() {
		cancel()
		if code := <-done; code != ExitOK && code != ExitInterrupted {
			t.Errorf("gsq serve exit %d", code)
		}
	}()
	m := regexp.MustCompile(`on udp (127\.0\.0\.1:\d+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no master address in %s", stderr.String())
	}
	code, stdout, derr := runGSQ(t, nil, nil, nil, "discover", "--master", m[1], "--json")
	if code != ExitOK || strings.Count(stdout, "\n") != 20 || !strings.Contains(stdout, `"addr":"127.0.0.1:24960"`) || !strings.Contains(stdout, `"addr":"127.0.0.1:24979"`) {
		t.Errorf("discover: exit %d\n%s%s", code, stdout, derr)
	}
	if code, _, stderr := runGSQ(t, nil, nil, nil, "serve", "--master", "127.0.0.1:0"); code != ExitUsage || !strings.Contains(stderr, "--fleet") {
		t.Errorf("--master without --fleet: exit %d, %s", code, stderr)
	}
}
