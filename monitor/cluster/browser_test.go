//go:build browser

package cluster

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/peertest"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/web"
)

// TestBrowserVantages runs web/browsertest/vantages.mjs in headless
// Chromium on a fleet: two regions' workers on the real NATS and
// PostgreSQL, one of which lost its route to a server. The worker's page,
// and an API node's that follows the regions' observations on NATS, must
// show the verdict (up), each region's view (one up with its ping,
// one down), the partial outage while it lasts, and the partial outage
// the fleet recorded, at desktop and phone widths in both themes.
// Screenshots go to web/browsertest/screenshots/{worker,api}/ (git-ignored).
//
//	go test -tags browser -count=1 -run BrowserVantages ./monitor/cluster/
func TestBrowserVantages(t *testing.T) {
	vf := startTwoRegions(t, "")
	dsn, eu, us, route, a, shared := vf.dsn, vf.eu, vf.us, vf.route, vf.a, vf.shared
	ctx := testutil.Context(t)
	route.drop.Store(true) // us loses its route to s0
	waitFor(t, "a partial outage of s0", func() bool {
		evs, err := shared.Events(ctx, "s00", 10)
		return err == nil && len(evs) > 0
	})

	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	worker := NewView(a.svc, a.node, shared)
	vctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go worker.Run(vctx, time.Second, t.Logf)
	api := startAPI(t, dsn, vf.euCfg, true)
	waitFor(t, "the API node to show us down and eu up", showsPartial(api, eu, us))
	for _, node := range []struct {
		name string
		view *View
	}{{"worker", worker}, {"api", api}} {
		t.Run(node.name, func(t *testing.T) { browseVantages(t, st, node.view, node.name, eu, us) })
	}
}

// browseVantages runs vantages.mjs on view's page, which shows s00 down
// from region down and up from region up; its screenshots go to a
// directory of its own, dir.
func browseVantages(t *testing.T, st store.Store, view *View, dir, eu, us string) {
	srv := httptest.NewServer(web.New(st, view, web.Options{TimeZone: time.UTC}))
	defer srv.Close()
	shots, err := filepath.Abs(filepath.Join("..", "..", "web", "browsertest", "screenshots", dir))
	if err != nil {
		t.Fatal(err)
	}
	out := peertest.Playwright(t, 3*time.Minute, filepath.Join("..", "..", "web", "browsertest", "vantages.mjs"),
		[]string{srv.URL, shots}, "SERVER=s00", "UP="+eu, "DOWN="+us)
	var res struct {
		Views   map[string]struct{ Status, Text, Ping string } `json:"views"`
		Partial string                                         `json:"partial"`
		Events  int                                            `json:"events"`
		Shots   []string                                       `json:"shots"`
		Wide    []string                                       `json:"wide"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("vantages.mjs printed %q: %v", out, err)
	}
	if res.Views[eu].Status != "up" || res.Views[us].Status != "down" || res.Events == 0 || len(res.Shots) != 4 {
		t.Errorf("the page showed %+v, %d partial outages, %d screenshots", res, res.Events, len(res.Shots))
	}
	t.Logf("views %+v; %q; %d recorded; shots %v; wider than a phone elsewhere on the page: %v", res.Views, res.Partial, res.Events, res.Shots, res.Wide)
}
