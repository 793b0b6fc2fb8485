package poller

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/store"
)

// serverRun is one monitored server: its settings, tracker, live state
// and schedule. The Poller's mu guards it.
type serverRun struct {
	id      int // the generation polled: scan.Target.Tag of its polls
	srv     monitor.Server
	tracker *monitor.Tracker
	// state is the live snapshot: the tracker's last state with the
	// cached uptime, replaced whole at each poll, never changed in place,
	// so that readers may keep it.
	state  *monitor.ServerState
	uptime *float64 // the last 24 hours' uptime: polls up over polls
	// polls and upPolls are the last 24 hours' polls as read from the
	// store, plus those observed since: the list's and the server page's
	// uptime is current to the poll, not to the last read. counted is
	// false until the first read.
	polls, upPolls int64
	counted        bool
	failed         int64 // the polls counted since the last answer, all failed
	// maint is whether the server's open incident is maintenance: its
	// polls count neither up nor down, as in the store's uptime.
	maint  bool
	recent string // monitor.ServerState.RecentPolls

	next time.Time // when the next poll is due
	// slot and fence are, in a fleet, the slot of the poll in flight and
	// the lease it is made under (see [Sharding]).
	slot      time.Time
	fence     store.Fence
	index     int // in the poll queue, -1 when not queued
	inFlight  bool
	pollStart time.Time
	// owned is whether this process polled the server at its last turn:
	// always, without Options.Shard.
	owned bool
	// tenure is, in a fleet, the epoch of the lease under which the
	// server's turns were planned (claimTurn): a turn due under another
	// lease (the shard was lost and taken again, as by a worker paused
	// past its lease) is planned again, never polled as planned.
	tenure uint64
}

// wantsPlayers reports whether the server's polls ask for its players and
// keep their names.
func (r *serverRun) wantsPlayers() bool { return r.srv.FollowsPlayers() }

// query is what a poll of r asks, in its protocol: the info, and the
// players and rules when the server's config asks for them and the
// protocol has them.
func (r *serverRun) query() (protocol.Query, error) {
	p, err := protocol.Lookup(r.srv.Protocol)
	if err != nil {
		return nil, err
	}
	sections := []result.Section{result.SectionInfo}
	if r.wantsPlayers() && slices.Contains(p.Sections, result.SectionPlayers) {
		sections = append(sections, result.SectionPlayers)
	}
	if r.srv.Query.Rules() && slices.Contains(p.Sections, result.SectionRules) {
		sections = append(sections, result.SectionRules)
	}
	return p.Prepare(protocol.Settings{Sections: sections})
}

// addRun starts watching srv from now: pending, first polled at its
// first turn (firstTurn). s.mu is held, or s not shared yet.
func (s *Poller) addRun(cfg *monitor.Config, srv *monitor.Server, now time.Time) *serverRun {
	s.nextID++
	r := &serverRun{
		id:      s.nextID,
		srv:     *srv,
		tracker: monitor.NewTracker(srv, cfg.Policy(srv), now),
		index:   -1,
	}
	st := r.tracker.State()
	r.state = &st
	r.next = s.firstTurn(r, now)
	s.runs[srv.Name] = r
	s.byID[r.id] = r
	s.queue.push(r)
	return r
}

// jitter is an interval give or take 5%.
func (s *Poller) jitter(d time.Duration) time.Duration {
	j := int64(d / 20)
	if j <= 0 {
		return d
	}
	return d - time.Duration(j) + time.Duration(s.rng.Int64N(2*j+1))
}

// batchSlack is how early a poll may start so that it joins a batch: the
// scheduler wakes at most about 1/batchSlack times a second, whatever the
// number of servers, instead of once per poll (10,000 servers every 30 s
// would wake it 333 times a second). It is far below the jitter of an
// interval of a second or more.
const batchSlack = 50 * time.Millisecond

// staleBatch is how long a batch of due polls may wait to be sent
// before, in a fleet, each is checked again against the leases held: far
// below a lease's length, far above a normal batch's sending.
const staleBatch = time.Second

// schedule sends each server to the scan session of its protocol when its
// poll is due, until ctx ends. A server whose last poll is still in flight
// when the next is due skips that turn.
func (s *Poller) schedule(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	type due struct {
		protocol string
		server   string
		t        scan.Target
		err      error // the poll could not be made
	}
	var batch []due
	for {
		batch = batch[:0]
		wait := time.Hour
		s.mu.Lock()
		now := time.Now() // after the lock, which may have been waited for
		for s.queue.Len() > 0 {
			r := s.queue.runs[0]
			if d := r.next.Sub(now); d > batchSlack {
				wait = d
				break
			}
			r.owned = s.owns(r.srv.Name)
			if r.owned && !r.inFlight && s.replan(r, now) {
				s.queue.fix(r)
				continue
			}
			if !r.inFlight && r.owned {
				r.inFlight, r.pollStart = true, now
				if s.opts.Shard != nil {
					r.slot, r.fence = r.slotOf(r.next), s.opts.Shard.Fence(r.srv.Name)
				}
				t := r.srv.Target()
				t.Tag = uint64(r.id)
				q, err := r.query()
				t.Query = q
				batch = append(batch, due{r.srv.Protocol, r.srv.Name, t, err})
			}
			r.next = s.nextTurn(r, r.next)
			if r.next.Before(now) { // fell behind: start again from now
				r.next = s.nextTurn(r, now)
			}
			s.queue.fix(r)
		}
		s.mu.Unlock()
		formed := time.Now()
		for _, d := range batch {
			// A batch held up (by a full feed, or the process paused)
			// past staleBatch is checked again: the leases it was
			// formed under may have lapsed since, and another worker
			// polls their servers now.
			if s.opts.Shard != nil && time.Since(formed) > staleBatch && !s.owns(d.server) {
				s.failPoll(d.t)
				continue
			}
			feed, err := s.feed(d.protocol)
			if err == nil {
				err = d.err
			}
			if err != nil {
				s.log.Printf("session", "monitor: %v", err)
				s.failPoll(d.t)
				continue
			}
			select {
			case feed <- d.t:
			case <-ctx.Done():
				return
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-s.wake:
		case <-s.shardChanged():
			s.takeOver(ctx)
		}
	}
}

// failPoll ends a poll that could not be sent.
func (s *Poller) failPoll(t scan.Target) {
	s.mu.Lock()
	if r := s.byID[int(t.Tag)]; r != nil {
		r.inFlight = false
	}
	s.mu.Unlock()
}

// session returns the scan session of protocol, opening it on first use.
func (s *Poller) session(protocol string) (*scan.Session, error) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	return s.sessionLocked(protocol)
}

func (s *Poller) sessionLocked(name string) (*scan.Session, error) {
	if ss := s.sessions[name]; ss != nil {
		return ss, nil
	}
	p, err := protocol.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("monitor: %w", err)
	}
	sc := s.opts.Scanner
	if sc.Query, err = p.Prepare(protocol.Settings{}); err != nil {
		return nil, err
	}
	ss, err := sc.Open()
	if err != nil {
		return nil, err
	}
	s.sessions[name] = ss
	return ss, nil
}

// feed returns the channel that feeds protocol's endless scan, starting
// that scan on first use.
func (s *Poller) feed(protocol string) (chan scan.Target, error) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if ch := s.feeds[protocol]; ch != nil {
		return ch, nil
	}
	ss, err := s.sessionLocked(protocol)
	if err != nil {
		return nil, err
	}
	ch := make(chan scan.Target, 256)
	s.feeds[protocol] = ch
	ctx := s.runCtx
	s.runWG.Add(1)
	go func() {
		defer s.runWG.Done()
		ss.Run(ctx, scan.Channel(ctx, ch), s.observe)
	}()
	return ch, nil
}

func (s *Poller) closeSessions() {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for p, ss := range s.sessions {
		ss.Close()
		delete(s.sessions, p)
	}
}

// observe takes the result of a poll: its server's tracker makes the new
// state and the events, the sample goes to the store, and the events to
// the subscribers and the alerter.
func (s *Poller) observe(res *scan.Outcome) {
	at := time.Now()
	s.mu.Lock()
	r := s.byID[int(res.Target.Tag)]
	if r == nil {
		s.mu.Unlock()
		return // removed, or pointed elsewhere, while in flight
	}
	r.inFlight = false
	if res.Status == scan.StatusCanceled {
		s.mu.Unlock()
		return // the monitor stopped: says nothing about the server
	}
	st, evs := r.tracker.Observe(monitor.Poll{Start: r.pollStart, End: at, Result: res.Result})
	if evs == nil {
		s.mu.Unlock()
		return // canceled: nothing happened
	}
	r.countPoll(&st, evs, s.opts.Maintenance)
	maint, slot, fence := r.maint, r.slot, r.fence
	r.recent = recentPolls(r.recent, st.LastError == nil)
	st.Uptime24h, st.RecentPolls = r.uptime, r.recent
	r.state = &st
	for i := range evs {
		evs[i].State, evs[i].Slot = r.state, r.slot
	}
	s.mu.Unlock()

	smp := sample(&st, evs)
	smp.Vantage, smp.Slot, smp.Fence = s.opts.Vantage, slot, fence
	if smp.Outage != nil {
		smp.Outage.Maintenance = maint
	}
	s.w.add(smp)
	if s.opts.Shard != nil {
		s.opts.Shard.Observe(st, slot)
	}
	s.publish(evs...)
}

// pollQueue is the servers by the time of their next poll: a min-heap.
type pollQueue struct{ runs []*serverRun }

func (q *pollQueue) Len() int           { return len(q.runs) }
func (q *pollQueue) Less(i, j int) bool { return q.runs[i].next.Before(q.runs[j].next) }
func (q *pollQueue) Swap(i, j int) {
	q.runs[i], q.runs[j] = q.runs[j], q.runs[i]
	q.runs[i].index, q.runs[j].index = i, j
}
func (q *pollQueue) Push(x any) {
	r := x.(*serverRun)
	r.index = len(q.runs)
	q.runs = append(q.runs, r)
}
func (q *pollQueue) Pop() any {
	r := q.runs[len(q.runs)-1]
	q.runs[len(q.runs)-1] = nil
	q.runs = q.runs[:len(q.runs)-1]
	r.index = -1
	return r
}

func (q *pollQueue) push(r *serverRun) { heap.Push(q, r) }
func (q *pollQueue) fix(r *serverRun) {
	if r.index >= 0 {
		heap.Fix(q, r.index)
	}
}
func (q *pollQueue) remove(r *serverRun) {
	if r.index >= 0 {
		heap.Remove(q, r.index)
	}
}

// countPoll adds the poll that made st, with its events, to the 24
// hours' uptime. Polls that leave the window are taken out at the next
// read from the store (refreshUptime). As the store's uptime does, it
// leaves out the polls of a maintenance incident (one that began in a
// window of m): from the first failed poll of the run that took the
// server down, those counted already taken out again, to the answer
// that ends it.
func (r *serverRun) countPoll(st *monitor.ServerState, evs []monitor.Event, m *monitor.Maintenance) {
	for _, ev := range evs {
		switch ev.Kind {
		case monitor.EventDown:
			if _, r.maint = m.In(st.Name, st.Labels, outage(st).Since); r.maint {
				r.polls = max(r.upPolls, r.polls-r.failed)
			}
		case monitor.EventUp:
			r.maint = false
		}
	}
	if r.maint || !r.counted {
		r.failed = 0
		if r.maint && r.counted {
			r.setUptime()
		}
		return
	}
	r.polls++
	if st.LastError == nil {
		r.upPolls++
		r.failed = 0
	} else {
		r.failed++
	}
	r.setUptime()
}

// setUptime sets the uptime from the counts of polls, when there are
// any.
func (r *serverRun) setUptime() {
	if r.polls == 0 {
		return
	}
	f := float64(r.upPolls) / float64(r.polls)
	r.uptime = &f
}

// recentPolls adds a poll's outcome to the last polls' (a new string:
// states that hold the old one keep it).
func recentPolls(recent string, up bool) string {
	c := "0"
	if up {
		c = "1"
	}
	return recent[max(0, len(recent)-(monitor.RecentPolls-1)):] + c
}
