package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/internal/testutil"
)

// The tests below run against the real NATS server that .ci/services
// starts (GSQ_TEST_NATS), each in a region of its own whose buckets are
// deleted at its end.

var regionSeq atomic.Int64

// testRegion returns a fresh region name, its buckets deleted when the
// test ends.
func testRegion(t *testing.T) string {
	t.Helper()
	region := fmt.Sprintf("t%d_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6, regionSeq.Add(1))
	js := connect(t)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// Its buckets, of whatever fleet: gsq_[FLEET_]KIND_REGION.
		names := js.KeyValueStoreNames(ctx)
		var doomed []string
		for name := range names.Name() {
			if strings.HasSuffix(name, "_"+region) {
				doomed = append(doomed, name)
			}
		}
		for _, name := range doomed {
			_ = js.DeleteKeyValue(ctx, name)
		}
	})
	return region
}

// connect opens a connection of its own to the test NATS server, closed
// when the test ends.
func connect(t *testing.T) jetstream.JetStream {
	t.Helper()
	js, _ := connectConn(t)
	return js
}

func connectConn(t *testing.T) (jetstream.JetStream, *nats.Conn) {
	t.Helper()
	nc, err := nats.Connect(testutil.NATS(t), nats.Timeout(5*time.Second))
	if err != nil {
		t.Fatalf("connecting to NATS: %v", err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js, nc
}

// testHeartbeat and testTTL are short, so that a takeover takes about
// two seconds, and not shorter: a worker renews its 1,024 leases every
// heartbeat, and on a loaded machine a shorter one loses leases to its
// own slowness (four times as long under the race detector). The tests
// bound their waits by testutil.Bound, never by these.
var (
	testHeartbeat = raceScale() * 500 * time.Millisecond
	testTTL       = 3 * testHeartbeat
)

// raceScale stretches the heartbeat under the race detector, which slows
// the NATS client's work of renewing 1,024 leases manyfold.
func raceScale() time.Duration {
	if testutil.Race {
		return 4
	}
	return 1
}

// runner is a worker running in the test, with its own NATS connection.
type runner struct {
	w      *Worker
	nc     *nats.Conn
	cancel context.CancelFunc
	done   chan struct{}
}

func startWorker(t *testing.T, region, id string, opts Options) *runner {
	t.Helper()
	js, nc := connectConn(t)
	opts.Region, opts.ID = region, id
	opts.Heartbeat = cmpOr(opts.Heartbeat, testHeartbeat)
	opts.LeaseTTL = cmpOr(opts.LeaseTTL, testTTL)
	opts.Logf = t.Logf
	w, err := Join(testutil.Context(t), js, opts)
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &runner{w: w, nc: nc, cancel: cancel, done: make(chan struct{})}
	go func() { defer close(r.done); w.Run(ctx) }()
	t.Cleanup(r.stop)
	return r
}

func cmpOr(a, b time.Duration) time.Duration {
	if a != 0 {
		return a
	}
	return b
}

// stop ends the worker cleanly: it hands its shards over.
func (r *runner) stop() {
	r.cancel()
	<-r.done
}

// kill ends the worker as kill -9 would: it gives nothing back, its
// membership and leases expire.
func (r *runner) kill() {
	r.nc.Close()
	r.stop()
}

// waitFor polls cond until it holds, failing after testutil.Bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testutil.Bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", testutil.Bound, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// split reports whether the workers hold every shard exactly once
// between them, and each holds what rendezvous hashing gives it.
func split(rs ...*runner) (ok bool, held []int) {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.w.ID()
	}
	owners := make([]int, Shards)
	for _, r := range rs {
		h := r.w.Held()
		held = append(held, len(h))
		for _, s := range h {
			owners[s]++
			if Owner(s, ids) != r.w.ID() {
				return false, held
			}
		}
	}
	for _, n := range owners {
		if n != 1 {
			return false, held
		}
	}
	return true, held
}

// TestWorkersShareShards: three workers split the 1,024 shards evenly
// by rendezvous hashing; a fourth that joins takes its share from each;
// one killed loses its shards to the others within two lease lengths,
// and one stopped cleanly hands them over at once.
func TestWorkersShareShards(t *testing.T) {
	region := testRegion(t)
	a := startWorker(t, region, "a", Options{})
	b := startWorker(t, region, "b", Options{})
	c := startWorker(t, region, "c", Options{})
	waitFor(t, "three workers to split the shards", func() bool { ok, _ := split(a, b, c); return ok })
	_, held := split(a, b, c)
	for i, n := range held {
		if n < Shards/3*3/4 || n > Shards/3*5/4 {
			t.Errorf("worker %d holds %d shards, want about %d", i, n, Shards/3)
		}
	}
	before := map[*runner]int{a: len(a.w.Held()), b: len(b.w.Held()), c: len(c.w.Held())}

	d := startWorker(t, region, "d", Options{})
	waitFor(t, "a fourth worker to take its share", func() bool { ok, _ := split(a, b, c, d); return ok })
	for r, n := range before {
		if now := len(r.w.Held()); now >= n {
			t.Errorf("worker %s gave nothing to the new one: %d shards, then %d", r.w.ID(), n, now)
		}
	}

	killed := d.w.Held()
	d.kill()
	start := time.Now()
	waitFor(t, "the killed worker's shards to move", func() bool { ok, _ := split(a, b, c); return ok })
	t.Logf("the %d shards of a killed worker moved in %v (lease %v, heartbeat %v)", len(killed), time.Since(start), testTTL, testHeartbeat)
	if st := a.w.Stats(); st.Members != 3 {
		t.Errorf("a sees %d members after the kill, want 3", st.Members)
	}

	c.stop()
	waitFor(t, "a stopped worker's shards to be handed over", func() bool { ok, _ := split(a, b); return ok })
	if st := c.w.Stats(); st.HandedOver == 0 {
		t.Errorf("the stopped worker handed nothing over: %+v", st)
	}
}

// TestLeaseFencing: a lease taken by another worker while its holder did
// not renew it (paused) is lost by the holder at its next heartbeat, and
// the new lease's epoch is larger, so a write fenced on the old epoch is
// refused.
func TestLeaseFencing(t *testing.T) {
	region := testRegion(t)
	js := connect(t)
	var epochs [Shards]atomic.Uint64
	a := startWorker(t, region, "a", Options{OnAcquire: func(_ context.Context, s int, e uint64) error {
		epochs[s].Store(e)
		return nil
	}})
	waitFor(t, "a to hold every shard", func() bool { return len(a.w.Held()) == Shards })
	old, ok := a.w.Holds(7)
	if !ok || old == 0 || old != epochs[7].Load() {
		t.Fatalf("Holds(7) = %d, %v; OnAcquire saw %d", old, ok, epochs[7].Load())
	}
	// Another worker takes shard 7 behind a's back, as a takeover after
	// a's lease expired would.
	kv, err := js.KeyValue(testutil.Context(t), "gsq_leases_"+region)
	if err != nil {
		t.Fatal(err)
	}
	// a renews between our read and our delete now and then: try again.
	var newEpoch uint64
	waitFor(t, "the shard taken behind a's back", func() bool {
		e, err := kv.Get(testutil.Context(t), leaseKey(7))
		if err != nil {
			t.Fatal(err)
		}
		err = kv.Delete(testutil.Context(t), leaseKey(7), jetstream.LastRevision(e.Revision()))
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if newEpoch, err = kv.Create(testutil.Context(t), leaseKey(7), []byte(`{"worker":"intruder"}`)); err != nil {
			t.Fatal(err)
		}
		return true
	})
	if newEpoch <= old {
		t.Fatalf("the new epoch %d is not above the old %d", newEpoch, old)
	}
	waitFor(t, "a to drop the shard it lost", func() bool { _, ok := a.w.Holds(7); return !ok })
	if st := a.w.Stats(); st.Lost == 0 {
		t.Errorf("the loss is not counted: %+v", st)
	}
}

// TestNATSUnreachable: a worker whose NATS goes away keeps its shards
// until their leases would expire, then holds none and says so.
func TestNATSUnreachable(t *testing.T) {
	region := testRegion(t)
	a := startWorker(t, region, "a", Options{})
	waitFor(t, "a to hold every shard", func() bool { return len(a.w.Held()) == Shards })
	a.nc.Close() // every NATS call fails from now on
	waitFor(t, "a to stop holding shards it cannot renew", func() bool { return len(a.w.Held()) == 0 })
	st := a.w.Stats()
	if !st.NATSDown || st.NATSErrors == 0 {
		t.Errorf("NATS outage not reported: %+v", st)
	}
}

// TestNATSComesBack: a worker whose NATS server goes away stops holding
// its shards once their leases would have expired, and takes them again
// when the server returns. The test runs a nats-server of its own
// (Debian's package, which .ci/services installs), on a free loopback
// port, with JetStream in a directory of the test.
func TestNATSComesBack(t *testing.T) {
	testutil.NATS(t) // the same service, so the same rule for skipping
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("no nats-server binary on PATH")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	start := func() *exec.Cmd {
		cmd := exec.Command(bin, "-js", "-a", "127.0.0.1", "-p", strconv.Itoa(port), "-sd", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	srv := start()
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	var nc *nats.Conn
	waitFor(t, "the test's NATS server to listen", func() bool {
		nc, err = nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
		return err == nil
	})
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Join(testutil.Context(t), js, Options{Region: "back", ID: "a", Heartbeat: testHeartbeat, LeaseTTL: testTTL, Logf: t.Logf})
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })

	waitFor(t, "a to hold every shard", func() bool { return len(w.Held()) == Shards })
	srv.Process.Kill() // NATS goes away
	srv.Wait()
	waitFor(t, "a to stop holding the shards it cannot renew", func() bool { return len(w.Held()) == 0 })
	waitFor(t, "a to report the outage", func() bool { st := w.Stats(); return st.NATSDown && st.NATSErrors > 0 })
	start() // and comes back, with its JetStream store
	waitFor(t, "a to hold every shard again", func() bool { return len(w.Held()) == Shards })
	if st := w.Stats(); st.NATSDown {
		t.Errorf("NATS still reported down: %+v", st)
	}
}

// TestFleetsApart: two fleets with a region of the same name on one NATS
// server (a staging and a production monitor, or two tests) do not
// share: each fleet's one worker holds every shard, and sees only its
// own members. Without Options.Fleet their buckets were one.
func TestFleetsApart(t *testing.T) {
	t.Parallel()
	region := testRegion(t)
	a := startWorker(t, region, "a", Options{Fleet: "fleetA" + region})
	b := startWorker(t, region, "b", Options{Fleet: "fleetB" + region})
	waitFor(t, "each fleet's worker to hold every shard", func() bool {
		return len(a.w.Held()) == Shards && len(b.w.Held()) == Shards
	})
	if m := a.w.Members(); len(m) != 1 || m[0] != "a" {
		t.Errorf("fleet A's members: %v", m)
	}
	if _, err := Join(testutil.Context(t), connect(t), Options{Region: region, Fleet: "no spaces"}); err == nil {
		t.Error("a fleet name with a space was taken")
	}
}

// TestHeartbeatFor: a quarter of the shortest interval, between 1 s and
// the default, so that a lease and a heartbeat fit in one interval.
func TestHeartbeatFor(t *testing.T) {
	for _, c := range []struct{ interval, want time.Duration }{
		{time.Second, time.Second},
		{10 * time.Second, 2500 * time.Millisecond},
		{30 * time.Second, DefaultHeartbeat},
		{time.Hour, DefaultHeartbeat},
	} {
		if got := HeartbeatFor(c.interval); got != c.want {
			t.Errorf("HeartbeatFor(%v) = %v, want %v", c.interval, got, c.want)
		}
		if hb := HeartbeatFor(c.interval); c.interval >= 4*time.Second && 4*hb > c.interval {
			t.Errorf("HeartbeatFor(%v): a lease and a heartbeat (%v) outlast the interval", c.interval, 4*hb)
		}
	}
}
