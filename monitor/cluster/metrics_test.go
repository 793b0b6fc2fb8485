package cluster

import (
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/store/storetest"
	"github.com/gsq-project/gsq/web"
)

// TestFleetMetrics: a worker's /metrics says it reaches NATS and holds
// every shard alone; when a second worker joins, the shards it should
// own and the leases it holds fall to its share; when its NATS
// connection is gone, it says NATS is down.
func TestFleetMetrics(t *testing.T) {
	dsn := storetest.Postgres(t)
	region := testRegion(t)
	_, targets := simFleet(t, 2)
	yaml := "failures: 2\n"
	a := startNode(t, dsn, region, "a", fleetConfig(t, yaml, targets...))
	srv := httptest.NewServer(web.New(nil, NewView(a.svc, a.node, a.node.opts.Store), web.Options{}))
	defer srv.Close()
	url := srv.URL + "/metrics"
	labels := fmt.Sprintf(`{region=%q,worker="a"}`, region)
	metric := func(name string) float64 {
		v, ok := testutil.Metric(t, url, name+labels)
		if !ok {
			t.Fatalf("/metrics has no %s%s", name, labels)
		}
		return v
	}
	waitFor(t, "a to hold every shard", func() bool {
		return metric("gsq_fleet_leases_held") == Shards && metric("gsq_fleet_shards_owned") == Shards && metric("gsq_fleet_nats_up") == 1
	})

	startNode(t, dsn, region, "b", fleetConfig(t, yaml, targets...))
	waitFor(t, "a to hand b its share", func() bool {
		held, owned := metric("gsq_fleet_leases_held"), metric("gsq_fleet_shards_owned")
		return metric("gsq_fleet_members") == 2 && owned < Shards && owned > 0 && held == owned
	})
	if v, _ := testutil.Metric(t, url, fmt.Sprintf(`gsq_fleet_leases_total{event="handed_over",region=%q,worker="a"}`, region)); v == 0 {
		t.Errorf("a handed nothing over to b")
	}

	a.runner.nc.Close()
	waitFor(t, "a to say NATS is down", func() bool { return metric("gsq_fleet_nats_up") == 0 })
}
