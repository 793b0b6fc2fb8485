package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// NodeOptions configure a Node.
type NodeOptions struct {
	Options
	// Store is the fleet's shared state in PostgreSQL: the fences, the
	// verdicts, the outbox. Required.
	Store *store.Cluster
	// Config is the servers and their vantage points; SetConfig replaces
	// it after a reload.
	Config *monitor.Config
	// Verdict alerts on a transition whose delivery job this node took
	// from the fleet's queue (the poller's Verdict); State, when set, gives
	// the alert the node's last state of the server. A node without Verdict
	// publishes delivery jobs and takes none.
	Verdict func(monitor.Verdict)
	State   func(server string) (monitor.ServerState, bool)
}

// observation is one region's view of a server: what its owner's last
// poll made of it. It is the value of o.<shard>.<server hash> in the
// region's bucket gsq_obs_<region>.
type observation struct {
	Server string    `json:"server"`
	Region string    `json:"region"`
	State  string    `json:"state"` // "up", "down" or "unknown"
	At     time.Time `json:"at"`    // the poll's end
	// Slot is the poll's slot (package poller's grid): a worker that takes
	// the server's shard over polls the first slot its region has not.
	Slot   time.Time `json:"slot,omitzero"`
	PingUS int64     `json:"ping_us,omitempty"`
}

// serverInfo is what the judge needs of a server's config.
type serverInfo struct {
	monitor.Vantage
	interval time.Duration
}

// NodeStats count what a node did.
type NodeStats struct {
	Stats
	Published     uint64 // observations written to the region's bucket
	PublishErrors uint64
	Commits       uint64 // transitions this node committed
	CommitsLost   uint64 // transitions another node committed first
	Fenced        uint64 // writes refused because the shard changed hands
	Partials      uint64 // partial outages recorded
	// Alerts counts the delivery jobs this node claimed and handed to its
	// alerter.
	Alerts          uint64
	JobsPublished   uint64 // delivery jobs put in the fleet's queue (not counting duplicates)
	JobsRedelivered uint64 // delivery jobs taken again after a failed or unacknowledged attempt
	JobsDropped     uint64 // delivery jobs whose alert was claimed already (published twice)
	// Resent counts the delivery jobs that the outbox scan published
	// again: transitions still unsent after three heartbeats.
	Resent uint64
}

// Node is a worker of a fleet with its vantage point: it holds shards
// (a [Worker]), publishes its region's observation of each server it
// polls, watches the other regions' observations, and, for the servers
// whose shards it holds, commits the verdict the vantage points agree on
// in PostgreSQL, once for the whole fleet. It implements the poller's
// Sharding.
type Node struct {
	*Worker
	opts NodeOptions
	js   jetstream.JetStream
	own  jetstream.KeyValue // gsq_obs_<region>
	obs  *observer          // every region's observations
	jobs jetstream.Consumer // of the fleet's delivery jobs (deliver.go)

	mu        sync.Mutex
	servers   map[string]serverInfo
	committed map[string]string      // server → the verdict last known committed
	partial   map[string]bool        // servers in a partial outage, as last judged here or read
	pending   map[string]observation // to publish
	dirty     map[string]bool        // to judge
	nstats    NodeStats

	kickPublish chan struct{}
	kickJudge   chan struct{}
}

// NewNode joins the region and opens its observation bucket.
func NewNode(ctx context.Context, js jetstream.JetStream, opts NodeOptions) (*Node, error) {
	if opts.Store == nil || opts.Config == nil {
		return nil, errors.New("cluster: a node needs the shared store and the config")
	}
	n := &Node{
		opts: opts, js: js,
		committed: map[string]string{}, partial: map[string]bool{},
		pending: map[string]observation{}, dirty: map[string]bool{},
		kickPublish: make(chan struct{}, 1), kickJudge: make(chan struct{}, 1),
	}
	n.SetConfig(opts.Config)
	wopts := opts.Options
	wopts.OnAcquire = func(ctx context.Context, shard int, epoch uint64) error {
		return opts.Store.TakeShard(ctx, store.Fence{Region: n.Region(), Shard: shard, Epoch: epoch})
	}
	wopts.OnGained = func(ctx context.Context) {
		n.readObservations(ctx)
		n.readVerdicts(ctx)
	}
	w, err := Join(ctx, js, wopts)
	if err != nil {
		return nil, err
	}
	n.Worker = w
	n.obs = newObserver(js, &w.opts, w.Region(), w.natsError, n.observed)
	if n.own, err = bucket(ctx, js, w.opts.bucket("obs", w.Region()), n.obsTTL(), w.opts.Replicas); err != nil {
		return nil, err
	}
	if n.jobs, err = openDeliveries(ctx, js, &w.opts); err != nil {
		return nil, err
	}
	verdicts, err := opts.Store.Verdicts(ctx)
	if err != nil {
		return nil, err
	}
	n.takeVerdicts(verdicts)
	return n, nil
}

// readVerdicts reads every server's committed verdict and open partial
// outage again, once a heartbeat gained shards: what the node read
// before of the servers it did not hold is stale, and a partial outage
// another node saw begin, it must see end. A failure leaves them as
// they were.
func (n *Node) readVerdicts(ctx context.Context) {
	vs, err := n.opts.Store.Verdicts(ctx)
	if err != nil {
		n.log.Printf("store", "cluster %s/%s: %v", n.Region(), n.ID(), err)
		return
	}
	n.takeVerdicts(vs)
}

// takeVerdicts takes servers' committed verdicts and open partial
// outages.
func (n *Node) takeVerdicts(vs map[string]store.ServerVerdict) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, v := range vs {
		n.committed[name] = v.State
		n.partial[name] = !v.Partial.IsZero()
	}
}

// obsTTL is how long an observation lives unrenewed in the bucket:
// three of the longest poll intervals. The judge reads only those
// younger than two intervals and two heartbeats (fresh).
func (n *Node) obsTTL() time.Duration {
	longest := monitor.DefaultInterval
	for _, s := range n.servers {
		longest = max(longest, s.interval)
	}
	return 3 * longest
}

// SetConfig takes the servers of a new config.
func (n *Node) SetConfig(cfg *monitor.Config) {
	servers := serversOf(cfg)
	n.mu.Lock()
	n.servers = servers
	n.mu.Unlock()
}

// serversOf is what the judge needs of each of cfg's servers, by name.
func serversOf(cfg *monitor.Config) map[string]serverInfo {
	servers := make(map[string]serverInfo, len(cfg.Servers))
	for _, s := range cfg.Servers {
		servers[s.Name] = serverInfo{Vantage: s.Vantage, interval: s.Interval}
	}
	return servers
}

// polledHere reports whether this node's region is a vantage point of
// the server. n.mu is held.
func (n *Node) polledHere(info serverInfo) bool {
	return len(info.Vantages) == 0 || slices.Contains(info.Vantages, n.Region())
}

// Owns reports whether this node polls server now: its region is one of
// the server's vantage points, and it holds the server's shard.
func (n *Node) Owns(server string) bool {
	n.mu.Lock()
	info, ok := n.servers[server]
	here := ok && n.polledHere(info)
	n.mu.Unlock()
	return here && n.Worker.Owns(server)
}

// Observe takes the state a poll of a server made in slot: the region's
// observation, published after every poll (a worker that takes the
// shard over reads from it which slot was polled last; at the goal of
// 150,000 servers every 60 s, a throttle to a third of an observation's
// freshness published every poll anyway). It never waits on NATS.
func (n *Node) Observe(st monitor.ServerState, slot time.Time) {
	o := observation{Server: st.Name, Region: n.Region(), State: "unknown", At: st.LastPoll, Slot: slot}
	switch st.Status {
	case monitor.StatusUp:
		o.State, o.PingUS = "up", st.Ping.Microseconds()
	case monitor.StatusDown:
		o.State = "down"
	}
	n.mu.Lock()
	n.pending[st.Name] = o
	n.mu.Unlock()
	kick(n.kickPublish)
	if n.obs.view(o) {
		n.observed(o.Server)
	}
}

// observed marks a server whose observations changed to be judged.
func (n *Node) observed(server string) {
	n.mu.Lock()
	n.dirty[server] = true
	n.mu.Unlock()
	kick(n.kickJudge)
}

func kick(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// readObservations reads the region's last observations from its
// bucket once a heartbeat gained shards, before the poller learns of
// them: the watch of the bucket may lag (a worker that wakes from a
// pause, or one that just joined, has a backlog), and the poller asks
// LastSlot of each server it newly holds, to poll it in the first slot
// the region has not. One read of the whole bucket, however many shards
// were gained, costs less than one per shard past a handful, and shards
// change hands only when members come and go. A failure leaves the
// views as the watch made them.
func (n *Node) readObservations(ctx context.Context) {
	octx, cancel := context.WithTimeout(ctx, n.Heartbeat())
	defer cancel()
	w, err := n.own.Watch(octx, "o.>", jetstream.IgnoreDeletes())
	if err != nil {
		n.natsError("observations", err)
		return
	}
	defer w.Stop()
	if err := n.obs.follow(octx, w, n.Region(), true); err != nil {
		n.natsError("observations", err)
	}
}

// obsKey is an observation's key: its shard, and a hash of the server's
// name (names may hold characters keys may not).
func obsKey(server string) string {
	h := fnv.New64a()
	h.Write([]byte(server))
	return "o." + strconv.Itoa(ShardOf(server)) + "." + strconv.FormatUint(h.Sum64(), 16)
}

// Run runs the worker, the publisher of observations, the watchers of
// every region's observations, the judge, and, with a Verdict, the
// deliverer of alerts, until ctx is done.
func (n *Node) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Go(func() { n.Worker.Run(ctx) })
	wg.Go(func() { n.publish(ctx) })
	wg.Go(func() { n.judge(ctx) })
	if n.opts.Verdict != nil {
		wg.Go(func() { n.deliver(ctx) })
	}
	wg.Wait()
	return nil
}

// publish writes the pending observations to the region's bucket.
func (n *Node) publish(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kickPublish:
		}
		n.mu.Lock()
		batch := n.pending
		n.pending = map[string]observation{}
		n.mu.Unlock()
		for _, o := range batch {
			v, _ := json.Marshal(o)
			octx, cancel := n.opCtx(ctx)
			_, err := n.own.Put(octx, obsKey(o.Server), v)
			cancel()
			n.mu.Lock()
			if err == nil {
				n.nstats.Published++
			} else {
				n.nstats.PublishErrors++ // the next poll publishes again
			}
			n.mu.Unlock()
			if err != nil {
				n.natsError("publish", err)
			}
		}
	}
}

// judge, each heartbeat and whenever an observation arrives, commits the
// verdicts of the servers this node holds; each heartbeat it also looks
// for regions that have workers and watches their observations.
func (n *Node) judge(ctx context.Context) {
	t := time.NewTicker(n.Heartbeat())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.obs.findRegions(ctx)
			n.resend(ctx)
			n.mu.Lock()
			for name := range n.servers {
				n.dirty[name] = true // freshness changes with time alone
			}
			n.mu.Unlock()
		case <-n.kickJudge:
		}
		n.mu.Lock()
		names := make([]string, 0, len(n.dirty))
		for name := range n.dirty {
			names = append(names, name)
		}
		clear(n.dirty)
		n.mu.Unlock()
		for _, name := range names {
			if ctx.Err() != nil {
				return
			}
			n.judgeServer(ctx, name)
		}
	}
}

// judgment is what the vantage points of a server say together.
type judgment struct {
	server   string
	verdict  string // "down", "up", or "" when fewer than the quorum agree
	partial  bool   // some say down, fewer than the quorum
	at       time.Time
	views    map[string]observation
	quorum   int
	vantages []string
}

// judgeLocked applies the vantage rule to a server's observations. n.mu
// is held.
func (n *Node) judgeLocked(name string, info serverInfo, now time.Time) judgment {
	vantages, views := n.obs.fresh(name, info, now)
	j := judgment{server: name, quorum: info.QuorumOf(len(vantages)), vantages: vantages, views: views}
	var up, down int
	var upAt, downAt time.Time
	for _, r := range vantages {
		switch o := views[r]; o.State {
		case "up":
			up++
			upAt = later(upAt, o.At)
		case "down":
			down++
			downAt = later(downAt, o.At)
		}
	}
	switch {
	case down >= j.quorum:
		j.verdict, j.at = "down", downAt
	case up >= j.quorum:
		j.verdict, j.at = "up", upAt
	}
	j.partial = down > 0 && j.verdict != "down"
	return j
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// judgeServer commits a server's verdict when it changed, if this node
// polls the server and holds its shard.
func (n *Node) judgeServer(ctx context.Context, name string) {
	epoch, held := n.Holds(ShardOf(name))
	n.mu.Lock()
	info, ok := n.servers[name]
	if !ok || !held || !n.polledHere(info) {
		n.mu.Unlock()
		return
	}
	j := n.judgeLocked(name, info, time.Now())
	was := n.partial[name]
	commit := j.verdict != "" && j.verdict != n.committed[name]
	n.mu.Unlock()
	f := store.Fence{Region: n.Region(), Shard: ShardOf(name), Epoch: epoch}
	views, _ := json.Marshal(j.views)
	if !commit {
		n.partialOutage(ctx, f, j, string(views), was, false)
		return
	}
	r, err := n.opts.Store.Commit(ctx, f, store.Transition{Server: name, Down: j.verdict == "down", At: j.at, Views: string(views)})
	if n.fencedOrFailed(f, "verdict", err) {
		return
	}
	if !r.Won {
		n.count(func(s *NodeStats) { s.CommitsLost++ })
		n.refreshCommitted(ctx, name)
		n.partialOutage(ctx, f, j, string(views), was, false)
		return
	}
	n.mu.Lock()
	n.committed[name] = j.verdict
	n.nstats.Commits++
	n.mu.Unlock()
	n.partialOutage(ctx, f, j, string(views), was, true)
	n.log.Printf("verdict", "cluster %s/%s: %s is %s (transition %d): %s", n.Region(), n.ID(), name, j.verdict, r.Seq, describe(j))
	if r.Alert {
		// Some worker of the fleet delivers it (deliver.go); should the
		// publish fail, the outbox scan publishes it again.
		_, _ = n.enqueue(ctx, job{Server: name, Seq: r.Seq})
	}
}

// partialOutage records the server's partial outage when one began (it
// was not partial as last judged here, or this node just committed a
// transition, which ends the one before), and ends it when it ended,
// after the judgment's commit: the fleet records each partial outage
// once, whichever region's worker sees it first (store's RecordPartial
// says the rule). Only then is the server judged partial here: a
// failure leaves it as it was, to be tried again at the next judgment.
func (n *Node) partialOutage(ctx context.Context, f store.Fence, j judgment, views string, was, committed bool) {
	var newest, down time.Time
	for _, o := range j.views {
		newest = later(newest, o.At)
		if o.State == "down" {
			down = later(down, o.At)
		}
	}
	var err error
	switch {
	case j.partial && (!was || committed):
		var recorded bool
		recorded, err = n.opts.Store.RecordPartial(ctx, f, store.Event{Server: j.server, At: down, Views: views})
		if err == nil && recorded {
			n.count(func(s *NodeStats) { s.Partials++ })
			n.log.Printf("partial", "cluster %s/%s: %s: partial outage, %s", n.Region(), n.ID(), j.server, describe(j))
		}
	case !j.partial && was && !committed: // a commit ended it already
		_, err = n.opts.Store.EndPartial(ctx, f, j.server, newest)
	}
	if !n.fencedOrFailed(f, "partial outage", err) {
		n.mu.Lock()
		n.partial[j.server] = j.partial
		n.mu.Unlock()
	}
}

// alert hands a committed transition to the poller's alerter.
func (n *Node) alert(v monitor.Verdict) {
	if n.opts.State != nil {
		if st, ok := n.opts.State(v.Server); ok {
			v.State = &st
		}
	}
	n.opts.Verdict(v)
	n.count(func(s *NodeStats) { s.Alerts++ })
}

// resend publishes again the delivery jobs of the alerts that were
// committed but never marked sent, because the worker that committed
// them died before it published the job, or could not reach NATS: each
// heartbeat, the node that now holds the server's shard publishes those
// older than three heartbeats (their job is done within one) under the
// same message id, so that a job still in the queue is not doubled, and
// the claim in PostgreSQL keeps one delivery should it be. It stops at
// the first failure to publish: NATS is down, and the next heartbeat
// tries again.
func (n *Node) resend(ctx context.Context) {
	unsent, err := n.opts.Store.Outbox(ctx, time.Now().Add(-3*n.Heartbeat()))
	if err != nil {
		n.log.Printf("outbox", "cluster %s/%s: %v", n.Region(), n.ID(), err)
		return
	}
	for _, e := range unsent {
		if !n.Owns(e.Server) {
			continue
		}
		fresh, err := n.enqueue(ctx, job{Server: e.Server, Seq: e.Seq})
		if err != nil {
			return
		}
		if fresh {
			n.log.Printf("resend", "cluster %s/%s: %s: the %s alert of transition %d was never delivered (its worker stopped, or NATS was down): its job is published again", n.Region(), n.ID(), e.Server, e.Kind, e.Seq)
			n.count(func(s *NodeStats) { s.Resent++ })
		}
	}
}

// describe says what each vantage point saw.
func describe(j judgment) string {
	var parts []string
	for _, r := range j.vantages {
		parts = append(parts, r+" "+j.views[r].State)
	}
	return fmt.Sprintf("%s (quorum %d)", strings.Join(parts, ", "), j.quorum)
}

// fencedOrFailed handles a write's error: a fenced write drops the shard
// at once. It reports whether there was an error.
func (n *Node) fencedOrFailed(f store.Fence, what string, err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, store.ErrFenced):
		n.count(func(s *NodeStats) { s.Fenced++ })
		n.drop(f.Shard, "fenced: "+what+" refused, a newer lease holds it")
	default:
		n.log.Printf("store", "cluster %s/%s: %s: %v", n.Region(), n.ID(), what, err)
	}
	return true
}

// refreshCommitted reads a server's committed verdict again, after
// another node committed one first.
func (n *Node) refreshCommitted(ctx context.Context, server string) {
	vs, err := n.opts.Store.Verdicts(ctx, server)
	if err != nil {
		n.log.Printf("store", "cluster %s/%s: %v", n.Region(), n.ID(), err)
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for name, v := range vs {
		n.committed[name] = v.State
	}
}

func (n *Node) count(f func(*NodeStats)) {
	n.mu.Lock()
	f(&n.nstats)
	n.mu.Unlock()
}

// NodeStats returns the node's counters.
func (n *Node) NodeStats() NodeStats {
	ws := n.Worker.Stats()
	n.mu.Lock()
	defer n.mu.Unlock()
	s := n.nstats
	s.Stats = ws
	return s
}

// Maintains reports whether this node rolls the fleet's history up and
// applies its retention (package poller's Maintainer): the holder of the
// maintenance lease of the first region, by name, that has workers. Two
// at once, while membership changes, only do the same idempotent work
// twice.
func (n *Node) Maintains() bool {
	regions := n.obs.regionList()
	first := len(regions) > 0 && regions[0] == n.Region()
	return first && n.HoldsMaintenance()
}

// LastSlot is the newest slot of server that an observation of this
// node's region names (package poller's Sharding).
func (n *Node) LastSlot(server string) time.Time {
	return n.obs.last(server, n.Region()).Slot
}

// Fence is the lease under which this node holds server's shard now: the
// zero Fence when it holds it not.
func (n *Node) Fence(server string) store.Fence {
	s := ShardOf(server)
	epoch, ok := n.Holds(s)
	if !ok {
		return store.Fence{}
	}
	return store.Fence{Region: n.Region(), Shard: s, Epoch: epoch}
}

// Fenced counts a write the store refused under f, and drops the shard
// unless this node holds it now under a newer lease.
func (n *Node) Fenced(f store.Fence) {
	n.count(func(s *NodeStats) { s.Fenced++ })
	if epoch, ok := n.Holds(f.Shard); ok && epoch == f.Epoch {
		n.drop(f.Shard, "fenced: samples refused, a newer lease holds it")
	}
}

// Views returns what each of a server's vantage points sees of it now,
// by region: the region's fresh observation, or unknown.
func (n *Node) Views(server string) []monitor.VantageView {
	n.mu.Lock()
	info, ok := n.servers[server]
	n.mu.Unlock()
	if !ok {
		return nil
	}
	return n.obs.vantageViews(server, info, time.Now())
}

// viewsOf turns observations into vantage views, in the order of
// regions.
func viewsOf(obs map[string]observation, regions []string) []monitor.VantageView {
	out := make([]monitor.VantageView, 0, len(regions))
	for _, r := range regions {
		o := obs[r]
		v := monitor.VantageView{Region: r, Status: monitor.StatusUnknown, At: o.At}
		switch o.State {
		case "up":
			v.Status, v.Ping = monitor.StatusUp, time.Duration(o.PingUS)*time.Microsecond
		case "down":
			v.Status = monitor.StatusDown
		}
		out = append(out, v)
	}
	return out
}

// Committed returns the verdict of a server this node knows committed:
// the one it committed, or found committed when it lost the
// compare-and-set ("" before it knows one).
func (n *Node) Committed(server string) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.committed[server]
}

// Regions lists the regions that have workers, as of the last heartbeat.
func (n *Node) Regions() []string { return n.obs.regionList() }
