package cluster

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/internal/ratelog"
	"github.com/gsq-project/gsq/monitor"
)

// Defaults of Options. A lease lives three heartbeats, as NATS's own
// leader-election guidance asks (TTL >= 3 × heartbeat): one lost renewal,
// even two, does not lose the shard, and a worker that died loses its
// shards after at most LeaseTTL + Heartbeat = 20 s, within two of the
// default 30 s poll intervals (the scheduler then polls each server of
// the shard at its next turn, within one interval). Each worker writes
// one renewal per shard it holds per heartbeat: about 200 writes a
// second for the 1,024 shards, whatever the size of the fleet.
const (
	DefaultHeartbeat = 5 * time.Second
	DefaultLeaseTTL  = 3 * DefaultHeartbeat
	DefaultRegion    = "default"
)

// Why not a work-queue stream for the polls: a stream of "poll this
// server now" messages would hand each poll of a server to whichever
// worker fetches it, so the A2S challenge, the pacing per host, the
// player sessions and the down/up hysteresis of a server, which one
// process keeps in memory from one poll to the next, would have to make a
// round trip through a database on every poll; it would also need a
// scheduler, elected, publishing 2,500 messages a second at the goal, and
// a slow poll redelivered after its ack wait would be polled twice.
// Sticky ownership by leases keeps a server's state in one process and
// costs one write per shard per heartbeat. A work queue fits one-off jobs
// (a webhook delivery, a backfill), where any worker may do the job once:
// the alerts of committed transitions go through one (deliver.go).

// Options configure a Worker. Zero values take the defaults.
type Options struct {
	// Region is the worker's region (default DefaultRegion): workers of
	// one region share its shards; each region polls every server that
	// lists it among its vantages.
	Region string
	// ID names the worker within its region; the default is the host
	// name, the process id and a random suffix.
	ID string
	// Heartbeat is how often the worker renews its membership and its
	// leases, and tries to take the shards it should own.
	Heartbeat time.Duration
	// LeaseTTL is how long a lease (and a membership) lives without
	// renewal. It must be at least 3 heartbeats.
	LeaseTTL time.Duration
	// Replicas of the buckets (default 1; 3 in a production NATS cluster).
	Replicas int
	// Fleet names the fleet the worker belongs to: its buckets are
	// gsq_<fleet>_members_<region> and so on, so that two fleets (a
	// staging and a production one, or two tests) can share one NATS
	// without counting each other's regions. gsq monitor takes it from the
	// fleet's PostgreSQL database (store.Cluster.FleetID); empty, the
	// buckets are gsq_members_<region> and so on.
	Fleet string
	// OnAcquire runs after a shard's lease is taken and before the shard
	// counts as held, with the lease's epoch (the revision of the Create
	// that took it): the fencing token. An error gives the lease back.
	OnAcquire func(ctx context.Context, shard int, epoch uint64) error
	// OnGained runs after a heartbeat took leases, before the worker
	// signals the change (Changed), on a goroutine of its own: the
	// heartbeats, and the renewals they make, never wait for it. Runs do
	// not overlap; gains made during one run it once more after.
	OnGained func(ctx context.Context)
	// Logf receives what goes wrong, rate-limited.
	Logf func(format string, args ...any)
}

// lease is a held shard.
type lease struct {
	held     bool
	rev      uint64    // the last revision written: the next Update's expected one
	epoch    uint64    // the revision of the Create that took it: the fencing token
	deadline time.Time // past it without a renewal, the shard is no longer ours
}

// Worker is one member of a region: it keeps its membership alive, holds
// the leases of the shards that rendezvous hashing gives it, and hands the
// others over. Create it with [Join], run it with [Worker.Run]; its
// methods are safe for concurrent use.
type Worker struct {
	opts    Options
	members jetstream.KeyValue
	leases  jetstream.KeyValue
	log     *ratelog.Limiter
	started time.Time

	mu       sync.Mutex
	shards   [Shards + 1]lease // the shards', and the maintenance job's
	live     []string          // the region's members at the last heartbeat
	stats    Stats
	changed  chan struct{}
	gained   chan struct{} // a token: leases were taken (OnGained)
	natsDown bool
}

// Stats count what a worker did, for /metrics and the log.
type Stats struct {
	Held         int    // shards held now
	Acquired     uint64 // leases taken
	Lost         uint64 // leases lost: renewal refused (someone else holds it) or expired unrenewed
	HandedOver   uint64 // leases given back to their new rendezvous owner
	NATSErrors   uint64 // NATS operations that failed
	NATSDown     bool   // the last heartbeat could not reach NATS
	Members      int    // live members of the region
	LastRenewSec float64
}

// Join creates (or opens) the region's buckets and returns a worker that
// holds nothing yet.
func Join(ctx context.Context, js jetstream.JetStream, opts Options) (*Worker, error) {
	opts.Region = cmp.Or(opts.Region, DefaultRegion)
	if err := monitor.CheckRegion(opts.Region); err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	opts.Heartbeat = cmp.Or(opts.Heartbeat, DefaultHeartbeat)
	opts.LeaseTTL = cmp.Or(opts.LeaseTTL, 3*opts.Heartbeat)
	if opts.LeaseTTL < 3*opts.Heartbeat {
		return nil, fmt.Errorf("cluster: lease TTL %v is below 3 heartbeats (%v)", opts.LeaseTTL, opts.Heartbeat)
	}
	opts.Replicas = max(1, opts.Replicas)
	if opts.ID == "" {
		host, _ := os.Hostname()
		opts.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), strconv.FormatUint(uint64(time.Now().UnixNano())&0xffffff, 36))
	}
	opts.ID = keySafe(opts.ID)
	if strings.ContainsFunc(opts.Fleet, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}) {
		return nil, fmt.Errorf("cluster: fleet name %q: letters, digits, - and _ only", opts.Fleet)
	}
	w := &Worker{opts: opts, log: &ratelog.Limiter{Logf: opts.Logf}, started: time.Now(),
		changed: make(chan struct{}, 1), gained: make(chan struct{}, 1)}
	var err error
	if w.members, err = bucket(ctx, js, opts.bucket("members", opts.Region), opts.LeaseTTL, opts.Replicas); err != nil {
		return nil, err
	}
	if w.leases, err = bucket(ctx, js, opts.bucket("leases", opts.Region), opts.LeaseTTL, opts.Replicas); err != nil {
		return nil, err
	}
	return w, nil
}

// bucket names the fleet's bucket of a kind (members, leases, obs) for a
// region.
func (o *Options) bucket(kind, region string) string {
	if o.Fleet == "" {
		return "gsq_" + kind + "_" + region
	}
	return "gsq_" + o.Fleet + "_" + kind + "_" + region
}

// bucket creates or opens a KV bucket whose keys expire after ttl
// without a write: on NATS 2.9 the bucket's TTL (the stream's MaxAge) is
// the only expiry there is, so leases and memberships get buckets of
// their own whose TTL is the lease length.
func bucket(ctx context.Context, js jetstream.JetStream, name string, ttl time.Duration, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: name, History: 1, TTL: ttl, Storage: jetstream.FileStorage, Replicas: replicas,
	})
	if err != nil {
		return nil, fmt.Errorf("cluster: bucket %s: %w", name, err)
	}
	return kv, nil
}

// HeartbeatFor is the heartbeat of the workers of a fleet whose
// shortest poll interval is shortest: a quarter of it, between 1 s and
// DefaultHeartbeat, so that a dead worker's shards, lost after at most
// a lease and a heartbeat (four heartbeats), are polled again within two
// intervals even at a 10 s interval, with room for the first polls'
// spread. Every worker of a region must use the same: it sets the
// buckets' TTL.
func HeartbeatFor(shortest time.Duration) time.Duration {
	return min(max(shortest/4, time.Second), DefaultHeartbeat)
}

// keySafe maps s to the characters a KV key may hold.
func keySafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '=':
			return r
		}
		return '_'
	}, s)
}

// ID is the worker's id in its region.
func (w *Worker) ID() string { return w.opts.ID }

// Region is the worker's region.
func (w *Worker) Region() string { return w.opts.Region }

// Heartbeat is the worker's heartbeat.
func (w *Worker) Heartbeat() time.Duration { return w.opts.Heartbeat }

// Holds reports whether the worker holds shard now, with the lease's
// epoch (the fencing token of the writes made for the shard). A lease not
// renewed by its deadline is not held, even before NATS says so.
func (w *Worker) Holds(shard int) (epoch uint64, ok bool) {
	if shard < 0 || shard >= Shards {
		return 0, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	l := &w.shards[shard]
	if !l.held || !time.Now().Before(l.deadline) {
		return 0, false
	}
	return l.epoch, true
}

// maintenanceLease is the lease, past the shards, of the job that rolls
// the shared history up, applies its retention and its partitions: a
// singleton per region, taken and renewed as a shard's lease and given
// by rendezvous hashing to one member, so that it moves by itself when
// its holder dies and never rides on the polling of shard 0.
const maintenanceLease = Shards

// HoldsMaintenance reports whether the worker holds its region's
// maintenance lease now.
func (w *Worker) HoldsMaintenance() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := &w.shards[maintenanceLease]
	return l.held && time.Now().Before(l.deadline)
}

// Owns reports whether the worker polls server now: whether it holds
// the server's shard.
func (w *Worker) Owns(server string) bool {
	_, ok := w.Holds(ShardOf(server))
	return ok
}

// Held lists the shards the worker holds now.
func (w *Worker) Held() []int {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []int
	for s := range Shards {
		if l := &w.shards[s]; l.held && now.Before(l.deadline) {
			out = append(out, s)
		}
	}
	return out
}

// Members lists the region's live members as of the last heartbeat.
func (w *Worker) Members() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.live)
}

// Stats returns the worker's counters.
func (w *Worker) Stats() Stats {
	held := len(w.Held())
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Held, s.NATSDown, s.Members = held, w.natsDown, len(w.live)
	return s
}

// Changed is signalled (without blocking) whenever the held shards change.
func (w *Worker) Changed() <-chan struct{} { return w.changed }

// Run keeps the membership and the leases until ctx is done, then gives
// every lease back, so that the other workers take the shards at their
// next heartbeat rather than after the leases expire.
func (w *Worker) Run(ctx context.Context) error {
	t := time.NewTicker(w.opts.Heartbeat)
	defer t.Stop()
	if w.opts.OnGained != nil {
		go w.announceGains(ctx)
	}
	for {
		w.tick(ctx)
		select {
		case <-ctx.Done():
			w.leave()
			return nil
		case <-t.C:
		}
	}
}

// opCtx bounds one NATS operation: a NATS that does not answer must not
// hold the heartbeat past its period.
func (w *Worker) opCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, min(w.opts.Heartbeat, 2*time.Second))
}

type memberValue struct {
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
}

type leaseValue struct {
	Worker string `json:"worker"`
	Epoch  uint64 `json:"epoch,omitempty"`
}

// tick is one heartbeat: renew the membership, read the members, renew
// the leases held, hand over those another member should own, and try to
// take those this worker should own.
func (w *Worker) tick(ctx context.Context) {
	mv, _ := json.Marshal(memberValue{ID: w.opts.ID, Started: w.started})
	octx, cancel := w.opCtx(ctx)
	_, perr := w.members.Put(octx, "m."+w.opts.ID, mv)
	cancel()
	live, lerr := w.listMembers(ctx)
	down := perr != nil && lerr != nil
	if perr != nil || lerr != nil {
		w.natsError("members", errors.Join(perr, lerr))
	}
	w.mu.Lock()
	if w.natsDown != down {
		if down {
			w.log.Printf("nats", "cluster %s/%s: NATS unreachable: polling the %d shards held until their leases would expire", w.opts.Region, w.opts.ID, len(w.heldLocked()))
		} else {
			w.log.Printf("nats-back", "cluster %s/%s: NATS reachable again", w.opts.Region, w.opts.ID)
		}
		w.natsDown = down
	}
	if lerr == nil {
		w.live = live
	}
	members := w.live
	w.mu.Unlock()
	if !slices.Contains(members, w.opts.ID) {
		members = append(slices.Clone(members), w.opts.ID)
	}

	// Renewals first, so that acquiring many shards (each fenced in
	// PostgreSQL) never delays them past the leases' deadlines; then the
	// hand-overs, then the acquisitions, within one heartbeat. Each phase
	// runs its NATS calls side by side.
	var renew, release, take []int
	now := time.Now()
	w.mu.Lock()
	for s := range w.shards {
		l := &w.shards[s]
		want := Owner(s, members) == w.opts.ID
		switch {
		case l.held && !now.Before(l.deadline):
			*l = lease{}
			w.stats.Lost++
			w.log.Printf("lost", "cluster %s/%s: shard %d lost: expired: NATS did not take its renewal in time", w.opts.Region, w.opts.ID, s)
			release = append(release, -1) // marks a change
		case down:
			// NATS does not answer: renewals would each wait out their
			// timeout; the leases lapse at their deadlines (Holds).
		case l.held && !want:
			release = append(release, s)
		case l.held:
			renew = append(renew, s)
		case want:
			take = append(take, s)
		}
	}
	w.mu.Unlock()
	var lost, gained atomic.Int64
	parallel(ctx, renew, func(s int) {
		if !w.renew(ctx, s) {
			lost.Add(1)
		}
	})
	for _, s := range release {
		if s >= 0 {
			w.handOver(ctx, s)
		}
	}
	// Acquisitions start within one heartbeat; those that would start
	// later wait for the next (each runs to its end: a Create cut short
	// may have taken a lease nobody would know of until it expires).
	budget, cancel := context.WithTimeout(ctx, w.opts.Heartbeat)
	parallel(budget, take, func(s int) {
		if w.acquire(ctx, s) {
			gained.Add(1)
		}
	})
	cancel()
	if gained.Load() > 0 && w.opts.OnGained != nil {
		kick(w.gained) // announceGains signals the change after OnGained
		gained.Store(0)
	}
	if len(release) > 0 || lost.Load() > 0 || gained.Load() > 0 {
		kick(w.changed)
	}
}

// announceGains runs OnGained after each heartbeat that took leases,
// then signals the change, until ctx is done.
func (w *Worker) announceGains(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.gained:
		}
		w.opts.OnGained(ctx)
		kick(w.changed)
	}
}

// parallelism is how many NATS calls of a heartbeat's phase are in
// flight at once.
const parallelism = 32

// parallel runs f on each shard, parallelism at a time, until ctx ends.
func parallel(ctx context.Context, shards []int, f func(int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallelism)
	for _, s := range shards {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Go(func() {
			defer func() { <-sem }()
			f(s)
		})
	}
	wg.Wait()
}

func (w *Worker) heldLocked() []int {
	var out []int
	for s := range w.shards {
		if w.shards[s].held {
			out = append(out, s)
		}
	}
	return out
}

// listMembers reads the region's live members.
func (w *Worker) listMembers(ctx context.Context) ([]string, error) {
	octx, cancel := w.opCtx(ctx)
	defer cancel()
	keys, err := w.members.Keys(octx)
	if errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		if id, ok := strings.CutPrefix(k, "m."); ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

func leaseKey(shard int) string { return "l." + strconv.Itoa(shard) }

// renew extends a held lease; it reports whether the shard is still held.
func (w *Worker) renew(ctx context.Context, s int) bool {
	w.mu.Lock()
	l := w.shards[s]
	w.mu.Unlock()
	v, _ := json.Marshal(leaseValue{Worker: w.opts.ID, Epoch: l.epoch})
	sent := time.Now()
	octx, cancel := w.opCtx(ctx)
	rev, err := w.leases.Update(octx, leaseKey(s), v, l.rev)
	cancel()
	switch {
	case err == nil:
		w.mu.Lock()
		if w.shards[s].epoch == l.epoch {
			w.shards[s].rev, w.shards[s].deadline = rev, w.deadline(sent)
		}
		w.stats.LastRenewSec = float64(sent.Unix())
		w.mu.Unlock()
		return true
	case errors.Is(err, jetstream.ErrKeyRevisionMismatch), errors.Is(err, jetstream.ErrKeyNotFound):
		if w.adopt(ctx, s, l) {
			return true
		}
		w.drop(s, "taken over by another worker")
		return false
	default:
		w.natsError("renew", err) // held until its deadline
		return true
	}
}

// adopt handles a renewal refused for its revision: when the lease's
// last value is still this worker's, for the same epoch, an earlier
// renewal that timed out on the way back was in fact stored, and its
// revision is the one to renew next (the deadline stays: it extends at
// the next renewal). It reports whether the lease is still this
// worker's.
func (w *Worker) adopt(ctx context.Context, s int, l lease) bool {
	octx, cancel := w.opCtx(ctx)
	defer cancel()
	e, err := w.leases.Get(octx, leaseKey(s))
	if err != nil {
		return false
	}
	var v leaseValue
	if json.Unmarshal(e.Value(), &v) != nil || v.Worker != w.opts.ID || (v.Epoch != l.epoch && e.Revision() != l.epoch) {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.shards[s].epoch != l.epoch || !w.shards[s].held {
		return false
	}
	w.shards[s].rev = e.Revision()
	return true
}

// deadline is when a lease renewed at sent stops being ours: the server
// starts its TTL when it stores the write, after sent, so sent + TTL is
// never late; a tenth is kept as a margin for the poll in flight.
func (w *Worker) deadline(sent time.Time) time.Time {
	return sent.Add(w.opts.LeaseTTL - w.opts.LeaseTTL/10)
}

// acquire tries to take a shard; it reports whether it did.
func (w *Worker) acquire(ctx context.Context, s int) bool {
	v, _ := json.Marshal(leaseValue{Worker: w.opts.ID})
	sent := time.Now()
	octx, cancel := w.opCtx(ctx)
	rev, err := w.leases.Create(octx, leaseKey(s), v)
	cancel()
	if errors.Is(err, jetstream.ErrKeyExists) {
		return false // the previous owner hands it over, or its lease expires
	}
	if err != nil {
		w.natsError("acquire", err)
		return false
	}
	if w.opts.OnAcquire != nil && s != maintenanceLease {
		if err := w.opts.OnAcquire(ctx, s, rev); err != nil {
			w.log.Printf("fence", "cluster %s/%s: shard %d: taken but not fenced, given back: %v", w.opts.Region, w.opts.ID, s, err)
			octx, cancel := w.opCtx(ctx)
			_ = w.leases.Delete(octx, leaseKey(s), jetstream.LastRevision(rev))
			cancel()
			return false
		}
	}
	w.mu.Lock()
	w.shards[s] = lease{held: true, rev: rev, epoch: rev, deadline: w.deadline(sent)}
	w.stats.Acquired++
	w.mu.Unlock()
	return true
}

// handOver stops holding a shard another member should own, then deletes
// its lease on the revision this worker wrote last: a lease someone else
// took meanwhile is left alone.
func (w *Worker) handOver(ctx context.Context, s int) {
	w.mu.Lock()
	l := w.shards[s]
	if !l.held {
		w.mu.Unlock()
		return
	}
	w.shards[s] = lease{}
	w.stats.HandedOver++
	w.mu.Unlock()
	octx, cancel := w.opCtx(ctx)
	defer cancel()
	if err := w.leases.Delete(octx, leaseKey(s), jetstream.LastRevision(l.rev)); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		w.natsError("hand over", err) // it expires by itself
	}
}

// drop forgets a shard that is no longer this worker's.
func (w *Worker) drop(s int, why string) {
	w.mu.Lock()
	w.shards[s] = lease{}
	w.stats.Lost++
	w.mu.Unlock()
	w.log.Printf("lost", "cluster %s/%s: shard %d lost: %s", w.opts.Region, w.opts.ID, s, why)
}

func (w *Worker) natsError(op string, err error) {
	w.mu.Lock()
	w.stats.NATSErrors++
	w.mu.Unlock()
	w.log.Printf("nats-"+op, "cluster %s/%s: %s: %v", w.opts.Region, w.opts.ID, op, err)
}

// leave gives back every lease and the membership, with a few seconds
// at most for NATS to answer.
func (w *Worker) leave() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	w.mu.Lock()
	held := w.heldLocked()
	w.mu.Unlock()
	parallel(ctx, held, func(s int) { w.handOver(ctx, s) })
	_ = w.members.Delete(ctx, "m."+w.opts.ID)
}
