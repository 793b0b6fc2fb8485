package poller

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/clustertest"
)

// testShard is a Sharding the test drives: which servers this process
// holds, and which slot its region last observed of each. It records
// every observation with its slot.
type testShard struct {
	mu       sync.Mutex
	owned    map[string]bool
	lastSlot map[string]time.Time
	polls    map[string][]slotPoll
	changed  chan struct{}
	fence    store.Fence   // the lease every poll is made under
	fenced   []store.Fence // the leases the store refused
}

type slotPoll struct {
	slot time.Time
	end  time.Time
}

func newTestShard() *testShard {
	return &testShard{owned: map[string]bool{}, lastSlot: map[string]time.Time{}, polls: map[string][]slotPoll{}, changed: make(chan struct{}, 1)}
}

func (s *testShard) Owns(server string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owned[server]
}

func (s *testShard) Observe(st monitor.ServerState, slot time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.polls[st.Name] = append(s.polls[st.Name], slotPoll{slot, st.LastPoll})
}

func (s *testShard) Changed() <-chan struct{} { return s.changed }

func (s *testShard) LastSlot(server string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastSlot[server]
}

// Fence is the test's lease: none by default, as a SQLite store refuses
// fences (a fleet shares PostgreSQL).
func (s *testShard) Fence(server string) store.Fence {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fence
}

func (s *testShard) Fenced(f store.Fence) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fenced = append(s.fenced, f)
}

// take makes this process hold server, whose region last observed
// lastSlot, and signals the change.
func (s *testShard) take(server string, lastSlot time.Time) {
	s.mu.Lock()
	s.owned[server], s.lastSlot[server] = true, lastSlot
	s.mu.Unlock()
	s.changed <- struct{}{}
}

func (s *testShard) pollsOf(server string) []slotPoll {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]slotPoll(nil), s.polls[server]...)
}

// TestSlotGrid checks the grid of a fleet's poll slots: a slot holds the
// time it is asked for, is an interval long, and is the same whatever
// time within it is asked; two servers' grids are offset by their
// names' phases.
func TestSlotGrid(t *testing.T) {
	iv := 10 * time.Second
	a := &serverRun{srv: monitor.Server{Name: "alpha", Interval: iv}}
	b := &serverRun{srv: monitor.Server{Name: "beta", Interval: iv}}
	now := time.Unix(1_800_000_000, 123_456_789)
	for _, r := range []*serverRun{a, b} {
		s := r.slotOf(now)
		if s.After(now) || now.Sub(s) >= iv {
			t.Errorf("%s: slot %v does not hold %v", r.srv.Name, s, now)
		}
		if got := r.slotOf(s); !got.Equal(s) {
			t.Errorf("%s: the slot of a slot's start %v is %v", r.srv.Name, s, got)
		}
		if got := r.slotOf(s.Add(iv - time.Nanosecond)); !got.Equal(s) {
			t.Errorf("%s: the slot of its last instant is %v, want %v", r.srv.Name, got, s)
		}
		if got := r.slotOf(s.Add(iv)); !got.Equal(s.Add(iv)) {
			t.Errorf("%s: the next slot starts at %v, want %v", r.srv.Name, got, s.Add(iv))
		}
	}
	if a.slotOf(now).Equal(b.slotOf(now)) {
		t.Errorf("alpha and beta share the phase %v: the names should spread the polls", a.slotOf(now))
	}
}

// TestFleetPollsOnSlots runs a poller in a fleet over real loopback:
// every poll of a server falls in a slot of its own, one after another,
// and a server taken over is polled in the first slot its region has not
// polled: at once when that is the current slot, at the next when the
// old owner polled the current one.
func TestFleetPollsOnSlots(t *testing.T) {
	fl := liveFleet(t, 3)
	cfg := loadConfig(t, "", fl.Addr(0).String(), fl.Addr(1).String(), fl.Addr(2).String())
	names := []string{cfg.Servers[0].Name, cfg.Servers[1].Name, cfg.Servers[2].Name}
	sh := newTestShard()
	sh.owned[names[0]] = true
	s := start(t, cfg, openStore(t), Options{Shard: sh})
	run := func(name string) *serverRun {
		s.svc.mu.Lock()
		defer s.svc.mu.Unlock()
		r := *s.svc.runs[name]
		return &r
	}
	waitPolls := func(name string, n int) []slotPoll {
		t.Helper()
		deadline := time.Now().Add(testutil.Bound)
		for time.Now().Before(deadline) {
			if p := sh.pollsOf(name); len(p) >= n {
				return p
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: fewer than %d polls within %v", name, n, testutil.Bound)
		return nil
	}

	// Held from the start: one poll per slot, each on the grid.
	polls := waitPolls(names[0], 4)
	r := run(names[0])
	for i, p := range polls {
		if !r.slotOf(p.slot).Equal(p.slot) {
			t.Errorf("poll %d's slot %v is off the grid", i, p.slot)
		}
		if i > 0 && !p.slot.After(polls[i-1].slot) {
			t.Errorf("polls %d and %d share or reverse their slots: %v, %v", i-1, i, polls[i-1].slot, p.slot)
		}
	}

	// A take-over at the start of a slot (a tenth of an interval in), so
	// that the poller sees it within that slot.
	takeAtSlotStart := func(r *serverRun, lastSlot func(cur time.Time) time.Time) time.Time {
		cur := r.slotOf(time.Now()).Add(r.srv.Interval)
		time.Sleep(time.Until(cur.Add(r.srv.Interval / 10)))
		sh.take(r.srv.Name, lastSlot(cur))
		return cur
	}

	// Taken over from an owner that polled the current slot: the first
	// poll is in the next one.
	r1 := run(names[1])
	cur := takeAtSlotStart(r1, func(cur time.Time) time.Time { return cur })
	if p := waitPolls(names[1], 1)[0]; !p.slot.Equal(cur.Add(r1.srv.Interval)) {
		t.Errorf("%s, handed over after its owner polled slot %v, was first polled in slot %v, want the next", names[1], cur, p.slot)
	}

	// Taken over from an owner that died slots ago: polled at once, in
	// the current slot.
	r2 := run(names[2])
	cur = takeAtSlotStart(r2, func(cur time.Time) time.Time { return cur.Add(-3 * r2.srv.Interval) })
	p := waitPolls(names[2], 1)[0]
	if !p.slot.Equal(cur) {
		t.Errorf("%s, orphaned three slots ago, was first polled in slot %v, want the current one, %v", names[2], p.slot, cur)
	}
	t.Logf("the orphan was polled %v into the slot of its take-over", p.end.Sub(cur).Round(time.Millisecond))
}

// TestPausedPastLease: a worker that lost a shard and took it again
// without its scheduler seeing the gap (paused past its lease: SIGSTOP,
// a frozen VM) wakes with a turn planned under the old lease. That turn
// is planned again, as a take-over: the slot another worker polled
// meanwhile is not polled twice. And a turn whose slot ended before it
// could run (the scheduler held up for a whole slot) is not polled late,
// under its ended slot.
func TestPausedPastLease(t *testing.T) {
	ctx := testutil.Context(t)
	st, shared := clustertest.Open(t, "")
	lease := store.Fence{Region: "eu", Shard: 7, Epoch: 1}
	if err := shared.TakeShard(ctx, lease); err != nil {
		t.Fatal(err)
	}
	fl := liveFleet(t, 1)
	cfg := loadConfig(t, "", fl.Addr(0).String())
	name := cfg.Servers[0].Name
	sh := newTestShard()
	sh.owned[name], sh.fence = true, lease
	s := start(t, cfg, st, Options{Shard: sh, Vantage: "eu"})
	s.svc.mu.Lock()
	r := *s.svc.runs[name]
	s.svc.mu.Unlock()
	iv := r.srv.Interval
	waitPoll := func(after int) slotPoll {
		t.Helper()
		deadline := time.Now().Add(testutil.Bound)
		for time.Now().Before(deadline) {
			if p := sh.pollsOf(name); len(p) > after {
				return p[after]
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no poll %d within %v", after+1, testutil.Bound)
		return slotPoll{}
	}
	first := waitPoll(0)

	// Lost and taken again under epoch 2 within the slot after the
	// first poll's, and another worker polled the slot after that,
	// all before the planned turn there came.
	held := len(sh.pollsOf(name))
	next := first.slot.Add(iv)
	if wait := time.Until(next.Add(-iv / 4)); wait > 0 {
		time.Sleep(wait)
	}
	s.svc.mu.Lock() // the scheduler waits, as it would asleep
	next = r.slotOf(time.Now()).Add(iv)
	lease.Epoch = 2
	if err := shared.TakeShard(ctx, lease); err != nil {
		t.Fatal(err)
	}
	sh.mu.Lock()
	sh.fence, sh.lastSlot[name] = lease, next
	sh.mu.Unlock()
	time.Sleep(time.Until(next.Add(iv / 10)))
	s.svc.mu.Unlock()
	p := waitPoll(held)
	if !p.slot.After(next) {
		t.Errorf("under a new lease, the turn planned under the old one was polled in slot %v, which the region had polled", p.slot)
	}

	// Held up, from just after a poll, for two slots: the next turn's
	// slot ends before it can run; it is not polled under that slot,
	// but in the slot the poll is made in.
	waitPoll(len(sh.pollsOf(name)))
	held = len(sh.pollsOf(name))
	s.svc.mu.Lock()
	time.Sleep(2 * iv)
	woke := time.Now()
	s.svc.mu.Unlock()
	p = waitPoll(held)
	if p.slot.Add(iv).Before(woke) {
		t.Errorf("a turn held up past its slot was polled at %v under the ended slot %v", p.end.Format("15:04:05.000"), p.slot.Format("15:04:05.000"))
	}
}

// TestFencedSamples: a worker whose lease another worker took since
// (a newer epoch in PostgreSQL) writes none of the samples it polled
// under it; it counts them, and tells the fleet, which drops the shard.
func TestFencedSamples(t *testing.T) {
	ctx := testutil.Context(t)
	st, shared := clustertest.Open(t, "")
	stale := store.Fence{Region: "eu", Shard: 7, Epoch: 1}
	newer := stale
	newer.Epoch = 2
	if err := shared.TakeShard(ctx, newer); err != nil {
		t.Fatal(err)
	}
	fl := liveFleet(t, 1)
	cfg := loadConfig(t, "", fl.Addr(0).String())
	sh := newTestShard()
	sh.owned[cfg.Servers[0].Name], sh.fence = true, stale
	s := start(t, cfg, st, Options{Shard: sh, Vantage: "eu"})
	deadline := time.Now().Add(testutil.Bound)
	for s.svc.SamplesFenced() < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	s.stop(t)
	if n := s.svc.SamplesFenced(); n < 2 {
		t.Fatalf("%d samples fenced within %v, want the polls' (2 or more)", n, testutil.Bound)
	}
	sh.mu.Lock()
	fenced := slices.Clone(sh.fenced)
	sh.mu.Unlock()
	if len(fenced) == 0 || slices.ContainsFunc(fenced, func(f store.Fence) bool { return f != stale }) {
		t.Errorf("the fleet was told of %v, want the stale lease %v", fenced, stale)
	}
	var buf strings.Builder
	if err := store.Export(ctx, st, &buf, store.ExportOptions{Format: "jsonl", Level: store.LevelRaw}); err != nil {
		t.Fatal(err)
	}
	if buf.Len() != 0 {
		t.Errorf("samples polled under a stale lease were written:\n%s", buf.String())
	}
}
