//go:build browser

package web

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// TestBrowserActivity runs web/browsertest/activity.mjs in headless
// Chromium: the heatmap filling from seeded history, a drag on the chart
// changing the URL, an 18-second outage shaded on the 1 h chart and a
// stretch of maintenance shaded as maintenance, not as an outage, the
// week before on the chart, keyboard navigation with visible focus, and
// WCAG AA contrast of these views in both themes. Screenshots go to
// web/browsertest/screenshots/ (git-ignored).
//
//	go test -tags browser -count=1 -run BrowserActivity ./web/
func TestBrowserActivity(t *testing.T) {
	now := time.Now()
	live, st := browserFixture(t, 200, now)
	// bravo: polled every 30 s for two hours; one poll failed 20 minutes
	// ago (an outage of 18 s, as a person reported it: a down and an up
	// alert, and nothing on the 1 h chart).
	outage := now.Add(-20 * time.Minute).Truncate(time.Minute).Add(30 * time.Second)
	// And 40 minutes ago, down for 3 minutes in a maintenance window:
	// an incident of maintenance, shaded as such, not as an outage.
	maint := now.Add(-40 * time.Minute).Truncate(time.Minute)
	var samples []store.Sample
	for at := now.Add(-2 * time.Hour).Truncate(time.Minute); at.Before(now); at = at.Add(30 * time.Second) {
		inMaint := !at.Before(maint) && at.Before(maint.Add(3*time.Minute))
		smp := store.Sample{Server: "bravo", Time: at, Up: !at.Equal(outage) && !inMaint, Players: 7, MaxPlayers: 24, Bots: -1}
		switch {
		case at.Equal(maint):
			smp.Outage = &store.Outage{Since: at, Cause: "timeout", Maintenance: true}
		case at.Equal(maint.Add(3 * time.Minute)):
			smp.Recovered = true
		}
		samples = append(samples, smp)
	}
	if err := st.Write(context.Background(), samples); err != nil {
		t.Fatal(err)
	}
	// Rolled up as the monitor does every minute: the ranks read days.
	if err := st.Maintain(context.Background(), now); err != nil {
		t.Fatal(err)
	}
	b, _ := live.Server("bravo")
	b.Interval = 30 * time.Second
	live.set(b)
	// The last polls of every server, as the poller keeps them: one
	// server in three had a poll fail; alpha, whose bar the script
	// checks, has its last 10 all answered (the servers are by name, so
	// its place is not fixed: an address sorts before it).
	for i, s := range live.Servers() {
		recent := []byte("111111111111111111111111111111")
		if i%3 == 1 && s.Name != "alpha" {
			recent[1] = '0'
		}
		n := 10 + i%21
		if s.Name == "alpha" {
			n = 10
		}
		s.RecentPolls = string(recent[:n])
		live.set(s)
	}

	// Two maintenance windows on bravo in which it stayed up: one in the
	// config (55 to 48 minutes ago, by name) and one posted to the API (a
	// daily one, 12 to 7 minutes ago, by its region label). The chart
	// draws both, though no incident happened in them.
	cfgWin := monitor.Window{Servers: []string{"bravo"}, From: now.Add(-55 * time.Minute).Truncate(time.Minute), To: now.Add(-48 * time.Minute).Truncate(time.Minute), Reason: "disk swap"}
	apiFrom := now.Add(-12 * time.Minute).UTC().Truncate(time.Minute)
	apiTo := apiFrom.Add(5 * time.Minute)
	srv := windowServer(t, st, live, cfgWin, fmt.Sprintf(`{"labels":{"region":"us east"},"every":"day %s-%s UTC","reason":"nightly <b>restart</b>"}`,
		apiFrom.Format("15:04"), apiTo.Format("15:04")))
	shots, err := filepath.Abs(filepath.Join("browsertest", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	out := peertest.Playwright(t, 4*time.Minute, filepath.Join("browsertest", "activity.mjs"),
		[]string{srv.URL, shots}, "OUTAGE="+strconv.FormatInt(outage.Unix(), 10), "MAINT="+strconv.FormatInt(maint.Unix(), 10),
		fmt.Sprintf("WINDOWS=%d,%d,%d,%d", cfgWin.From.Unix(), cfgWin.To.Unix(), apiFrom.Unix(), apiTo.Unix()))
	var res struct {
		HeatCells   int                `json:"heat_cells"`
		ZoomURL     string             `json:"zoom_url"`
		OutageRGB   []int              `json:"outage_rgb"`
		MaintRGB    map[string][]int   `json:"maint_rgb"`
		WindowRGB   map[string][]int   `json:"window_rgb"`
		ClearRGB    []int              `json:"clear_rgb"`
		Focused     []string           `json:"focused"`
		Contrast    map[string]float64 `json:"min_contrast"`
		RankPoints  int                `json:"rank_points"`
		MapStatRows int                `json:"map_stat_rows"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("activity.mjs printed %q: %v", out, err)
	}
	t.Logf("heatmap %d cells; zoom %s; outage pixel %v, maintenance %v, window %v, clear %v; focus %v; lowest contrast %v; rank %d points; %d maps",
		res.HeatCells, res.ZoomURL, res.OutageRGB, res.MaintRGB, res.WindowRGB, res.ClearRGB, res.Focused, res.Contrast, res.RankPoints, res.MapStatRows)
}
