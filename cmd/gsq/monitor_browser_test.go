//go:build browser

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
)

// TestMonitorBrowser runs web/browsertest/monitor.mjs in headless
// Chromium against the real gsq monitor polling a simulated fleet: every
// server is listed, a chart has points from the history the monitor
// wrote, a server stopped by the test turns down on the page within the
// down threshold, and a hostile name renders as text. Screenshots go to
// web/browsertest/screenshots/ (git-ignored).
//
//	go test -tags browser -count=1 -run MonitorBrowser ./cmd/gsq/
func TestMonitorBrowser(t *testing.T) {
	const hostileName = `hostile<svg onload>` // no "=" nor "/": a --target name cannot hold them
	const hostileTitle = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
	names := []string{"alpha", "bravo", hostileName, "delta", "echo", "foxtrot"}
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: len(names), Tick: 2 * time.Second,
		Names: []string{"EU #1 | dust2 24/7", "EU #2 | office", hostileTitle, "US East | mirage", "US West | nuke", "Asia | inferno"}})
	if err != nil {
		t.Fatal(err)
	}
	defer fleet.Close()
	db := filepath.Join(t.TempDir(), "m.db")
	seedHistory(t, db, "alpha", fleet.Addr(0).String())
	args := []string{"--interval", "1s", "--down-after", "2s", "--db", db}
	for i, name := range names {
		args = append(args, "--target", fmt.Sprintf("%s=%s", name, fleet.Addr(i)))
	}
	p := startMonitor(t, args...)
	defer p.stop(t, 15)

	// The script's hook: bravo stops answering.
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fleet.Stop(1) }))
	defer hook.Close()
	// Down takes 3 failed polls 1 s apart spanning 2 s: at most about 3.2 s
	// after the first failed poll, which comes within an interval (1.05 s)
	// of the stop; the live stream adds little.
	const downWithin = 5 * time.Second

	shots, err := filepath.Abs(filepath.Join("..", "..", "web", "browsertest", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	namesJSON, _ := json.Marshal(names)
	out := peertest.Playwright(t, 2*time.Minute, filepath.Join("..", "..", "web", "browsertest", "monitor.mjs"), []string{p.url[:len(p.url)-1], shots},
		"NAMES="+string(namesJSON), "HOSTILE_TITLE="+hostileTitle, "STOP_URL="+hook.URL, "STOP_NAME=bravo",
		fmt.Sprintf("DOWN_WITHIN_MS=%d", downWithin.Milliseconds()))
	var res struct {
		Names       []string
		ChartPoints int `json:"chart_points"`
		Timings     map[string]int64
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("monitor.mjs printed %q: %v", out, err)
	}
	slices.Sort(res.Names)
	want := slices.Clone(names)
	slices.Sort(want)
	if !slices.Equal(res.Names, want) {
		t.Errorf("the list showed %q, want %q", res.Names, want)
	}
	if res.ChartPoints < 1 {
		t.Errorf("delta's chart has %d points", res.ChartPoints)
	}
	t.Logf("chart %d points; timings (ms) %v; screenshots in %s", res.ChartPoints, res.Timings, shots)
}

// seedHistory writes an hour of history for one server before the
// monitor starts, through the store as the monitor writes it, so that the
// screenshot of its page shows a chart with a past: players drifting
// around a wave, an outage, sessions coming and going.
func seedHistory(t *testing.T, db, name, target string) {
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.SyncServers(ctx, []store.Server{{Name: name, Target: target, Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	pool := []string{"Alice", "Bob", "Carol", "Dave", "Erin", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Oscar"}
	now := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	var samples []store.Sample
	var online []string // the players of the last list
	n := 4
	for at := now.Add(-time.Hour); at.Before(now.Add(-10 * time.Second)); at = at.Add(10 * time.Second) {
		x := now.Sub(at).Minutes()
		// A random walk drifting after an evening's wave.
		target := 8 + 6*math.Sin(x/11)
		switch d := rng.Float64()*4 - 2 + (target-float64(n))/3; {
		case d > 1 && n < 16:
			n++
		case d < -1 && n > 0:
			n--
		}
		smp := store.Sample{Server: name, Time: at, Up: !(x > 38 && x < 41), Players: n, MaxPlayers: 16, Bots: 0, Map: "de_dust2", Ping: time.Millisecond}
		var names []string
		if smp.Up {
			for j := range n {
				names = append(names, pool[(j+int(x/7))%len(pool)])
				smp.PlayerList = append(smp.PlayerList, store.PlayerSeen{Name: names[j], Score: int64(j * 3)})
			}
		}
		joined, left := testutil.Diff(online, names)
		for _, p := range left {
			smp.Sessions = append(smp.Sessions, store.SessionChange{Player: p, Left: true})
		}
		for _, p := range joined {
			smp.Sessions = append(smp.Sessions, store.SessionChange{Player: p})
		}
		online = names
		samples = append(samples, smp)
	}
	if err := st.Write(ctx, samples); err != nil {
		t.Fatal(err)
	}
}
