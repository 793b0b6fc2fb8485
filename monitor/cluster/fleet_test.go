package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/sim"
	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/monitor/poller"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/clustertest"
	"github.com/gsq-project/gsq/store/storetest"
)

// The fleet tests run real pollers on simulated servers over loopback,
// sharing them through the real NATS and writing to the real PostgreSQL
// (GSQ_TEST_NATS, GSQ_TEST_POSTGRES), as worker processes would.

var fleetScanner = scan.Scanner{Timeout: 100 * time.Millisecond, MinTimeout: 20 * time.Millisecond, Deadline: 400 * time.Millisecond, Retries: 2}

// fleetConfig loads a config as gsq monitor does, from YAML and --target
// flags, at the smallest interval it allows (1 s).
func fleetConfig(t *testing.T, yaml string, targets ...string) *monitor.Config {
	t.Helper()
	l := &monitor.Loader{Targets: targets, Interval: time.Second}
	if yaml != "" {
		l.Path = testutil.WriteFile(t, filepath.Join(t.TempDir(), "monitor.yaml"), yaml)
	}
	cfg, err := l.Load()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// simFleet starts n simulated servers, stopped when the test ends, and
// returns them with their --target flags: server i is named sNN.
func simFleet(t *testing.T, n int) (*sim.LiveFleet, []string) {
	t.Helper()
	fleet, err := sim.StartLiveFleet(sim.LiveConfig{N: n, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fleet.Close)
	targets := make([]string, n)
	for i := range targets {
		targets[i] = fmt.Sprintf("s%02d=%s", i, fleet.Addr(i))
	}
	return fleet, targets
}

// fleetNode is a worker process in the test: a poller, its node, its
// NATS connection and its own store handle.
type fleetNode struct {
	name   string
	node   *Node
	svc    *poller.Poller
	runner *runner
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	polled map[string]time.Time // server → the start of its last poll here
}

func startNode(t *testing.T, dsn, region, id string, cfg *monitor.Config) *fleetNode {
	t.Helper()
	ctx := testutil.Context(t)
	st, shared := clustertest.Open(t, dsn)
	fleetID, err := shared.FleetID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dropDeliveries(t, fleetID)
	js, nc := connectConn(t)
	fn := &fleetNode{name: region + "/" + id, polled: map[string]time.Time{}, done: make(chan struct{})}
	n, err := NewNode(ctx, js, NodeOptions{
		Options: Options{Region: region, ID: id, Fleet: fleetID, Heartbeat: testHeartbeat, LeaseTTL: testTTL, Logf: t.Logf},
		Store:   shared, Config: cfg,
		Verdict: func(v monitor.Verdict) { fn.svc.Verdict(v) },
		State:   func(s string) (monitor.ServerState, bool) { return fn.svc.Server(s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := poller.New(ctx, cfg, poller.Options{Store: st, Scanner: fleetScanner, Shard: n, Vantage: region, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	fn.node, fn.svc = n, svc
	fn.runner = &runner{w: n.Worker, nc: nc}
	events := svc.Subscribe(context.Background())
	rctx, cancel := context.WithCancel(context.Background())
	fn.cancel = cancel
	var wg sync.WaitGroup
	wg.Go(func() { n.Run(rctx) })
	wg.Go(func() {
		if err := svc.Run(rctx); err != nil {
			t.Errorf("%s: Run: %v", fn.name, err)
		}
	})
	wg.Go(func() {
		for ev := range events {
			if ev.Kind == monitor.EventPoll {
				fn.mu.Lock()
				fn.polled[ev.Server] = ev.State.LastPoll.Add(-ev.State.QueryDuration) // its start
				fn.mu.Unlock()
			}
		}
	})
	go func() { wg.Wait(); close(fn.done) }()
	t.Cleanup(fn.stop)
	return fn
}

// stop ends the node and its poller; kill first closes its NATS
// connection, so that it gives nothing back, as kill -9 would.
func (fn *fleetNode) stop() {
	fn.cancel()
	<-fn.done
}

func (fn *fleetNode) kill() {
	fn.runner.nc.Close()
	fn.stop()
}

// polledSince lists the servers whose last poll here started after t.
func (fn *fleetNode) polledSince(t time.Time) map[string]bool {
	fn.mu.Lock()
	defer fn.mu.Unlock()
	out := map[string]bool{}
	for s, at := range fn.polled {
		if at.After(t) {
			out[s] = true
		}
	}
	return out
}

// TestFleetSharesAndTakesOver: three workers of a region poll disjoint
// shares of the servers that together cover them all; when one is
// killed, its servers are polled by the others.
func TestFleetSharesAndTakesOver(t *testing.T) {
	dsn := storetest.Postgres(t)
	region := testRegion(t)
	fleet, targets := simFleet(t, 24)
	cfg := fleetConfig(t, "", targets...)
	nodes := []*fleetNode{
		startNode(t, dsn, region, "a", cfg), startNode(t, dsn, region, "b", cfg), startNode(t, dsn, region, "c", cfg),
	}
	ids := []string{"a", "b", "c"}
	waitFor(t, "the shards split between the three", func() bool {
		ok, _ := split(nodes[0].runner, nodes[1].runner, nodes[2].runner)
		return ok
	})
	maintainers := func(fns ...*fleetNode) (n int) {
		for _, fn := range fns {
			if fn.node.Maintains() {
				n++
			}
		}
		return n
	}
	waitFor(t, "the regions to be known", func() bool { return len(nodes[0].node.Regions()) == 1 })
	if n := maintainers(nodes...); n != 1 {
		t.Errorf("%d nodes maintain the history, want 1", n)
	}
	settled := time.Now()
	waitFor(t, "every server polled after the split", func() bool {
		n := 0
		for _, fn := range nodes {
			n += len(fn.polledSince(settled))
		}
		return n >= fleet.Len()
	})
	// Each server was polled by the node whose shard it is, and only by
	// it.
	for _, fn := range nodes {
		for s := range fn.polledSince(settled) {
			if owner := Owner(ShardOf(s), ids); owner != fn.node.ID() {
				t.Errorf("%s polled %s, whose shard is %s's", fn.name, s, owner)
			}
		}
	}

	victim := nodes[2]
	var orphans []string
	for i := range fleet.Len() {
		if s := fmt.Sprintf("s%02d", i); Owner(ShardOf(s), ids) == "c" {
			orphans = append(orphans, s)
		}
	}
	if len(orphans) == 0 {
		t.Fatal("c owns no server: the test proves nothing")
	}
	victim.kill()
	killed := time.Now()
	waitFor(t, "the killed worker's servers polled by the others", func() bool {
		by := nodes[0].polledSince(killed)
		for s := range nodes[1].polledSince(killed) {
			by[s] = true
		}
		for _, s := range orphans {
			if !by[s] {
				return false
			}
		}
		return true
	})
	waitFor(t, "one maintainer among the survivors", func() bool { return maintainers(nodes[0], nodes[1]) == 1 })
	t.Logf("the %d servers of a killed worker were polled again %v after the kill (interval 1s, lease %v, heartbeat %v)",
		len(orphans), time.Since(killed).Round(time.Millisecond), testTTL, testHeartbeat)
}

// relay forwards datagrams between the pollers of one region and a
// server: the in-process fault injector that makes a server unreachable
// from that region only, where the test cannot use network namespaces.
type relay struct {
	conn   *net.UDPConn
	target *net.UDPAddr
	drop   atomic.Bool
	mu     sync.Mutex
	up     map[netip.AddrPort]*net.UDPConn
}

func startRelay(t *testing.T, target netip.AddrPort) *relay {
	t.Helper()
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{conn: conn, target: net.UDPAddrFromAddrPort(target), up: map[netip.AddrPort]*net.UDPConn{}}
	t.Cleanup(func() {
		conn.Close()
		r.mu.Lock()
		for _, u := range r.up {
			u.Close()
		}
		r.mu.Unlock()
	})
	go r.serve()
	return r
}

func (r *relay) addr() string { return r.conn.LocalAddr().String() }

func (r *relay) serve() {
	buf := make([]byte, 65536)
	for {
		n, from, err := r.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		if r.drop.Load() {
			continue
		}
		r.mu.Lock()
		u := r.up[from]
		if u == nil {
			if u, err = net.DialUDP("udp4", nil, r.target); err != nil {
				r.mu.Unlock()
				continue
			}
			r.up[from] = u
			go func() {
				b := make([]byte, 65536)
				for {
					n, err := u.Read(b)
					if err != nil {
						return
					}
					if !r.drop.Load() {
						r.conn.WriteToUDPAddrPort(b[:n], from)
					}
				}
			}()
		}
		r.mu.Unlock()
		u.Write(buf[:n])
	}
}

// twoRegions is a fleet of two regions, eu and us, each one worker
// (a and b), polling two simulated servers; us reaches s00 through a
// relay that can drop its packets.
type twoRegions struct {
	dsn, eu, us string
	fleet       *sim.LiveFleet
	route       *relay
	euCfg       *monitor.Config
	a, b        *fleetNode
	shared      *store.Cluster
}

// startTwoRegions starts them, with extra YAML in both configs, and waits
// for both regions to judge s00 up.
func startTwoRegions(t *testing.T, extra string) *twoRegions {
	t.Helper()
	vf := &twoRegions{dsn: storetest.Postgres(t), eu: testRegion(t), us: testRegion(t)}
	var targets []string
	vf.fleet, targets = simFleet(t, 2)
	yaml := fmt.Sprintf("failures: 2\ndown_after: 0s\nvantages: [%s, %s]\n", vf.eu, vf.us) + extra
	vf.route = startRelay(t, vf.fleet.Addr(0))
	vf.euCfg = fleetConfig(t, yaml, targets...)
	vf.a = startNode(t, vf.dsn, vf.eu, "a", vf.euCfg)
	vf.b = startNode(t, vf.dsn, vf.us, "b", fleetConfig(t, yaml, "s00="+vf.route.addr(), targets[1]))
	vf.shared = vf.a.node.opts.Store
	ctx := testutil.Context(t)
	waitFor(t, "both regions to judge s0 up", func() bool {
		v, err := vf.shared.Verdicts(ctx)
		return err == nil && v["s00"].State == "up" && len(vf.a.node.Regions()) == 2 && len(vf.b.node.Regions()) == 2
	})
	return vf
}

// TestFleetVantages: a server that only one of two regions loses is a
// partial outage, which pages nobody; when both regions see it down, one
// down alert goes out, and one up alert when it comes back, whichever
// region commits them.
func TestFleetVantages(t *testing.T) {
	rc := testutil.NewReceiver(t, nil)
	vf := startTwoRegions(t, fmt.Sprintf("alert_cooldown: 1h\nwebhooks: [%s]\nalerts: [down, up]\n", rc.URL))
	dsn, eu, us, fleet, route, euCfg, a, b, shared := vf.dsn, vf.eu, vf.us, vf.fleet, vf.route, vf.euCfg, vf.a, vf.b, vf.shared
	ctx := testutil.Context(t)
	exportVantages(t, dsn, "s01", eu, us)

	route.drop.Store(true) // us loses its route to s0
	partials(t, vf, 1)
	evs, _ := shared.Events(ctx, "s00", 10)
	var views map[string]observation
	if err := json.Unmarshal([]byte(evs[0].Views), &views); err != nil || views[us].State != "down" || views[eu].State != "up" {
		t.Errorf("the partial outage's views: %s (%v), want %s down and %s up", evs[0].Views, err, us, eu)
	}
	// The route recovers, and breaks again: a second partial outage.
	route.drop.Store(false)
	waitFor(t, "both regions to see the partial outage end", func() bool {
		v, err := shared.Verdicts(ctx, "s00")
		return err == nil && v["s00"].Partial.IsZero() && !inPartial(a.node, "s00") && !inPartial(b.node, "s00")
	})
	route.drop.Store(true)
	partials(t, vf, 2)
	if v, _ := shared.Verdicts(ctx); v["s00"].State != "up" {
		t.Errorf("one region's loss made s0 %q", v["s00"].State)
	}
	// A worker's page shows the verdict, up, and each vantage's view.
	waitFor(t, "the page to show us down and eu up", showsPartial(NewView(a.svc, a.node, shared), eu, us))
	// So does an API node that follows the regions' observations on
	// NATS; one without NATS shows the views of the last verdict, both
	// up.
	followed, alone := startAPI(t, dsn, euCfg, true), startAPI(t, dsn, euCfg, false)
	waitFor(t, "the API node to show us down and eu up", showsPartial(followed, eu, us))
	waitFor(t, "the API node without NATS to read the verdict", func() bool {
		st, _ := alone.Server("s00")
		return len(st.Vantages) == 2
	})
	if st, _ := alone.Server("s00"); st.Status != monitor.StatusUp || len(st.Vantages) != 2 ||
		st.Vantages[0].Status != monitor.StatusUp || st.Vantages[1].Status != monitor.StatusUp {
		t.Errorf("the API node without NATS shows %+v, want both vantages up, as at the verdict", st.Vantages)
	}

	fleet.Stop(0) // now both regions lose it
	waitFor(t, "the down alert", func() bool { return rc.Count() >= 1 })
	// Both regions reached the down verdict: one committed it, the other
	// lost the compare-and-set and found it committed.
	both := func(state string) func() bool {
		return func() bool { return a.node.Committed("s00") == state && b.node.Committed("s00") == state }
	}
	waitFor(t, "both regions to know s0 down", both("down"))
	route.drop.Store(false)
	if err := fleet.Start(0); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the up alert", func() bool { return rc.Count() >= 2 })
	waitFor(t, "both regions to know s0 up again", both("up"))
	if sa, sb := a.node.NodeStats(), b.node.NodeStats(); sa.Commits+sb.Commits < 3 || sa.CommitsLost+sb.CommitsLost == 0 {
		t.Errorf("commits won %d+%d, lost %d+%d: want the first up, the down and the up won, and a region's attempt lost",
			sa.Commits, sb.Commits, sa.CommitsLost, sb.CommitsLost)
	}
	// An API node, which polls nothing, serves the same verdict from
	// PostgreSQL alone, with the vantages' views of that verdict.
	for _, api := range []*View{alone, followed} {
		waitFor(t, "the API node to show s00 up from both vantages", func() bool {
			st, ok := api.Server("s00")
			return ok && st.Status == monitor.StatusUp && len(st.Vantages) == 2 &&
				st.Vantages[0].Status == monitor.StatusUp && st.Vantages[1].Status == monitor.StatusUp
		})
		if st, _ := api.Server("s00"); !st.LastPoll.IsZero() {
			t.Errorf("the API node polled s00: %+v", st)
		}
	}

	a.stop()
	b.stop()
	var kinds []string
	for _, body := range rc.Bodies() {
		var al monitor.Alert
		if err := json.Unmarshal(body, &al); err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, string(al.Kind)+" "+al.Server)
	}
	if got := strings.Join(kinds, ", "); got != "down s00, up s00" {
		t.Errorf("alerts: %s, want one down and one up of s0", got)
	}
	if d, u := rc.Request(0).Header.Get("X-Gsq-Delivery"), rc.Request(1).Header.Get("X-Gsq-Delivery"); d != "s00:2" || u != "s00:3" {
		t.Errorf("X-Gsq-Delivery: %q and %q, want s00:2 and s00:3 (the transitions after the first up)", d, u)
	}
	out, err := shared.Outbox(ctx, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 2 || !out[0].Sent || !out[1].Sent {
		t.Errorf("outbox: %+v, want the down and the up, sent", out)
	}
}

// showsPartial reports whether view shows s00 up, as committed, seen up
// (with its ping) from region up and down from region down.
func showsPartial(view *View, up, down string) func() bool {
	return func() bool {
		st, ok := view.Server("s00")
		if !ok || st.Status != monitor.StatusUp || len(st.Vantages) != 2 {
			return false
		}
		by := map[string]monitor.VantageView{}
		for _, v := range st.Vantages {
			by[v.Region] = v
		}
		return by[up].Status == monitor.StatusUp && by[up].Ping > 0 && by[down].Status == monitor.StatusDown
	}
}

// startAPI starts the view of an API node (--role api) of the fleet in
// dsn, which polls nothing; with follow, it follows the regions'
// observations on NATS.
func startAPI(t *testing.T, dsn string, cfg *monitor.Config, follow bool) *View {
	t.Helper()
	ctx := testutil.Context(t)
	st, shared := clustertest.Open(t, dsn)
	svc, err := poller.New(ctx, cfg, poller.Options{Store: st, Shard: Nothing{}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	api := NewView(svc, nil, shared)
	if follow {
		fleetID, err := shared.FleetID(ctx)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := connectConn(t)
		api.Follow(js, Options{Fleet: fleetID, Heartbeat: testHeartbeat, Logf: t.Logf})
	}
	vctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { api.Run(vctx, testHeartbeat, t.Logf); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return api
}

// inPartial reports whether n judged server in a partial outage last.
func inPartial(n *Node, server string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.partial[server]
}

// partials waits until both regions judged s00 in a partial outage,
// then checks that the fleet recorded want partial outages of it in all:
// each judged by both, recorded once.
func partials(t *testing.T, vf *twoRegions, want int) {
	t.Helper()
	ctx := testutil.Context(t)
	waitFor(t, fmt.Sprintf("partial outage %d of s0, seen by both regions", want), func() bool {
		evs, err := vf.shared.Events(ctx, "s00", 10)
		return err == nil && len(evs) >= want && inPartial(vf.a.node, "s00") && inPartial(vf.b.node, "s00")
	})
	// A judge that saw it is past its record: a second record would be
	// there now.
	evs, err := vf.shared.Events(ctx, "s00", 10)
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := vf.a.node.NodeStats(), vf.b.node.NodeStats()
	if len(evs) != want || sa.Partials+sb.Partials != uint64(want) {
		t.Errorf("%d partial outages of s0 recorded (%d by %s, %d by %s), want %d: %+v", len(evs), sa.Partials, vf.eu, sb.Partials, vf.us, want, evs)
	}
}

// TestFleetResendsUnsent: a transition committed by a worker that died
// before it published the alert's delivery job is found unsent by the
// outbox scan of the worker that holds the server now, which publishes
// the job; the alert is sent once, with the transition's delivery key.
func TestFleetResendsUnsent(t *testing.T) {
	af := startAlerting(t, "a")
	region, rc, a, shared := af.region, af.rc, af.nodes[0], af.shared
	ctx := testutil.Context(t)
	// What a worker that held the shard under this lease, and died after
	// committing, left behind: a down transition, never sent.
	epoch, ok := a.node.Holds(ShardOf("s00"))
	if !ok {
		t.Fatal("a does not hold s0's shard")
	}
	f := store.Fence{Region: region, Shard: ShardOf("s00"), Epoch: epoch}
	r, err := shared.Commit(ctx, f, store.Transition{Server: "s00", Down: true, At: time.Now()})
	if err != nil || !r.Won || !r.Alert {
		t.Fatalf("Commit = %+v, %v", r, err)
	}
	waitFor(t, "the unsent down alert", func() bool { return rc.Count() >= 1 })
	// s00 answers: the node judges it up again (transition 3) and that
	// alert may ride in one message with the resent down, as a group.
	body := rc.Next(t, 0)
	var g monitor.AlertGroup
	if err := json.Unmarshal(body, &g); err != nil {
		t.Fatal(err)
	}
	alerts := g.Alerts
	if g.Kind != "group" {
		var al monitor.Alert
		if err := json.Unmarshal(body, &al); err != nil {
			t.Fatal(err)
		}
		alerts = []*monitor.Alert{&al}
	}
	key := rc.Request(0).Header.Get("X-Gsq-Delivery")
	want := fmt.Sprintf("s00:%d", r.Seq)
	if !slices.ContainsFunc(alerts, func(al *monitor.Alert) bool { return al.Kind == monitor.AlertDown && al.Server == "s00" }) ||
		!slices.Contains(strings.Split(key, ","), want) {
		t.Errorf("resent %s with key %q, want s0's down among its alerts and %s in its key", body, key, want)
	}
	waitFor(t, "the resend counted", func() bool { return a.node.NodeStats().Resent == 1 })
	if out, _ := shared.Outbox(ctx, time.Now()); len(out) != 0 {
		t.Errorf("still unsent: %+v", out)
	}
}

// exportVantages checks that `gsq monitor export` of the shared history
// gives server's raw samples from each of the regions, each with its
// vantage, and none without.
func exportVantages(t *testing.T, dsn, server string, regions ...string) {
	t.Helper()
	ctx := testutil.Context(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	waitFor(t, "samples of "+server+" from every region", func() bool {
		var buf strings.Builder
		if err := store.Export(ctx, st, &buf, store.ExportOptions{Format: "jsonl", Level: store.LevelRaw, Span: store.Span{Server: server}}); err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
			if line == "" { // no samples written yet
				continue
			}
			var smp struct{ Vantage string }
			if err := json.Unmarshal([]byte(line), &smp); err != nil {
				t.Fatalf("export: %q: %v", line, err)
			}
			if smp.Vantage == "" {
				t.Fatalf("a fleet's sample without its vantage: %s", line)
			}
			seen[smp.Vantage]++
		}
		for _, r := range regions {
			if seen[r] == 0 {
				return false
			}
		}
		return len(seen) == len(regions)
	})
}
