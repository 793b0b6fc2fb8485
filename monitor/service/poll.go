package service

import (
	"container/heap"
	"context"
	"maps"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
	"github.com/gsq-project/gsq/store"
)

// serverRun is one monitored server: its settings, health, live state and
// schedule. The Service's mu guards it.
type serverRun struct {
	id     int // the generation polled: scan.Target.Line of its polls
	srv    monitor.Server
	health *monitor.Health
	// state is the live snapshot: replaced whole at each poll, never
	// changed in place, so that readers may keep it.
	state *monitor.ServerState

	next      time.Time // when the next poll is due
	index     int       // in the poll queue, -1 when not queued
	inFlight  bool
	pollStart time.Time

	// What the last polls saw, for the map and join/leave events.
	mapKnown bool
	lastMap  string
	present  map[string]bool // nil until the first player list
}

// wantsPlayers reports whether the server's polls ask for its players and
// keep their names.
func (r *serverRun) wantsPlayers() bool { return r.srv.PlayerData && r.srv.Query.Players() }

// sections is what a poll of r asks an A2S server.
func (r *serverRun) sections() a2s.Sections {
	s := a2s.SectionInfo
	if r.wantsPlayers() {
		s |= a2s.SectionPlayers
	}
	if r.srv.Query.Rules() {
		s |= a2s.SectionRules
	}
	return s
}

// addRun starts watching srv from now: pending, first polled at a random
// moment of its first interval (at most 10 s), so that a monitor started on many servers spreads
// its polls. s.mu is held, or s not shared yet.
func (s *Service) addRun(cfg *monitor.Config, srv *monitor.Server, now time.Time) {
	s.nextID++
	r := &serverRun{
		id:     s.nextID,
		srv:    *srv,
		health: monitor.NewHealth(cfg.HealthPolicy(srv), now),
		index:  -1,
	}
	r.state = &monitor.ServerState{
		Name: srv.Name, Target: srv.Address, Protocol: srv.Protocol, Labels: srv.Labels, Interval: srv.Interval,
		Status: monitor.StatusPending, Since: now, Queries: map[string]uint64{},
	}
	r.next = time.Now().Add(time.Duration(s.rng.Int64N(int64(min(srv.Interval, 10*time.Second)) + 1)))
	s.runs[srv.Name] = r
	s.byID[r.id] = r
	s.queue.push(r)
}

// jitter is an interval give or take 5%.
func (s *Service) jitter(d time.Duration) time.Duration {
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

// schedule sends each server to the scan session of its protocol when its
// poll is due, until ctx ends. A server whose last poll is still in flight
// when the next is due skips that turn.
func (s *Service) schedule(ctx context.Context) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	type due struct {
		protocol string
		t        scan.Target
	}
	var batch []due
	for {
		batch = batch[:0]
		now := time.Now()
		wait := time.Hour
		s.mu.Lock()
		for s.queue.Len() > 0 {
			r := s.queue.runs[0]
			if d := r.next.Sub(now); d > batchSlack {
				wait = d
				break
			}
			if !r.inFlight {
				r.inFlight, r.pollStart = true, now
				t := scan.ParseTarget(r.id, r.srv.Address, 0)
				t.Sections = r.sections()
				batch = append(batch, due{r.srv.Protocol, t})
			}
			r.next = r.next.Add(s.jitter(r.srv.Interval))
			if r.next.Before(now) { // fell behind: start again from now
				r.next = now.Add(s.jitter(r.srv.Interval))
			}
			s.queue.fix(r)
		}
		s.mu.Unlock()
		for _, d := range batch {
			feed, err := s.feed(d.protocol)
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
		}
	}
}

// failPoll ends a poll that could not be sent.
func (s *Service) failPoll(t scan.Target) {
	s.mu.Lock()
	if r := s.byID[t.Line]; r != nil {
		r.inFlight = false
	}
	s.mu.Unlock()
}

// session returns the scan session of protocol, opening it on first use.
func (s *Service) session(protocol string) (*scan.Session, error) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	return s.sessionLocked(protocol)
}

func (s *Service) sessionLocked(protocol string) (*scan.Session, error) {
	if ss := s.sessions[protocol]; ss != nil {
		return ss, nil
	}
	sc := s.opts.Scanner
	switch protocol {
	case monitor.ProtocolOGP:
		sc.Protocol = scan.OGP{}
	default:
		sc.Protocol = scan.A2S{}
	}
	ss, err := sc.Open()
	if err != nil {
		return nil, err
	}
	s.sessions[protocol] = ss
	return ss, nil
}

// feed returns the channel that feeds protocol's endless scan, starting
// that scan on first use.
func (s *Service) feed(protocol string) (chan scan.Target, error) {
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

func (s *Service) closeSessions() {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for p, ss := range s.sessions {
		ss.Close()
		delete(s.sessions, p)
	}
}

// observe takes the result of a poll: it updates the server's health and
// state, writes the sample, and publishes the events.
func (s *Service) observe(res *scan.Result) {
	at := s.opts.Now()
	var events [4]monitor.Event
	evs := events[:0]
	s.mu.Lock()
	r := s.byID[res.Target.Line]
	if r == nil {
		s.mu.Unlock()
		return // removed, or pointed elsewhere, while in flight
	}
	r.inFlight = false
	rr := res.Result
	if res.Status == scan.StatusCanceled || rr.Err != nil && rr.Err.Kind == result.KindCanceled {
		s.mu.Unlock()
		return // the monitor stopped: says nothing about the server
	}
	kind := r.health.Observe(at, rr.Err)
	st := *r.state
	st.Status, st.Since = r.health.Status(), r.health.Since()
	st.LastPoll, st.LastSuccess = at, r.health.LastSuccess()
	st.ConsecutiveFailures, st.LastError = r.health.ConsecutiveFailures(), r.health.LastError()
	st.QueryDuration = time.Since(r.pollStart)
	st.Queries = maps.Clone(st.Queries)
	st.Queries[outcome(rr.Err)]++
	smp := store.Sample{Server: r.srv.Name, Time: at, Up: rr.Err == nil}
	if rr.Err == nil {
		st.Summary, st.Ping = rr.Summary, rr.Ping
		fillSample(&smp, rr)
		st.Players = nil
		if r.wantsPlayers() {
			if list, ok := playerList(rr); ok {
				st.Players = list
				smp.PlayerList = seen(list)
				evs = r.presence(evs, list, at)
			}
		}
		if m := rr.Summary.Map; m != nil && *m != "" {
			if r.mapKnown && *m != r.lastMap {
				evs = append(evs, monitor.Event{Kind: monitor.EventMap, Server: r.srv.Name, Time: at, Detail: *m})
			}
			r.mapKnown, r.lastMap = true, *m
		}
	}
	r.state = &st
	s.mu.Unlock()

	s.w.add(smp)
	state := &st
	if kind != "" {
		s.publish(monitor.Event{Kind: kind, Server: st.Name, Time: at, State: state}, true)
	}
	for _, ev := range evs {
		ev.State = state
		s.publish(ev, false) // the alerter reads maps and players from the poll
	}
	s.publish(monitor.Event{Kind: monitor.EventPoll, Server: st.Name, Time: at, State: state}, true)
}

// outcome names a poll's outcome as ServerState.Queries counts it.
func outcome(err *result.Error) string {
	switch {
	case err == nil:
		return "ok"
	case err.Kind == result.KindTimeout:
		return "timeout"
	case err.Kind == result.KindUnreachable:
		return "unreachable"
	}
	return "error"
}

// fillSample copies a successful poll's figures into a sample; what the
// server did not report is -1 or "".
func fillSample(smp *store.Sample, rr *result.Result) {
	sum := &rr.Summary
	smp.Players, smp.MaxPlayers, smp.Bots = intOr(sum.Players), intOr(sum.MaxPlayers), intOr(sum.Bots)
	smp.Map, smp.Version, smp.Name = strOr(sum.Map), strOr(sum.Version), strOr(sum.Name)
	smp.Ping = rr.Ping
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func strOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// playerList is the players of a poll, and whether the poll has them.
func playerList(rr *result.Result) ([]monitor.Player, bool) {
	switch {
	case rr.A2S != nil && rr.A2S.Players != nil:
		in := rr.A2S.Players.List
		out := make([]monitor.Player, 0, len(in))
		for _, p := range in {
			d := time.Duration(max(0, float64(p.Duration)) * float64(time.Second))
			out = append(out, monitor.Player{Name: p.Name.UTF8(), Score: int64(p.Score), Duration: d})
		}
		return out, true
	case rr.OGP != nil && rr.OGP.Answer != nil && rr.SectionErr(result.SectionPlayers) == nil && rr.OGP.Answer.Players.Players != nil:
		in := rr.OGP.Answer.Players.Players
		out := make([]monitor.Player, 0, len(in))
		for _, p := range in {
			out = append(out, monitor.Player{Name: p.Name.UTF8(), Score: int64(p.Score), Duration: time.Duration(p.Time) * time.Second})
		}
		return out, true
	}
	return nil, false
}

func seen(list []monitor.Player) []store.PlayerSeen {
	out := make([]store.PlayerSeen, 0, len(list))
	for _, p := range list {
		out = append(out, store.PlayerSeen{Name: p.Name, Score: p.Score})
	}
	return out
}

// presence compares a poll's players with the last poll's, appending a
// join or leave event for each name that came or went. The first list
// is taken as it is: a monitor that starts does not announce everyone
// online as joining.
func (r *serverRun) presence(evs []monitor.Event, list []monitor.Player, at time.Time) []monitor.Event {
	now := make(map[string]bool, len(list))
	for _, p := range list {
		if p.Name != "" {
			now[p.Name] = true
		}
	}
	if r.present != nil {
		for name := range now {
			if !r.present[name] {
				evs = append(evs, monitor.Event{Kind: monitor.EventJoin, Server: r.srv.Name, Time: at, Detail: name})
			}
		}
		for name := range r.present {
			if !now[name] {
				evs = append(evs, monitor.Event{Kind: monitor.EventLeave, Server: r.srv.Name, Time: at, Detail: name})
			}
		}
	}
	r.present = now
	return evs
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
