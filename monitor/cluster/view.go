package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/monitor/poller"
	"github.com/gsq-project/gsq/store"
)

// View is the live state a process of a fleet serves (package web's
// Live): the servers it polls as its poller sees them, and every other
// server as the fleet committed it in PostgreSQL: its verdict (up, down,
// or pending before the first) and since when. Each server carries its
// vantage points' views (ServerState.Vantages): a worker's, live, from
// the observations it watches; an API node's, live too when it follows
// the regions' observations on NATS (Follow), else as they were at the
// last verdict. An API node (--role api),
// which polls nothing, serves the fleet's verdicts alone, so that several
// can sit behind a load balancer. The verdicts are read again every
// refresh; Servers and Server never wait on the database.
type View struct {
	*poller.Poller
	node   *Node // nil on an API node
	shared *store.Cluster
	obs    *observer // an API node's that follows the observations; nil otherwise

	mu       sync.Mutex
	verdicts map[string]store.ServerVerdict
	views    map[string][]monitor.VantageView // the vantages' views at each verdict
	servers  map[string]serverInfo            // the poller's servers, for obs
}

// NewView returns the view of a poller; node is nil on an API node.
func NewView(svc *poller.Poller, node *Node, shared *store.Cluster) *View {
	return &View{Poller: svc, node: node, shared: shared, verdicts: map[string]store.ServerVerdict{}}
}

// Follow makes an API node's view show each vantage point's live view
// of the servers, as a worker's does, from the regions' observation
// buckets on js, which it only reads, rather than the views of the last
// verdict: during a partial outage, which commits no verdict, the region
// that sees the server down. opts name the fleet (Fleet), and give the
// workers' Heartbeat (it sets how old an observation may be and count)
// and Logf. Call it before Run, which follows the regions that have
// workers until its ctx is done.
func (v *View) Follow(js jetstream.JetStream, opts Options) {
	opts.Heartbeat = cmp.Or(opts.Heartbeat, DefaultHeartbeat)
	log := &ratelog.Limiter{Logf: opts.Logf}
	v.obs = newObserver(js, &opts, "", func(op string, err error) {
		log.Printf("nats-"+op, "cluster view: %s: %v", op, err)
	}, nil)
}

// Run reads the verdicts every refresh until ctx is done; a view that
// follows the observations (Follow) looks for new regions as often.
func (v *View) Run(ctx context.Context, refresh time.Duration, logf func(string, ...any)) {
	t := time.NewTicker(refresh)
	defer t.Stop()
	for {
		if v.obs != nil {
			v.obs.findRegions(ctx)
			servers := serversOf(v.Poller.Config())
			v.mu.Lock()
			v.servers = servers
			v.mu.Unlock()
		}
		vs, err := v.shared.Verdicts(ctx)
		if err == nil {
			views := make(map[string][]monitor.VantageView, len(vs))
			for name, vd := range vs {
				var obs map[string]observation
				if json.Unmarshal([]byte(vd.Views), &obs) == nil && len(obs) > 0 {
					views[name] = viewsOf(obs, slices.Sorted(maps.Keys(obs)))
				}
			}
			v.mu.Lock()
			v.verdicts, v.views = vs, views
			v.mu.Unlock()
		} else if ctx.Err() == nil && logf != nil {
			logf("monitor: reading the fleet's verdicts: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// overlay gives a server the fleet's verdict: a server this process
// polls keeps the details of its last poll, with the status the vantage
// points agreed on (its own view is among the vantages'), as soon as
// this node knows it committed; any other, the verdict as read from
// PostgreSQL. v.mu is held.
func (v *View) overlay(st monitor.ServerState) monitor.ServerState {
	if v.node != nil {
		st.Vantages = v.node.Views(st.Name)
		if v.node.Owns(st.Name) {
			switch v.node.Committed(st.Name) {
			case "up":
				st.Status = monitor.StatusUp
			case "down":
				st.Status = monitor.StatusDown
			}
			return st
		}
	} else if info, ok := v.servers[st.Name]; ok && v.obs != nil {
		st.Vantages = v.obs.vantageViews(st.Name, info, time.Now())
	} else {
		st.Vantages = v.views[st.Name]
	}
	vd, ok := v.verdicts[st.Name]
	switch {
	case !ok || vd.State == "unknown":
		st.Status = monitor.StatusPending
	case vd.State == "down":
		st.Status = monitor.StatusDown
	default:
		st.Status = monitor.StatusUp
	}
	if ok {
		st.Since = vd.Since
	}
	return st
}

// Servers returns every server's state, sorted by name.
func (v *View) Servers() []monitor.ServerState {
	out := v.Poller.Servers()
	v.mu.Lock()
	defer v.mu.Unlock()
	for i := range out {
		out[i] = v.overlay(out[i])
	}
	return out
}

// Server returns the named server's state.
func (v *View) Server(name string) (monitor.ServerState, bool) {
	st, ok := v.Poller.Server(name)
	if !ok {
		return st, false
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.overlay(st), true
}

// Nothing is the Sharding of an API node: it polls no server.
type Nothing struct{}

// Owns reports false: an API node polls nothing.
func (Nothing) Owns(string) bool { return false }

// Observe is never called: nothing is polled.
func (Nothing) Observe(monitor.ServerState, time.Time) {}

// LastSlot is never called: nothing is polled.
func (Nothing) LastSlot(string) time.Time { return time.Time{} }

// Fence is never called: nothing is polled.
func (Nothing) Fence(string) store.Fence { return store.Fence{} }

// Fenced is never called: nothing is written.
func (Nothing) Fenced(store.Fence) {}

// Changed is never ready.
func (Nothing) Changed() <-chan struct{} { return nil }

// Maintains reports false: the workers maintain the shared history.
func (Nothing) Maintains() bool { return false }
