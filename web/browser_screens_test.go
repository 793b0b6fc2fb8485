//go:build browser

package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// TestBrowserScreens takes the README's screenshots of each view, at
// desktop and phone widths, in both themes, into GSQ_SCREENS (default
// web/browsertest/screenshots/docs, git-ignored):
//
//	GSQ_SCREENS=$PWD/docs/screens go test -tags browser -count=1 -run BrowserScreens ./web/
func TestBrowserScreens(t *testing.T) {
	dir := os.Getenv("GSQ_SCREENS")
	if dir == "" {
		dir = filepath.Join("browsertest", "screenshots", "docs")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	live, st := browserFixture(t, 1000, now)
	// Nine more Counter-Strike 2 servers with a month of history, busier
	// or quieter than alpha from day to day: a rank that moves.
	var samples []store.Sample
	for i := 8; i < 44; i += 4 { // srv-00004 is the -f server, named by its address (browserFixture)
		s, _ := live.Server(fmt.Sprintf("srv-%05d", i))
		for at := now.Add(-30 * 24 * time.Hour); at.Before(now); at = at.Add(time.Hour) {
			day := float64(at.Sub(now.Add(-30*24*time.Hour)) / (24 * time.Hour))
			players := int(10.6 + float64(i-20)/4*math.Sin(day/4+float64(i)))
			samples = append(samples, store.Sample{Server: s.Name, Time: at, Up: true, Players: max(0, players), MaxPlayers: 32, Bots: -1})
		}
	}
	if err := st.Write(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	// The last polls and a day of hourly history of every server: a
	// server down failed its last polls, and was down the last hours.
	samples = samples[:0]
	for i, s := range live.Servers() {
		recent := []byte("111111111111111111111111111111")
		if i%9 == 4 {
			recent[20] = '0'
		}
		if s.Status == monitor.StatusDown {
			copy(recent[24:], "000000")
		}
		s.RecentPolls = string(recent)
		live.set(s)
		if s.Name == "alpha" || s.Name == "charlie" {
			continue
		}
		slots := 32
		if s.Summary.MaxPlayers != nil {
			slots = *s.Summary.MaxPlayers
		}
		for h := 24; h >= 1; h-- {
			at := now.Truncate(time.Hour).Add(-time.Duration(h) * time.Hour)
			day := 0.5 - 0.5*math.Cos((float64(at.Hour())-4+float64(i%7))/24*2*math.Pi)
			up := !(s.Status == monitor.StatusDown && h <= 3)
			samples = append(samples, store.Sample{Server: s.Name, Time: at.Add(time.Duration(i%50) * time.Second), Up: up,
				Players: int(float64(slots) * (0.05 + 0.3*day*day)), MaxPlayers: slots, Bots: -1})
		}
	}
	if err := st.Write(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	// Rolled up as the monitor does every minute: the ranks read days.
	if err := st.Maintain(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	// Two maintenance windows on alpha, which stayed up in them: one in
	// the config, one posted to the API (a nightly one, by label).
	cfgWin := monitor.Window{Servers: []string{"alpha"}, From: now.Add(-10 * time.Hour).Truncate(time.Hour), To: now.Add(-9 * time.Hour).Truncate(time.Hour), Reason: "disk swap"}
	apiFrom := now.Add(-4 * time.Hour).UTC().Truncate(time.Hour)
	srv := windowServer(t, st, live, cfgWin, fmt.Sprintf(`{"labels":{"region":"eu"},"every":"day %s-%s UTC","reason":"nightly restart"}`,
		apiFrom.Format("15:04"), apiFrom.Add(40*time.Minute).Format("15:04")))
	out := peertest.Playwright(t, 4*time.Minute, filepath.Join("browsertest", "screens.mjs"), []string{srv.URL, dir},
		"WINDOW_AT="+strconv.FormatInt(apiFrom.Add(20*time.Minute).Unix(), 10))
	var res struct{ Shots []string }
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("screens.mjs printed %q: %v", out, err)
	}
	t.Logf("%d screenshots in %s", len(res.Shots), dir)
}
