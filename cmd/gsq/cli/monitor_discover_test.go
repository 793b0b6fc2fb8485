package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/steamapi/steamapitest"
)

// monitorServers asks the monitor's API for its servers: name → status.
func monitorServers(t *testing.T, base string) map[string]string {
	t.Helper()
	resp, err := http.Get(base + "api/v1/servers")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Servers []struct{ Name, Status string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range body.Servers {
		out[s.Name] = s.Status
	}
	return out
}

// waitServers polls the monitor until ok holds of its servers, for 20 s
// at most.
func waitServers(t *testing.T, base, what string, ok func(map[string]string) bool) map[string]string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := monitorServers(t, base)
		if ok(got) {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20s, %s: not so; the monitor has %d servers: %v", what, len(got), got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startMonitor runs gsq monitor with the config text in the background,
// and returns its page's base URL and its stderr.
func startMonitor(t *testing.T, environ map[string]string, config string) (string, *watchedBuffer) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "monitor.yaml")
	testutil.WriteFile(t, path, config)
	ctx, cancel := context.WithCancel(testutil.Context(t))
	stdout, stderr := newWatchedBuffer("the page is at"), newWatchedBuffer("\x00")
	env := testEnv(nil, environ)
	env.Stdout, env.Stderr = stdout, stderr
	done := make(chan int, 1)
	go func() {
		done <- env.Run(ctx, []string{"monitor", "--config", path, "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "m.db")})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-stdout.seen:
	case code := <-done:
		t.Fatalf("gsq monitor ended with %d: %s", code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("gsq monitor did not start: %s", stderr.String())
	}
	m := regexp.MustCompile(`http://[0-9.:]+/`).FindString(stdout.String())
	return m, stderr
}

// TestMonitorDiscovery: a monitor whose config discovers a fleet through a
// master picks up its servers, polls them, and retires the ones removed
// from the list after retire_after listings; the Web API does the same.
func TestMonitorDiscovery(t *testing.T) {
	const n = 30
	f := startScanFleet(t, n)
	list := fleetList(n, f.Addr)
	masterAddr := startListMaster(t, list)

	base, stderr := startMonitor(t, nil, fmt.Sprintf(`interval: 1s
discover:
  - name: fleet
    master: %s
    game: css
    every: 1s
    retire_after: 2
    max_servers: 25
`, masterAddr))
	// max_servers bounds what is taken: 25 of the 30.
	waitServers(t, base, "25 discovered servers up", func(s map[string]string) bool {
		up := 0
		for _, st := range s {
			if st == "up" {
				up++
			}
		}
		return len(s) == 25 && up == 25
	})
	// The list loses its first 10 servers: they are retired; the roster
	// has room again, and takes the 5 it had left out.
	servers := list.Servers()
	list.Set(servers[10:])
	got := waitServers(t, base, "the 20 servers left", func(s map[string]string) bool { return len(s) == 20 })
	for _, s := range servers[:10] {
		if _, ok := got["fleet@"+s.Addr.String()]; ok {
			t.Errorf("%s is still monitored", s.Addr)
		}
	}
	// A discovered server's name (NAME@HOST:PORT) works in the page's URLs.
	name := "fleet@" + servers[20].Addr.String()
	for _, path := range []string{"api/v1/servers/" + url.PathEscape(name), "s/" + url.PathEscape(name), "badge/" + url.PathEscape(name) + ".svg"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET /%s: %s", path, resp.Status)
		}
	}
	if !regexp.MustCompile(`discover fleet: \d+ servers listed, 0 added, 10 retired`).MatchString(stderr.String()) {
		t.Errorf("the log does not say 10 were retired:\n%s", stderr.String())
	}
}

func TestMonitorDiscoveryWebAPI(t *testing.T) {
	const n = 12
	f := startScanFleet(t, n)
	list := fleetList(n, f.Addr)
	srv := steamapitest.NewServer(steamapitest.Profile{}, list, testSteamKey)
	defer srv.Close()
	config := fmt.Sprintf("discover:\n  - {name: api, appid: 240, api_url: %q, every: 2s}\n", srv.URL())

	// No key: a usage error before anything starts.
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "m.yaml"), config)
	code, _, stderr := runGSQ(t, nil, nil, nil, "monitor", "--config", filepath.Join(dir, "m.yaml"), "--listen", "127.0.0.1:0", "--db", filepath.Join(dir, "m.db"))
	if code != ExitUsage || !regexp.MustCompile(`discover api .*no Steam Web API key: set STEAM_API_KEY`).MatchString(stderr) {
		t.Errorf("no key: exit %d, %s", code, stderr)
	}

	base, log := startMonitor(t, map[string]string{"STEAM_API_KEY": testSteamKey}, config)
	waitServers(t, base, "12 servers", func(s map[string]string) bool { return len(s) == n })
	if regexp.MustCompile(testSteamKey).MatchString(log.String()) {
		t.Error("the key is in the log")
	}
}

// TestMonitorDiscoveryFleet is the end to end at full size: 3,000
// simulated servers listed by the fake Steam Web API are picked up by a
// monitor and answer its polls; a thousand removed from the list are
// retired.
func TestMonitorDiscoveryFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("3,000 servers")
	}
	// 3,000 servers; 300 under the race detector, which slows the
	// fleet, the monitor and the test on two cores tenfold (3,000 did not
	// come up within the test's bound there).
	n := 3000
	if testutil.Race {
		n = 300
	}
	f := startScanFleet(t, n)
	list := fleetList(n, f.Addr)
	srv := steamapitest.NewServer(steamapitest.Profile{}, list, testSteamKey)
	defer srv.Close()
	base, _ := startMonitor(t, map[string]string{"STEAM_API_KEY": testSteamKey}, fmt.Sprintf(`interval: 5s
discover:
  - {name: api, game: css, api_url: %q, every: 1s, retire_after: 2, max_servers: 5000}
`, srv.URL()))
	waitServers(t, base, "every server up", func(s map[string]string) bool {
		up := 0
		for _, st := range s {
			if st == "up" {
				up++
			}
		}
		return len(s) == n && up == n
	})
	servers := list.Servers()
	list.Set(servers[n/3:])
	got := waitServers(t, base, "two thirds left", func(s map[string]string) bool { return len(s) == n-n/3 })
	for _, s := range servers[n/3:] {
		if got["api@"+s.Addr.String()] == "" {
			t.Fatalf("%s, still listed, is not monitored", s.Addr)
		}
	}
}
