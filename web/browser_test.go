//go:build browser

package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/store"
)

// The hostile server: its config name and the name it announces.
const (
	hostileName  = `hostile<img src=x onerror=alert(1)>`
	hostileTitle = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`
	// listAddress names a server the way gsq monitor -f does: by its
	// address, which the page must show once (issue 19).
	listAddress = "127.0.0.4:27015"
	// hostileLabel is the hostile server's owner label: a column's text.
	hostileLabel = `<img src=x onerror="window.__xss=3">ops`
)

// TestBrowser runs web/browsertest/check.mjs in headless Chromium against
// the handler on loopback, with a fleet of servers (GSQ_BROWSER_SERVERS,
// default 2,500) and a month of history for two of them. Screenshots go to
// web/browsertest/screenshots/ (git-ignored).
//
//	go test -tags browser -count=1 -run Browser ./web/
func TestBrowser(t *testing.T) {
	n := 2500
	if s := os.Getenv("GSQ_BROWSER_SERVERS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 10 {
			t.Fatalf("GSQ_BROWSER_SERVERS=%q: want a number of at least 10", s)
		}
	}

	now := time.Now()
	live, st := browserFixture(t, n, now)
	h := New(st, live, Options{})
	mux := http.NewServeMux()
	mux.Handle("/", h)
	// The test's hook: the server named goes down, as the monitor would
	// report it.
	mux.HandleFunc("/__test/down", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("server")
		s, ok := live.Server(name)
		if !ok {
			http.NotFound(w, r)
			return
		}
		at := time.Now()
		s.Status, s.Since, s.LastPoll = monitor.StatusDown, at, at
		s.ConsecutiveFailures = 3
		s.LastError = &result.Error{Kind: result.KindTimeout, Message: "no answer in 2s"}
		live.set(s)
		live.publish(monitor.Event{Kind: monitor.EventDown, Server: name, Time: at, State: &s})
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	shots, err := filepath.Abs(filepath.Join("browsertest", "screenshots"))
	if err != nil {
		t.Fatal(err)
	}
	out := peertest.Playwright(t, 4*time.Minute, filepath.Join("browsertest", "check.mjs"), []string{srv.URL, shots},
		"HOSTILE_NAME="+hostileName, "HOSTILE_TITLE="+hostileTitle, "HOSTILE_LABEL="+hostileLabel, "LIST_ADDRESS="+listAddress)
	var res struct {
		Names          []string
		CountText      string   `json:"count_text"`
		RowsInDOM      int      `json:"rows_in_dom"`
		ChartPoints    int      `json:"chart_points"`
		FirstByPlayers []string `json:"first_by_players"`
		Timings        map[string]int64
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("check.mjs printed %q: %v", out, err)
	}
	want := make([]string, 0, n)
	for _, s := range live.Servers() {
		want = append(want, s.Name)
	}
	slices.Sort(res.Names)
	if !slices.Equal(res.Names, want) {
		t.Errorf("the list showed %d servers, want all %d", len(res.Names), len(want))
	}
	if wantText := fmt.Sprintf("%s servers", groupThousands(n)); res.CountText != wantText {
		t.Errorf("count %q, want %q", res.CountText, wantText)
	}
	if res.RowsInDOM >= n/2 {
		t.Errorf("%d row elements for %d servers: the list is not virtual", res.RowsInDOM, n)
	}
	if res.ChartPoints < 100 {
		t.Errorf("the chart has %d points", res.ChartPoints)
	}
	t.Logf("%d servers, %d row elements; chart %d points; first by players %v; timings (ms) %v; screenshots in %s",
		n, res.RowsInDOM, res.ChartPoints, res.FirstByPlayers, res.Timings, shots)
}

// windowServer serves the handler on loopback (closed at the test's end)
// with a maintenance window in the config, cfg, and another posted to
// the API as JSON, spec: the two ways a monitor has them.
func windowServer(t *testing.T, st store.Store, live *testLive, cfg monitor.Window, spec string) *httptest.Server {
	t.Helper()
	if err := cfg.Check(); err != nil {
		t.Fatal(err)
	}
	mt := &monitor.Maintenance{}
	mt.SetConfig([]monitor.Window{cfg})
	srv := httptest.NewServer(New(st, live, Options{TimeZone: time.UTC, Maintenance: mt}))
	t.Cleanup(srv.Close)
	resp, err := http.Post(srv.URL+"/api/v1/maintenance", "application/json", strings.NewReader(spec))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("posting the window %s: %s", spec, resp.Status)
	}
	return srv
}

// groupThousands writes n as the page does in an English locale.
func groupThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// browserFixture makes n servers that look like a real fleet, and a month
// of history for alpha and charlie: players following the day, two
// outages, sessions and map changes.
func browserFixture(t *testing.T, n int, now time.Time) (*testLive, store.Store) {
	games := []struct {
		game, prefix string
		maps         []string
		slots        int
	}{
		{"Counter-Strike 2", "CS2", []string{"de_dust2", "de_mirage", "de_inferno", "de_nuke", "de_ancient"}, 32},
		{"Team Fortress", "TF2", []string{"cp_badlands", "ctf_2fort", "pl_upward", "koth_harvest"}, 24},
		{"Rust", "Rust", []string{"Procedural Map", "Barren"}, 200},
		{"Garry's Mod", "GMod", []string{"gm_construct", "rp_downtown_v4c"}, 64},
	}
	regions := []string{"EU", "US East", "US West", "Asia", "AU"}
	live := newTestLive()
	for i := range n {
		g := games[i%len(games)]
		var name string
		switch i {
		case 0:
			name = "alpha"
		case 1:
			name = "bravo"
		case 2:
			name = "charlie"
		case 3:
			name = hostileName
		case 4:
			name = listAddress
		default:
			name = fmt.Sprintf("srv-%05d", i)
		}
		players := int(float64(g.slots) * (0.5 + 0.5*math.Sin(float64(i)*1.7)))
		s := upState(name, players, g.slots, g.maps[i%len(g.maps)])
		s.Summary.Name = ptr(fmt.Sprintf("%s #%d | %s | %s", regions[i%len(regions)], i+1, g.prefix, g.maps[i%len(g.maps)]))
		s.Summary.Game = ptr(g.game)
		s.Target = fmt.Sprintf("127.0.%d.%d:%d", i/250%250, i%250+1, 27015+i%10)
		s.Ping = time.Duration(8+i*37%140) * time.Millisecond
		s.Uptime24h = ptr(1 - float64(i*7%23)/300)
		// Labels as a config gives them: a region on every server, a
		// game on most, an owner on a third, a tier on a seventh, a rack
		// on one in 50: five keys, more than the columns at 1366 px.
		s.Labels = map[string]string{"region": strings.ToLower(regions[i%len(regions)])}
		if i%5 != 4 {
			s.Labels["game"] = strings.ToLower(g.prefix)
		}
		if i%3 == 0 {
			s.Labels["owner"] = []string{"ana", "ben", "clan-wolf"}[i/3%3]
		}
		if i%7 == 0 {
			s.Labels["tier"] = []string{"gold", "silver"}[i/7%2]
		}
		if i%50 == 0 {
			s.Labels["rack"] = fmt.Sprintf("r%d", i/50)
		}
		switch {
		case i == 3:
			s.Summary.Name = ptr(hostileTitle)
			s.Labels["owner"] = hostileLabel
		case i == 4: // listed with -f: named by its address, announcing no name
			s.Target, s.Summary.Name = listAddress, nil
		case i%29 == 7:
			labels := s.Labels
			s = downState(name)
			s.Labels = labels
			s.Target = fmt.Sprintf("127.0.%d.%d:27015", i/250%250, i%250+1)
			s.Summary.Name = ptr(fmt.Sprintf("%s #%d | %s", regions[i%len(regions)], i+1, g.prefix))
			s.Uptime24h = ptr(0.8)
		case i%97 == 11:
			s.Status = monitor.StatusPending
			s.LastPoll = time.Time{}
		}
		live.set(s)
	}

	st := newTestStore(t)
	var known []store.Server
	for _, s := range live.Servers() {
		known = append(known, store.Server{Name: s.Name, Target: s.Target, Protocol: s.Protocol})
	}
	if err := st.SyncServers(context.Background(), known); err != nil {
		t.Fatal(err)
	}
	pool := []string{"Alice", "bob", "xX_Sn1per_Xx", "Ærøskøbing", "Zoë", "mallory", "Trent", "carol", "dave", "eve", "<b>not bold</b>", "Peggy", "Victor", "Walter", "Oscar", "Sybil"}
	for _, name := range []string{"alpha", "charlie"} {
		s, _ := live.Server(name)
		slots := *s.Summary.MaxPlayers
		var samples []store.Sample
		var listed []string // the players of the last list
		for t := now.Add(-30 * 24 * time.Hour); t.Before(now); t = t.Add(5 * time.Minute) {
			age := now.Sub(t)
			hour := float64(t.Hour()) + float64(t.Minute())/60
			day := 0.5 - 0.5*math.Cos((hour-4)/24*2*math.Pi) // lowest at 4:00, highest at 16:00
			players := int(math.Round(float64(slots) * (0.05 + 0.85*day*day) * (0.9 + 0.1*math.Sin(float64(t.Unix())/977))))
			up := !(age > 3*time.Hour && age < 3*time.Hour+30*time.Minute) && !(age > 4*24*time.Hour && age < 4*24*time.Hour+2*time.Hour)
			m := s.Summary.Map
			mapName := *m
			if age > 6*time.Hour {
				mapName = []string{"de_dust2", "de_mirage", "de_inferno"}[int(age/(6*time.Hour))%3]
			}
			sample := store.Sample{Server: name, Time: t, Up: up, Players: players, MaxPlayers: slots, Map: mapName}
			var names []string
			if up && age < 8*time.Hour {
				k := min(len(pool), players/2+1)
				shift := int(age / (40 * time.Minute))
				for j := range k {
					names = append(names, pool[(j+shift)%len(pool)])
					sample.PlayerList = append(sample.PlayerList, store.PlayerSeen{Name: names[j], Score: int64((j * 7) % 31)})
				}
			}
			joined, left := testutil.Diff(listed, names)
			for _, n := range left {
				sample.Sessions = append(sample.Sessions, store.SessionChange{Player: n, Left: true})
			}
			for _, n := range joined {
				sample.Sessions = append(sample.Sessions, store.SessionChange{Player: n})
			}
			listed = names
			samples = append(samples, sample)
		}
		if err := st.Write(context.Background(), samples); err != nil {
			t.Fatal(err)
		}
		online := make([]monitor.Player, 0, 8)
		for j, p := range pool[:8] {
			online = append(online, monitor.Player{Name: p, Score: int64(30 - j*3), Duration: time.Duration(5+j*11) * time.Minute})
		}
		s.Players = online
		s.Summary.Players = ptr(len(online))
		live.set(s)
	}
	return live, st
}
