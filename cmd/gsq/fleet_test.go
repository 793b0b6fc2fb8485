// The fleet test pauses a worker with SIGSTOP and SIGCONT: Unix only.
//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor/cluster"
	"github.com/gsq-project/gsq/store/storetest"
)

// The process-level fleet test of issue 23 ("Proof"): the gsq binary
// (this test binary, run as gsq) as `gsq serve --fleet`, three workers
// in one region, two in another and an API node, against the real NATS
// JetStream and PostgreSQL.

const (
	// fleetTestN is the size of the simulated fleet: 3000, as issue 23
	// asks. The test reads each worker's polls from its live stream, which
	// cuts off a reader 1024 events behind; a worker that takes a share
	// back polls it within a second, so the reader subscribes again, and
	// a stream cut after the split voids the measure of the gaps.
	fleetTestN = 3000
	// fleetInterval is the poll interval: 10 s, as the issue says. It
	// cannot be shorter here, because a worker's lease (15 s) and
	// heartbeat (5 s) are fixed in the binary (monitor/cluster
	// DefaultLeaseTTL, DefaultHeartbeat) and are sized for a takeover
	// within two 10 s intervals.
	fleetInterval = 10 * time.Second
	fleetBase     = 20000
)

var (
	// fleetHost (with fleetBase) is where the fleet listens: a loopback
	// address of this test process's own, so that its ports clash with
	// nobody's, another run of the test at the same time included.
	fleetHost = fmt.Sprintf("127.77.%d.3", os.Getpid()%250+1)
	// stopAddr is the server that the test stops and restarts: a `gsq
	// serve` of its own (a fleet cannot stop one of its servers), on a
	// fixed port of another address of its own, so that it comes back at
	// the same address.
	stopAddr = fmt.Sprintf("127.78.%d.1:64310", os.Getpid()%250+1)
)

// fleetRegions names two regions of this run only, eu and us (the
// fleet's own database keeps its buckets apart anyway:
// gsq_<fleet>_members_<region> and so on), whose buckets are deleted
// when the test ends, and connects to NATS's JetStream.
func fleetRegions(t *testing.T, natsURL string) (eu, us string, js jetstream.JetStream) {
	t.Helper()
	run := fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)
	eu, us = "eu-"+run, "us-"+run
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	js, err = jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for name := range js.KeyValueStoreNames(ctx).Name() {
			if strings.HasSuffix(name, "_"+eu) || strings.HasSuffix(name, "_"+us) {
				js.DeleteKeyValue(ctx, name)
			}
		}
		nc.Close()
	})
	return eu, us, js
}

// child is a gsq process of the test that is not a monitor.
type child struct {
	cmd   *exec.Cmd
	first string // its first output line
	out   chan string
	done  chan struct{}
	mu    sync.Mutex
	tail  []string // its last output lines
}

// startChild runs gsq args and waits for its first output line.
func startChild(t *testing.T, args ...string) *child {
	t.Helper()
	c := &child{cmd: gsqCommand(t, args...), out: make(chan string, 64), done: make(chan struct{})}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdout, c.cmd.Stderr = w, w
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	pid := c.cmd.Process.Pid
	t.Cleanup(func() {
		select {
		case <-c.done: // it ended before the test did: say how
			c.mu.Lock()
			t.Logf("gsq %s ended before the test (%v); its last output:\n%s", strings.Join(args, " "), c.cmd.ProcessState, strings.Join(c.tail, "\n"))
			c.mu.Unlock()
		default:
		}
		syscall.Kill(pid, syscall.SIGKILL)
		<-c.done
	})
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			c.mu.Lock()
			c.tail = append(c.tail, sc.Text())
			if len(c.tail) > 40 {
				c.tail = c.tail[1:]
			}
			c.mu.Unlock()
			select {
			case c.out <- sc.Text():
			default:
			}
		}
		c.cmd.Wait()
	}()
	select {
	case c.first = <-c.out:
		t.Logf("gsq %s: %s", strings.Join(args, " "), c.first)
	case <-c.done:
		t.Fatalf("gsq %s exited at once", strings.Join(args, " "))
	case <-time.After(30 * time.Second):
		t.Fatalf("gsq %s printed nothing within 30 s", strings.Join(args, " "))
	}
	return c
}

// kill ends the child with SIGKILL and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	syscall.Kill(c.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		t.Fatal("a killed gsq did not exit within 10 s")
	}
}

// polls records the poll events of each worker, from its live stream.
type polls struct {
	mu   sync.Mutex
	by   map[string][]pollEvent // worker → its polls, in order
	lost map[string][]time.Time // worker → when its stream ended early: the monitor cut a reader that fell behind
}

// record reads worker's poll events until ctx ends, subscribing again
// when the monitor cuts the stream off (a reader more than 1024 events
// behind is cut off, which a loaded machine may cause).
func (p *polls) record(ctx context.Context, worker, url string) {
	go func() {
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, "GET", url+"api/v1/events?kind=poll", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					time.Sleep(100 * time.Millisecond)
				}
				continue
			}
			readPollEvents(resp.Body, func(ev pollEvent) bool {
				p.mu.Lock()
				p.by[worker] = append(p.by[worker], ev)
				p.mu.Unlock()
				return true
			})
			resp.Body.Close()
			if ctx.Err() == nil {
				p.mu.Lock()
				p.lost[worker] = append(p.lost[worker], time.Now())
				p.mu.Unlock()
			}
		}
	}()
}

// lostSince counts the streams of the workers named cut off after t.
func (p *polls) lostSince(t time.Time, workers ...string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, w := range workers {
		for _, at := range p.lost[w] {
			if at.After(t) {
				n++
			}
		}
	}
	return n
}

// times returns, per server, the times of the polls of the workers
// named, from since on, sorted.
func (p *polls) times(since time.Time, workers ...string) map[string][]time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string][]time.Time{}
	for _, w := range workers {
		for _, ev := range p.by[w] {
			if !ev.Time.Before(since) {
				out[ev.Server] = append(out[ev.Server], ev.Time)
			}
		}
	}
	for _, ts := range out {
		slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	}
	return out
}

// events returns the poll events worker reported, in order.
func (p *polls) events(worker string) []pollEvent {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.by[worker])
}

// serverSlot is a poll slot of a server.
type serverSlot struct {
	server string
	slot   time.Time
}

// slots returns, per server and slot, the workers named that polled it
// from since on: one each, when no two owners polled one slot.
func (p *polls) slots(since time.Time, workers ...string) map[serverSlot][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[serverSlot][]string{}
	for _, w := range workers {
		for _, ev := range p.by[w] {
			if !ev.Time.Before(since) {
				k := serverSlot{ev.Server, ev.Slot}
				out[k] = append(out[k], w+" at "+ev.Time.Format("15:04:05.000"))
			}
		}
	}
	return out
}

// webhookKinds counts the alerts in the receiver's bodies that name
// server, by their kind (down, up).
func webhookKinds(rc *testutil.Receiver, server string) (down, up int) {
	for _, b := range rc.Bodies() {
		if !bytes.Contains(b, []byte(server)) {
			continue
		}
		switch {
		case bytes.Contains(b, []byte("is down")) || bytes.Contains(b, []byte(`"down"`)):
			down++
		case bytes.Contains(b, []byte("is up")) || bytes.Contains(b, []byte(`"up"`)):
			up++
		}
	}
	return down, up
}

// fleetServices begins a test of gsq processes in a fleet, or skips it:
// under -short, since it runs for about runs, and under -race, where
// race-instrumented gsq processes on two cores measure the race
// detector, not the fleet (the in-process fleet tests of monitor/cluster
// run under -race). It returns NATS's URL, the DSN of a fresh PostgreSQL
// schema and the run's two regions (fleetRegions).
func fleetServices(t *testing.T, runs string) (natsURL, dsn, eu, us string, js jetstream.JetStream) {
	t.Helper()
	if testing.Short() {
		t.Skipf("%s runs for about %s", t.Name(), runs)
	}
	if testutil.Race {
		t.Skip("race-instrumented gsq processes on two cores measure the race detector, not the fleet; the in-process fleet tests of monitor/cluster run under -race")
	}
	natsURL = testutil.Service(t, "GSQ_TEST_NATS", "a NATS JetStream server")
	dsn = storetest.Postgres(t)
	eu, us, js = fleetRegions(t, natsURL)
	t.Cleanup(func() { dropDeliveries(dsn, js) })
	return natsURL, dsn, eu, us, js
}

// dropDeliveries deletes the fleet's stream of alert delivery jobs,
// gsq_<fleet>_deliveries, named after the fleet id its first worker wrote
// into the database.
func dropDeliveries(dsn string, js jetstream.JetStream) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return
	}
	defer db.Close()
	var fleet string
	if db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'fleet_id'`).Scan(&fleet) == nil {
		_ = js.DeleteStream(ctx, "gsq_"+fleet+"_deliveries")
	}
}

func TestFleetProcesses(t *testing.T) {
	natsURL, dsn, eu, us, js := fleetServices(t, "90 s")

	if fl := startChild(t, "serve", "--fleet", fmt.Sprint(fleetTestN), "--base-port", fmt.Sprint(fleetBase), "--fleet-host", fleetHost); !strings.Contains(fl.first, "simulated") {
		t.Fatalf("the fleet did not start: %s", fl.first)
	}
	lone := startChild(t, "serve", "--addr", stopAddr)
	var list strings.Builder
	for i := range fleetTestN {
		fmt.Fprintf(&list, "%s:%d\n", fleetHost, fleetBase+i)
	}
	fmt.Fprintln(&list, stopAddr)
	targets := testutil.WriteFile(t, filepath.Join(t.TempDir(), "targets.txt"), list.String())
	// The vantages are this run's two regions, named (unset, they are
	// every region of the fleet that has workers: the same here).
	config := testutil.WriteFile(t, filepath.Join(t.TempDir(), "monitor.yaml"), fmt.Sprintf("vantages: [%s, %s]\n", eu, us))
	hook := testutil.NewReceiver(t, nil)

	common := []string{"--config", config, "--db", dsn, "--nats", natsURL, "-f", targets, "--interval", fleetInterval.String(),
		"--down-after", fleetInterval.String(), "--webhook", hook.URL}
	workers := map[string]*monitorProc{}
	names := []string{"eu-a", "eu-b", "eu-c", "us-a", "us-b"}
	for _, name := range names {
		region := eu
		if strings.HasPrefix(name, "us") {
			region = us
		}
		workers[name] = startMonitor(t, append(slices.Clone(common), "--region", region, "--role", "worker")...)
	}
	api := startMonitor(t, "--db", dsn, "--nats", natsURL, "--role", "api", "--config", config, "-f", targets, "--interval", fleetInterval.String())
	for name, p := range workers {
		pid := p.cmd.Process.Pid
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT); syscall.Kill(pid, syscall.SIGKILL) })
		_ = name
	}
	t.Cleanup(func() { syscall.Kill(api.cmd.Process.Pid, syscall.SIGKILL) })

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rec := &polls{by: map[string][]pollEvent{}, lost: map[string][]time.Time{}}
	for _, name := range names {
		rec.record(ctx, name, workers[name].url)
	}
	euWorkers, usWorkers := []string{"eu-a", "eu-b", "eu-c"}, []string{"us-a", "us-b"}
	total := fleetTestN + 1

	// Settled: each region polls every server.
	start := time.Now()
	t.Cleanup(func() {
		if t.Failed() {
			for _, name := range names {
				t.Logf("%s polled %d servers; its log:\n%s", name, len(rec.times(start, name)), tail(workers[name].stderr(), 20))
			}
		}
	})
	awaitCond(t, 90*time.Second, "every server polled in both regions", func() bool {
		return len(rec.times(start, euWorkers...)) == total && len(rec.times(start, usWorkers...)) == total
	})
	settled := time.Now()
	t.Logf("both regions poll all %d servers %v after the workers started", total, settled.Sub(start).Round(time.Millisecond))
	// Each region's lease bucket, watched: who holds which shard when.
	leasesOf := map[string]*leaseLog{"eu": watchLeases(t, ctx, js, "_leases_"+eu), "us": watchLeases(t, ctx, js, "_leases_"+us)}
	for _, name := range names {
		t.Logf("%s polled %d servers", name, len(rec.times(start, name)))
	}

	// kill -9 an eu worker while the lone server stops: the server goes
	// down in both regions, one down alert; then it comes back, one up.
	victim := "eu-c"
	orphans := rec.times(settled.Add(-fleetInterval), victim)
	if len(orphans) == 0 {
		t.Fatal("eu-c polls nothing: the kill proves nothing")
	}
	lone.kill(t)
	stopped := time.Now()
	workers[victim].cmd.Process.Kill()
	killed := time.Now()
	awaitCond(t, 2*fleetInterval, "the killed worker's servers polled again", func() bool {
		by := rec.times(killed, "eu-a", "eu-b")
		for s := range orphans {
			if len(by[s]) == 0 {
				return false
			}
		}
		return true
	})
	t.Logf("the %d servers of the killed worker were polled again %v after the kill", len(orphans), time.Since(killed).Round(time.Millisecond))

	// Meanwhile, SIGSTOP a us worker past its lease; the other takes its
	// shards; SIGCONT: it polls nothing as the owner after the takeover.
	leases := leasesOf["us"]
	pausedID := workerID(t, workers["us-b"])
	paused := workers["us-b"]
	held := rec.times(time.Now().Add(-fleetInterval), "us-b")
	paused.cmd.Process.Signal(syscall.SIGSTOP)
	stoppedAt := time.Now()
	// Not a latency the issue sets (the kill's, above, is): the bound
	// is loose, for a loaded machine where one worker takes 500 shards.
	awaitCond(t, 4*fleetInterval, "the paused worker's servers polled by the other", func() bool {
		by := rec.times(stoppedAt, "us-a")
		for s := range held {
			if len(by[s]) == 0 {
				return false
			}
		}
		return true
	})
	t.Logf("the %d servers of the paused worker were polled by the other %v after SIGSTOP (at %s)", len(held), time.Since(stoppedAt).Round(time.Millisecond), stoppedAt.Format("15:04:05.000"))
	time.Sleep(time.Second)
	paused.cmd.Process.Signal(syscall.SIGCONT)
	resumed := time.Now()
	t.Logf("SIGCONT at %s", resumed.Format("15:04:05.000"))

	loneName := stopAddr
	awaitCond(t, 9*fleetInterval, "a down alert for the stopped server", func() bool { d, _ := webhookKinds(hook, loneName); return d > 0 })
	t.Logf("down alert %v after the server stopped", time.Since(stopped).Round(time.Millisecond))
	startChild(t, "serve", "--addr", stopAddr)
	restarted := time.Now()
	awaitCond(t, 6*fleetInterval, "an up alert for the restarted server", func() bool { _, u := webhookKinds(hook, loneName); return u > 0 })
	t.Logf("up alert %v after the server restarted", time.Since(restarted).Round(time.Millisecond))
	if wait := time.Until(resumed.Add(fleetInterval)); wait > 0 {
		time.Sleep(wait)
	}
	time.Sleep(time.Second) // the last events in flight
	end := time.Now()
	cancel()

	// Every poll of the paused worker after it woke was of a shard whose
	// lease it held then (its leases lapsed while it slept; it takes
	// shards again when the other hands them over). The lease watch
	// sees a Create a moment after it is made: 250 ms of grace.
	// A poll of a slot before SIGSTOP was in flight across the pause:
	// made as the owner, it ends after the wake (its sample's fate is the
	// fence's: kept, as polled before the takeover).
	// A poll is decided up to 50 ms before its slot (package poller's
	// batchSlack): one of a slot up to then was decided before SIGSTOP.
	decidedBefore := stoppedAt.Add(100 * time.Millisecond)
	stale, after := 0, 0
	for _, ev := range rec.events("us-b") {
		if ev.Time.Before(resumed) || ev.Slot.Before(decidedBefore) {
			continue
		}
		s, at := ev.Server, ev.Time
		after++
		if holder := leases.holder(cluster.ShardOf(s), at.Add(250*time.Millisecond)); holder != pausedID {
			if stale < 5 {
				t.Logf("stale: us-b (%s) polled %s (slot %v) at %v, when shard %d was %q's; its leases: %s", pausedID, s, ev.Slot.Format("15:04:05.000"), at.Format("15:04:05.000"), cluster.ShardOf(s), holder, leases.history(cluster.ShardOf(s)))
			}
			stale++
		}
	}
	t.Logf("after SIGCONT the paused worker polled %d times, %d of them of a shard it did not hold", after, stale)
	if stale > 0 {
		t.Errorf("the worker paused past its lease polled %d times as a stale owner after it woke", stale)
	}
	if after == 0 {
		t.Errorf("the paused worker polled nothing after it woke: it should take its share back")
	}

	// A stream cut off after the split lost events: the gaps below
	// would be the test's, not the fleet's.
	if n := rec.lostSince(settled, "eu-a", "eu-b", "us-a", "us-b"); n > 0 { // eu-c's ends with it
		t.Skipf("the checks above passed, but %d live streams were cut off after the split (the test's reader fell 1024 events behind, on a loaded machine): the gaps and duplicate polls are NOT measured in this run", n)
	}

	// No server missed more than two intervals in a region, over the
	// run (the killed and the paused workers' servers included), and no
	// region polled a server twice in one interval.
	for _, r := range []struct {
		name    string
		workers []string
	}{{"eu", euWorkers}, {"us", usWorkers}} {
		var worst time.Duration
		var worstServer string
		for s, ts := range rec.times(settled, r.workers...) {
			if s == loneName {
				continue
			}
			prev := settled
			for _, at := range append(ts, end) {
				if gap := at.Sub(prev); gap > worst {
					worst, worstServer = gap, s
				}
				prev = at
			}
		}
		// A server's polls fall in slots an interval apart (package poller's
		// grid), and a worker that takes a shard over polls the first slot
		// its region has not: two polls of one slot are two owners polling
		// it. Save two cases, the same one twice: the slots the killed
		// worker polled in its last two seconds, whose observations died
		// with it before they were published, and the slots the paused
		// worker polled in its last two seconds before SIGSTOP (or had
		// decided on before it, and made across the pause), whose
		// observations were frozen with it. The taker cannot know of
		// those polls and polls the slot again; the store keeps one
		// sample per slot either way.
		lost := map[serverSlot]bool{}
		for _, ev := range rec.events(victim) {
			if ev.Time.After(killed.Add(-2 * time.Second)) {
				lost[serverSlot{ev.Server, ev.Slot}] = true
			}
		}
		for _, ev := range rec.events("us-b") {
			if ev.Slot.Before(decidedBefore) && ev.Time.After(stoppedAt.Add(-2*time.Second)) {
				lost[serverSlot{ev.Server, ev.Slot}] = true
			}
		}
		// And, as the issue allows, an old and a new owner polling one
		// slot around a hand-over (the store keeps one row): a slot in
		// which the shard's lease changed hands. Two polls of a slot in
		// which it did not are two owners at once.
		dup, around := 0, 0
		for key, by := range rec.slots(settled, r.workers...) {
			if len(by) < 2 || lost[key] {
				continue
			}
			shard := cluster.ShardOf(key.server)
			if leasesOf[r.name].changedWithin(shard, key.slot.Add(-time.Second), key.slot.Add(fleetInterval)) {
				around++
				continue
			}
			dup++
			if dup <= 5 {
				t.Logf("region %s: %s polled twice in slot %s, by %v; its shard's leases: %s", r.name, key.server, key.slot.Format("15:04:05.000"), by, leasesOf[r.name].history(shard))
			}
		}
		t.Logf("region %s: the longest gap between two polls of a server was %v (%s); %d slots of a server polled twice around a hand-over, %d otherwise", r.name, worst.Round(time.Millisecond), worstServer, around, dup)
		if worst > 3*fleetInterval {
			t.Errorf("region %s: %s went %v without a poll: more than two intervals missed", r.name, worstServer, worst.Round(time.Millisecond))
		}
		if dup > 0 {
			t.Errorf("region %s: %d slots of a server polled twice (two owners polling one slot)", r.name, dup)
		}
	}

	// The samples in PostgreSQL, keyed (server, slot, vantage): every
	// poll a worker reported has its row, under its slot and its region.
	// The paused worker's polls are in: those it made before SIGSTOP are
	// written after SIGCONT, late but under a lease that was its own when
	// it polled (fencing refuses only what a stale owner polls after the
	// takeover). Left out: the killed worker's (a kill -9 loses the samples
	// not yet written, a second's worth) and the last seconds of the run
	// (not flushed when the test stops).
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	type sampleKey struct {
		server string
		slot   int64
		region string
	}
	stored := map[sampleKey]bool{}
	sqlRows, err := db.QueryContext(testutil.Context(t), `SELECT s.name, x.t, x.vantage FROM samples x JOIN servers s ON s.id = x.server WHERE x.t >= $1`, settled.Unix()-int64(fleetInterval/time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for sqlRows.Next() {
		var k sampleKey
		if err := sqlRows.Scan(&k.server, &k.slot, &k.region); err != nil {
			t.Fatal(err)
		}
		stored[k] = true
	}
	if err := sqlRows.Err(); err != nil {
		t.Fatal(err)
	}
	sqlRows.Close()
	polled, missing := 0, 0
	for _, w := range names {
		if w == victim {
			continue
		}
		region := eu
		if slices.Contains(usWorkers, w) {
			region = us
		}
		for _, ev := range rec.events(w) {
			if ev.Time.Before(settled) || ev.Time.After(end.Add(-3*time.Second)) {
				continue
			}
			polled++
			if k := (sampleKey{ev.Server, ev.Slot.Unix(), region}); !stored[k] {
				missing++
				if missing <= 5 {
					t.Logf("no sample of %s's poll of %s in slot %s (reported at %s)", w, ev.Server, ev.Slot.Format("15:04:05"), ev.Time.Format("15:04:05.000"))
				}
			}
		}
	}
	t.Logf("PostgreSQL: %d samples kept since the split; %d of the %d polls the workers reported have none", len(stored), missing, polled)
	if missing > 0 {
		t.Errorf("%d polls without their sample (server, slot, vantage) in PostgreSQL", missing)
	}
	// The fleet's servers never stopped: none may be judged down (a
	// worker that loses or takes shards must not page anyone). The
	// incidents the workers saw say why, when one was.
	var falseDowns int
	if err := db.QueryRow(`SELECT count(*) FROM server_state WHERE server <> $1 AND seq > 1`, loneName).Scan(&falseDowns); err != nil {
		t.Fatal(err)
	}
	if falseDowns > 0 {
		irows, err := db.Query(`SELECT s.name, i.cause, i.detail, i.started_at FROM incidents i JOIN servers s ON s.id = i.server
			WHERE s.name <> $1 ORDER BY i.started_at LIMIT 5`, loneName)
		if err == nil {
			for irows.Next() {
				var name, cause, msg string
				var at int64
				if irows.Scan(&name, &cause, &msg, &at) == nil {
					t.Logf("incident of %s at %s: %s: %s", name, time.Unix(at, 0).Format("15:04:05"), cause, msg)
				}
			}
			irows.Close()
		}
		t.Errorf("%d servers of the fleet, which never stopped, were judged down", falseDowns)
	}
	hd, hu := webhookKinds(hook, loneName)
	t.Logf("webhooks: %d requests; %d down and %d up for %s", hook.Count(), hd, hu, loneName)
	if hd != 1 || hu != 1 {
		for _, b := range hook.Bodies() {
			t.Logf("webhook: %s", b)
		}
		t.Errorf("%d down and %d up alerts for the stopped and restarted server, want 1 and 1", hd, hu)
	}
}

// leaseLog is what a watch of a region's lease bucket saw: per shard,
// who held its lease from when ("" after a hand-over or expiry purge).
type leaseLog struct {
	mu    sync.Mutex
	by    map[int][]leaseEntry
	begun time.Time
}

type leaseEntry struct {
	at     time.Time
	worker string
}

// watchLeases watches the lease bucket whose name ends in suffix (the
// fleet's: gsq_<fleet>_leases_<region>).
func watchLeases(t *testing.T, ctx context.Context, js jetstream.JetStream, suffix string) *leaseLog {
	t.Helper()
	bucket := ""
	for name := range js.KeyValueStoreNames(ctx).Name() {
		if strings.HasSuffix(name, suffix) {
			bucket = name
		}
	}
	kv, err := js.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.WatchAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l := &leaseLog{by: map[int][]leaseEntry{}, begun: time.Now()}
	ready := make(chan struct{})
	go func() {
		defer w.Stop()
		for e := range w.Updates() {
			if e == nil {
				close(ready)
				continue
			}
			shard, err := strconv.Atoi(strings.TrimPrefix(e.Key(), "l."))
			if err != nil {
				continue
			}
			var v struct{ Worker string }
			if e.Operation() == jetstream.KeyValuePut {
				json.Unmarshal(e.Value(), &v)
			}
			l.mu.Lock()
			l.by[shard] = append(l.by[shard], leaseEntry{at: time.Now(), worker: v.Worker})
			l.mu.Unlock()
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("the lease watch did not start within 10 s")
	}
	return l
}

// history lists the changes of shard's lease the watch saw, for a log.
func (l *leaseLog) history(shard int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, e := range l.by[shard] {
		who := e.worker
		if who == "" {
			who = "(released)"
		}
		fmt.Fprintf(&b, "%s %s; ", e.at.Format("15:04:05.000"), who)
	}
	return b.String()
}

// changedWithin reports whether shard's lease changed hands (to another
// worker, or released) between from and to, as far as the watch saw.
func (l *leaseLog) changedWithin(shard int, from, to time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	prev := ""
	for i, e := range l.by[shard] {
		if i > 0 && e.worker != prev && !e.at.Before(from) && !e.at.After(to) {
			return true
		}
		prev = e.worker
	}
	return false
}

// holder is who held shard's lease at t, as far as the watch saw.
func (l *leaseLog) holder(shard int, t time.Time) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	who := ""
	for _, e := range l.by[shard] {
		if e.at.After(t) {
			break
		}
		who = e.worker
	}
	return who
}

var workerLine = regexp.MustCompile(`worker (\S+) of region `)

// workerID reads a worker's ID from its log.
func workerID(t *testing.T, p *monitorProc) string {
	t.Helper()
	if m := workerLine.FindStringSubmatch(p.stderr()); m != nil {
		return m[1]
	}
	t.Fatalf("no worker ID in the log:\n%s", p.stderr())
	return ""
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
