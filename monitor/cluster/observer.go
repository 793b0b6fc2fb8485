package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/monitor"
)

// observer follows the observations of every region of a fleet that has
// workers, in the regions' buckets (gsq_obs_<region>), read only: a
// worker's node judges the servers it holds from them, and a process's
// view (a worker's or an API node's) shows each vantage point's view.
// Its methods are safe for concurrent use.
type observer struct {
	js   jetstream.JetStream
	opts *Options // the fleet (bucket names) and the heartbeat
	// self is the region of the worker that observes, counted among the
	// regions that have workers from the start; empty on an API node.
	self      string
	natsError func(op string, err error)
	// changed, when set, runs after a newer observation of server
	// arrived from a region's bucket.
	changed func(server string)

	mu       sync.Mutex
	views    map[string]map[string]observation // server → region → last observation
	regions  []string                          // the regions that have workers
	watching map[string]bool                   // regions whose observations are watched
}

func newObserver(js jetstream.JetStream, opts *Options, self string, natsError func(string, error), changed func(string)) *observer {
	return &observer{js: js, opts: opts, self: self, natsError: natsError, changed: changed,
		views: map[string]map[string]observation{}, watching: map[string]bool{}}
}

// view records an observation; it reports whether it was news, not an
// older one delivered late.
func (ob *observer) view(o observation) bool {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	vs := ob.views[o.Server]
	if vs == nil {
		vs = map[string]observation{}
		ob.views[o.Server] = vs
	}
	if prev, ok := vs[o.Region]; ok && prev.At.After(o.At) {
		return false
	}
	vs[o.Region] = o
	return true
}

// last is the last observation of server by region.
func (ob *observer) last(server, region string) observation {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.views[server][region]
}

// regionList lists the regions that have workers, as of the last
// findRegions.
func (ob *observer) regionList() []string {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return slices.Clone(ob.regions)
}

// freshness is how old an observation may be and still count: two poll
// intervals and two heartbeats, so that one late poll does not make a
// region unknown.
func (ob *observer) freshness(info serverInfo) time.Duration {
	return 2*max(info.interval, monitor.MinInterval) + 2*ob.opts.Heartbeat
}

// fresh returns a server's vantage points, in order (its own, or every
// region that has workers), and what each sees of it now: its fresh
// observation, or an unknown one (At the stale one's) when it has none.
func (ob *observer) fresh(server string, info serverInfo, now time.Time) ([]string, map[string]observation) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	vantages := info.Vantages
	if len(vantages) == 0 {
		vantages = ob.regions
	}
	out := make(map[string]observation, len(vantages))
	for _, r := range vantages {
		o, ok := ob.views[server][r]
		if !ok || now.Sub(o.At) > ob.freshness(info) {
			o = observation{Server: server, Region: r, State: "unknown", At: o.At}
		}
		out[r] = o
	}
	return vantages, out
}

// vantageViews is what each of a server's vantage points sees of it
// now, in order.
func (ob *observer) vantageViews(server string, info serverInfo, now time.Time) []monitor.VantageView {
	vantages, views := ob.fresh(server, info, now)
	return viewsOf(views, vantages)
}

// findRegions lists the regions that have live workers (a membership
// bucket with a key), and watches the observations of each until ctx is
// done.
func (ob *observer) findRegions(ctx context.Context) {
	octx, cancel := context.WithTimeout(ctx, min(ob.opts.Heartbeat, 2*time.Second))
	defer cancel()
	var regions []string
	names := ob.js.KeyValueStoreNames(octx)
	for name := range names.Name() {
		r, ok := strings.CutPrefix(name, ob.opts.bucket("members", ""))
		if !ok {
			continue
		}
		if r == ob.self {
			regions = append(regions, r)
			continue
		}
		kv, err := ob.js.KeyValue(octx, name)
		if err != nil {
			continue
		}
		if keys, err := kv.Keys(octx); err == nil && len(keys) > 0 {
			regions = append(regions, r)
		}
	}
	if err := names.Error(); err != nil {
		ob.natsError("regions", err)
		return
	}
	if ob.self != "" && !slices.Contains(regions, ob.self) {
		regions = append(regions, ob.self)
	}
	slices.Sort(regions)
	ob.mu.Lock()
	ob.regions = regions
	var start []string
	for _, r := range regions {
		if !ob.watching[r] {
			ob.watching[r] = true
			start = append(start, r)
		}
	}
	ob.mu.Unlock()
	for _, r := range start {
		go ob.watch(ctx, r)
	}
}

// watch follows a region's observations until ctx is done; the next
// findRegions starts it again after NATS comes back.
func (ob *observer) watch(ctx context.Context, region string) {
	defer func() {
		ob.mu.Lock()
		ob.watching[region] = false
		ob.mu.Unlock()
	}()
	kv, err := ob.js.KeyValue(ctx, ob.opts.bucket("obs", region))
	if err != nil {
		ob.natsError("watch", err)
		return
	}
	w, err := kv.Watch(ctx, "o.>")
	if err != nil {
		ob.natsError("watch", err)
		return
	}
	defer w.Stop()
	ob.follow(ctx, w, region, false)
}

// follow takes the observations a watch of region's bucket delivers,
// until ctx is done or the watch ends; with current set, it returns once
// the bucket's current values are read (the watch's nil marker), with
// ctx's error if they were not all read in time.
func (ob *observer) follow(ctx context.Context, w jetstream.KeyWatcher, region string, current bool) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case e, ok := <-w.Updates():
			if !ok {
				return nil
			}
			if e == nil {
				if current {
					return nil
				}
				continue
			}
			if e.Operation() != jetstream.KeyValuePut {
				continue
			}
			var o observation
			if json.Unmarshal(e.Value(), &o) != nil || o.Region != region {
				continue
			}
			if ob.view(o) && ob.changed != nil {
				ob.changed(o.Server)
			}
		}
	}
}
