package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/clustertest"
	"github.com/gsq-project/gsq/store/storetest"
	"github.com/gsq-project/gsq/web"
)

// dropped remembers the fleets whose delivery stream a test deletes when
// it ends: the first node of a fleet registers it, so that it runs after
// every node of the fleet has stopped.
var dropped sync.Map

// dropDeliveries deletes the fleet's stream of delivery jobs when the
// test ends.
func dropDeliveries(t *testing.T, fleet string) {
	t.Helper()
	if _, seen := dropped.LoadOrStore(fleet, true); seen {
		return
	}
	js := connect(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream, _ := (&Options{Fleet: fleet}).deliveries()
		_ = js.DeleteStream(ctx, stream)
	})
}

// deliveryKeys lists the X-Gsq-Delivery keys of the webhook requests
// received (a message that groups alerts carries the keys of each).
func deliveryKeys(rc *testutil.Receiver) []string {
	var keys []string
	for i := range rc.Count() {
		if h := rc.Request(i).Header.Get("X-Gsq-Delivery"); h != "" {
			keys = append(keys, strings.Split(h, ",")...)
		}
	}
	slices.Sort(keys)
	return keys
}

// alerting is a region of workers polling one simulated server, s00,
// that alert on its down and up to a webhook receiver.
type alerting struct {
	region string
	cfg    *monitor.Config
	rc     *testutil.Receiver
	nodes  []*fleetNode
	shared *store.Cluster
}

// startAlerting starts the workers, named ids, and waits for s00 judged
// up.
func startAlerting(t *testing.T, ids ...string) *alerting {
	t.Helper()
	dsn := storetest.Postgres(t)
	af := &alerting{region: testRegion(t), rc: testutil.NewReceiver(t, nil)}
	_, targets := simFleet(t, 1)
	af.cfg = fleetConfig(t, fmt.Sprintf("webhooks: [%s]\nalerts: [down, up]\n", af.rc.URL), targets...)
	for _, id := range ids {
		af.nodes = append(af.nodes, startNode(t, dsn, af.region, id, af.cfg))
	}
	af.shared = af.nodes[0].node.opts.Store
	ctx := testutil.Context(t)
	waitFor(t, "s0 judged up", func() bool {
		v, err := af.shared.Verdicts(ctx)
		return err == nil && v["s00"].State == "up"
	})
	return af
}

// TestFleetDeliversOnce: the delivery jobs of committed transitions,
// published by a worker whose deliverer never runs (it stops right
// after committing and publishing), each published twice, are done by
// the other workers of the fleet, each once, with its X-Gsq-Delivery
// key; a copy of a job that escaped the stream's duplicates window is
// dropped, its alert claimed already.
func TestFleetDeliversOnce(t *testing.T) {
	af := startAlerting(t, "a", "b")
	region, cfg, rc, a, b, shared := af.region, af.cfg, af.rc, af.nodes[0], af.nodes[1], af.shared
	ctx := testutil.Context(t)
	var f store.Fence
	waitFor(t, "a holder of s0's shard", func() bool {
		for _, fn := range []*fleetNode{a, b} {
			if f = fn.node.Fence("s00"); f.Epoch != 0 {
				return true
			}
		}
		return false
	})

	// The winner: a node of the fleet that never runs, so takes no job.
	js, nc := connectConn(t)
	w, err := NewNode(ctx, js, NodeOptions{
		Options: Options{Region: region, ID: "w", Fleet: a.node.Worker.opts.Fleet, Heartbeat: testHeartbeat, LeaseTTL: testTTL, Logf: t.Logf},
		Store:   shared, Config: cfg,
		Verdict: func(v monitor.Verdict) { t.Errorf("the stopped winner alerted on %+v", v) },
	})
	if err != nil {
		t.Fatal(err)
	}
	// Six transitions after the first up, committed an hour ahead, so that
	// the outbox scan leaves them alone (they are not three heartbeats
	// old): only their jobs can deliver them. The last is up, the state
	// the servers' polls agree with, so that the holder commits nothing
	// of its own.
	future := time.Now().Add(time.Hour)
	var want []string
	for i := range 6 {
		r, err := shared.Commit(ctx, f, store.Transition{Server: "s00", Down: i%2 == 0, At: future.Add(time.Duration(i) * time.Second)})
		if err != nil || !r.Won || !r.Alert {
			t.Fatalf("Commit %d = %+v, %v", i, r, err)
		}
		j := job{Server: "s00", Seq: r.Seq}
		want = append(want, j.key())
		for k, fresh := range []bool{true, false} {
			if got, err := w.enqueue(ctx, j); got != fresh || err != nil {
				t.Fatalf("publishing %s, time %d: new %v, %v; want %v", j.key(), k+1, got, err, fresh)
			}
		}
	}
	nc.Close() // the winner stops
	// A copy of the first job without its message id: what a publish
	// after the duplicates window is.
	_, subject := a.node.Worker.opts.deliveries()
	data, _ := json.Marshal(job{Server: "s00", Seq: 2})
	if _, err := connect(t).Publish(ctx, subject, data); err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)

	name, _ := a.node.Worker.opts.deliveries()
	stream, err := connect(t).Stream(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every job done, and the copy dropped", func() bool {
		sa, sb := a.node.NodeStats(), b.node.NodeStats()
		info, err := stream.Info(ctx)
		return err == nil && info.State.Msgs == 0 && sa.Alerts+sb.Alerts == 6 && sa.JobsDropped+sb.JobsDropped == 1
	})
	waitFor(t, "the six alerts", func() bool { return len(deliveryKeys(rc)) >= len(want) })
	if got := deliveryKeys(rc); !slices.Equal(got, want) {
		t.Errorf("X-Gsq-Delivery keys %v, want each of %v once", got, want)
	}
	if out, err := shared.Outbox(ctx, future.Add(time.Hour)); err != nil || len(out) != 0 {
		t.Errorf("unsent: %+v, %v", out, err)
	}
	sa, sb := a.node.NodeStats(), b.node.NodeStats()
	if ws := w.NodeStats(); ws.JobsPublished != 6 || ws.Alerts != 0 {
		t.Errorf("the winner published %d jobs and delivered %d, want 6 and none", ws.JobsPublished, ws.Alerts)
	}
	t.Logf("a delivered %d, b %d (redelivered %d, dropped %d)", sa.Alerts, sb.Alerts, sa.JobsRedelivered+sb.JobsRedelivered, sa.JobsDropped+sb.JobsDropped)

	// Each worker's /metrics counts what it delivered.
	for _, fn := range []*fleetNode{a, b} {
		srv := httptest.NewServer(web.New(nil, NewView(fn.svc, fn.node, shared), web.Options{}))
		series := fmt.Sprintf(`gsq_fleet_deliveries_total{event="delivered",region=%q,worker=%q}`, region, fn.node.ID())
		if v, ok := testutil.Metric(t, srv.URL+"/metrics", series); !ok || v != float64(fn.node.NodeStats().Alerts) {
			t.Errorf("%s = %v (%v), want %d", series, v, ok, fn.node.NodeStats().Alerts)
		}
		srv.Close()
	}
}

// TestFleetDeliveryOutlivesPostgres: a worker that cannot reach
// PostgreSQL gives a delivery job back, to be tried again after a delay,
// rather than dropping or sending it; once it stops, a worker that can
// delivers the job, once.
func TestFleetDeliveryOutlivesPostgres(t *testing.T) {
	dsn := storetest.Postgres(t)
	region := testRegion(t)
	rc := testutil.NewReceiver(t, nil)
	_, targets := simFleet(t, 1)
	cfg := fleetConfig(t, fmt.Sprintf("webhooks: [%s]\nalerts: [down, up]\n", rc.URL), targets...)
	ctx := testutil.Context(t)
	_, shared := clustertest.Open(t, dsn)
	fleet, err := shared.FleetID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dropDeliveries(t, fleet)

	// x: a worker whose store is closed after it starts.
	xst, xshared := clustertest.Open(t, dsn)
	js, _ := connectConn(t)
	x, err := NewNode(ctx, js, NodeOptions{
		Options: Options{Region: region, ID: "x", Fleet: fleet, Heartbeat: testHeartbeat, LeaseTTL: testTTL, Logf: t.Logf},
		Store:   xshared, Config: cfg,
		Verdict: func(v monitor.Verdict) { t.Errorf("x, without PostgreSQL, alerted on %+v", v) },
	})
	if err != nil {
		t.Fatal(err)
	}
	xst.Close()
	xctx, stopX := context.WithCancel(context.Background())
	xdone := make(chan struct{})
	go func() { defer close(xdone); x.Run(xctx) }()
	t.Cleanup(func() { stopX(); <-xdone })

	// A transition committed, an hour ahead so that no outbox scan
	// publishes it, and its job.
	f := store.Fence{Region: region, Shard: ShardOf("s00"), Epoch: 1}
	if err := shared.TakeShard(ctx, f); err != nil {
		t.Fatal(err)
	}
	r, err := shared.Commit(ctx, f, store.Transition{Server: "s00", Down: true, At: time.Now().Add(time.Hour)})
	if err != nil || !r.Won || !r.Alert {
		t.Fatalf("Commit = %+v, %v", r, err)
	}
	j := job{Server: "s00", Seq: r.Seq}
	if fresh, err := publishJob(ctx, connect(t), &Options{Fleet: fleet}, j); !fresh || err != nil {
		t.Fatalf("publishing the job: %v, %v", fresh, err)
	}
	waitFor(t, "x to take the job again after giving it back", func() bool { return x.NodeStats().JobsRedelivered > 0 })
	stopX()
	<-xdone

	a := startNode(t, dsn, region, "a", cfg)
	waitFor(t, "the alert", func() bool { return rc.Count() > 0 })
	if keys := deliveryKeys(rc); !slices.Equal(keys, []string{j.key()}) || a.node.NodeStats().Alerts != 1 || x.NodeStats().Alerts != 0 {
		t.Errorf("X-Gsq-Delivery keys %v, a delivered %d, x %d; want %s once, by a", keys, a.node.NodeStats().Alerts, x.NodeStats().Alerts, j.key())
	}
}
