//go:build browser

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/store"
)

// TestViewsBrowser runs web/browsertest/views.mjs in headless Chromium
// against the real gsq monitor on a simulated fleet with labels, a
// public status page, a token and a webhook: the status page opens
// without the token while /api/v1 does not; a label filter keeps its
// servers; a player is found by search and their page lists their
// servers; a server stopped by the test appears in the incidents; a
// maintenance window set through the API keeps the down alert of the
// server stopped inside it from the webhook (while the other's is
// sent); focus is visible and the views' text passes WCAG AA contrast in
// both themes. Screenshots go to web/browsertest/screenshots/.
//
//	go test -tags browser -count=1 -run ViewsBrowser ./cmd/gsq/
func TestViewsBrowser(t *testing.T) {
	const token = "views-test-token-0123456789"
	names := []string{"alpha", "bravo", "charlie", "delta"}
	regions := []string{"eu", "eu", "us", "us"}
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: len(names), Tick: 2 * time.Second,
		Names: []string{"EU #1 | dust2 24/7", "EU #2 | office", "US East | mirage", "US West | nuke"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()

	alerts := make(chan string, 64) // "KIND SERVER" of each alert
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a struct{ Kind, Server string }
		json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&a)
		select {
		case alerts <- a.Kind + " " + a.Server:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hookSrv.Close()

	dir := t.TempDir()
	db := filepath.Join(dir, "m.db")
	seedPlayer(t, db, names, fleet)
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "interval: 1s\ndown_after: 2s\ntoken: %s\nwebhooks: [%s]\nalerts: [down, up]\n", token, hookSrv.URL)
	cfg.WriteString("status_page:\n  title: Our servers\n  text: Nightly restarts at 04:00 UTC.\n  labels: {public: \"yes\"}\n")
	cfg.WriteString("servers:\n")
	for i, n := range names {
		fmt.Fprintf(&cfg, "  - {name: %s, address: '%s', labels: {region: %s, public: \"yes\"}}\n", n, fleet.Addr(i), regions[i])
	}
	cfgPath := filepath.Join(dir, "monitor.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startMonitor(t, "--config", cfgPath, "--db", db)
	defer p.stop(t, 15)

	// The script's hooks: stop a server.
	stop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i, n := range names {
			if n == r.URL.Query().Get("server") {
				fleet.Stop(i)
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer stop.Close()

	shots, err := filepath.Abs(filepath.Join("..", "..", "web", "browsertest", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	out := peertest.Playwright(t, 3*time.Minute, filepath.Join("..", "..", "web", "browsertest", "views.mjs"), []string{p.url[:len(p.url)-1], shots},
		"TOKEN="+token, "STOP_URL="+stop.URL, "PLAYER=Zelda_Regular")
	var res struct {
		Contrast []string
		Timings  map[string]int64
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("views.mjs printed %q: %v", out, err)
	}
	// The webhook: bravo's down alert (stopped outside maintenance), and
	// none for charlie (stopped inside a window the script set).
	got := map[string]bool{}
	deadline := time.After(10 * time.Second)
	for !got["down bravo"] {
		select {
		case a := <-alerts:
			got[a] = true
		case <-deadline:
			t.Fatalf("no down alert for bravo within 10 s; alerts %v", got)
		}
	}
	for {
		select {
		case a := <-alerts:
			got[a] = true
			continue
		default:
		}
		break
	}
	if got["down charlie"] {
		t.Errorf("charlie's down alert was sent inside its maintenance window; alerts %v", got)
	}
	t.Logf("alerts %v; timings (ms) %v; screenshots in %s", got, res.Timings, shots)
}

// seedPlayer writes, before the monitor starts, sessions of one player
// on two servers over the last days: the player the script searches
// for, with regulars' figures.
func seedPlayer(t *testing.T, db string, names []string, fleet *sim.LiveFleet) {
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var servers []store.Server
	for i, n := range names {
		servers = append(servers, store.Server{Name: n, Target: fleet.Addr(i).String(), Protocol: "a2s"})
	}
	if err := st.SyncServers(ctx, servers); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for d := 6; d >= 1; d-- {
		for i, server := range []string{"alpha", "delta"} {
			start := now.Add(-time.Duration(d)*24*time.Hour + time.Duration(i)*3*time.Hour)
			end := start.Add(time.Duration(40+d*10) * time.Minute)
			err := st.Write(ctx, []store.Sample{
				{Server: server, Time: start, Up: true, Players: 1, MaxPlayers: 16, Sessions: []store.SessionChange{{Player: "Zelda_Regular"}, {Player: "Link"}}},
				{Server: server, Time: end, Up: true, Players: 0, MaxPlayers: 16, Sessions: []store.SessionChange{{Player: "Zelda_Regular", Left: true}, {Player: "Link", Left: true}}},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}
