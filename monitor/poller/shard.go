package poller

import (
	"context"
	"hash/fnv"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// Sharding shares the servers of a fleet between monitors: package
// monitor/cluster implements it over NATS JetStream. With Options.Shard
// set, a poller polls only the servers Owns says this process holds now
// (the others keep their last state), polls the servers it newly holds
// once Changed signals, in the first slot their region has not polled
// (takeOver, claim), hands each poll's new state to Observe (the vantage
// point's observation), and its Alerter sees no status from the polls: a
// server is down for the fleet only when its vantage points agree, which
// the fleet commits once and hands to one process ([Poller.Verdict]).
//
// A fleet's polls of a server fall on a grid of slots, the same for
// every worker (slotOf): a poll belongs to one slot, its sample is keyed
// by (server, slot, vantage) in the store, and the lease it was made
// under (Fence) fences its write. A worker that takes a shard over polls
// each of its servers in the first slot its region has not polled yet
// (LastSlot), so that a shard handed over in order is not polled twice
// in one slot, and the shard of a dead worker is polled at once.
type Sharding interface {
	Owns(server string) bool
	// Observe takes the state a poll made, and the poll's slot.
	Observe(st monitor.ServerState, slot time.Time)
	Changed() <-chan struct{}
	// LastSlot is the newest slot of server that this process's region
	// has an observation of: zero when it has none.
	LastSlot(server string) time.Time
	// Fence is the lease under which this process holds server's shard
	// now, which the write of the poll's sample carries.
	Fence(server string) store.Fence
	// Fenced tells that the store refused a write under f: another
	// worker took the shard since.
	Fenced(f store.Fence)
}

// Maintainer is a Sharding that says whether this process is the one of
// the fleet that rolls the shared history up and applies its retention:
// one process at a time does it, not every worker.
type Maintainer interface {
	Maintains() bool
}

// maintains reports whether this poller maintains the store: always
// alone, and in a fleet when its Sharding says so.
func (s *Poller) maintains() bool {
	m, ok := s.opts.Shard.(Maintainer)
	return !ok || m.Maintains()
}

// shardChanged is Sharding.Changed, or nil (never ready) without one.
func (s *Poller) shardChanged() <-chan struct{} {
	if s.opts.Shard == nil {
		return nil
	}
	return s.opts.Shard.Changed()
}

// resumeTimeout bounds the read of the sessions of the servers a
// take-over gained: the scheduler waits for it.
const resumeTimeout = 10 * time.Second

// takeOver carries on, for the servers this poller newly holds, the
// sessions and incidents their previous owner wrote (Store.Resume), so
// that they are neither opened twice nor left open, then schedules their
// first polls (claim). If the store cannot be read, the trackers keep
// what they knew, and the log says so.
func (s *Poller) takeOver(ctx context.Context) {
	s.mu.Lock()
	var gained []string
	for _, r := range s.runs {
		if !r.owned && !r.inFlight && s.owns(r.srv.Name) {
			gained = append(gained, r.srv.Name)
		}
	}
	s.mu.Unlock()
	var present map[string]store.Presence
	if len(gained) > 0 {
		rctx, cancel := context.WithTimeout(ctx, resumeTimeout)
		p, err := s.st.Resume(rctx, gained)
		cancel()
		if err != nil {
			s.log.Printf("resume", "monitor: taking %d servers over, their sessions could not be read: %v", len(gained), err)
		} else {
			present = p
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if present != nil {
		for _, name := range gained {
			if r := s.runs[name]; r != nil && !r.owned {
				p := present[name]
				r.tracker.ResumePlayers(p.Players, p.Listed)
			}
		}
	}
	s.claim(time.Now())
}

// claim schedules the first poll of each server this poller newly holds:
// in the current slot when its region has not polled that slot yet (the
// worker that held it died, or paused), else in the next one (it was
// handed over in order, and its old owner polled this slot). The polls of
// the current slot spread over a quarter of the interval at most, within
// the slot: a worker that takes a dead one's thousand servers over does
// not ask them all within a second (a burst that a loaded machine's
// socket buffers drop, and that reads as the servers timing out). s.mu is
// held.
func (s *Poller) claim(now time.Time) {
	for _, r := range s.runs {
		owns := s.owns(r.srv.Name)
		if owns && !r.owned && !r.inFlight {
			s.claimTurn(r, now)
			s.queue.fix(r)
		}
		r.owned = owns
	}
}

// claimTurn plans the first poll of r's server under the lease this
// poller holds now (claim's rule), and remembers the lease. s.mu is held.
func (s *Poller) claimTurn(r *serverRun, now time.Time) {
	cur := r.slotOf(now)
	if s.opts.Shard.LastSlot(r.srv.Name).Before(cur) {
		spread := max(0, min(r.srv.Interval/4, cur.Add(r.srv.Interval).Sub(now)-time.Millisecond))
		r.next = now.Add(time.Duration(s.rng.Int64N(int64(spread) + 1)))
	} else {
		r.next = cur.Add(r.srv.Interval)
	}
	r.tenure = s.opts.Shard.Fence(r.srv.Name).Epoch
}

// replan plans again, as a claim, the turn of r that is due now when it
// was planned under another lease than the one held now, or when its
// slot ended before it could be polled: a worker paused past its lease
// (SIGSTOP, a VM frozen, a swap storm) wakes with turns planned before
// the pause, of slots that other workers have polled since; polled as
// planned, they would be polled twice. It reports whether it did. s.mu
// is held; r's server is owned.
func (s *Poller) replan(r *serverRun, now time.Time) bool {
	if s.opts.Shard == nil {
		return false
	}
	epoch := s.opts.Shard.Fence(r.srv.Name).Epoch
	if r.tenure == 0 { // the first turn, planned at the start (firstTurn)
		r.tenure = epoch
	}
	if epoch == r.tenure && now.Before(r.slotOf(r.next).Add(r.srv.Interval)) {
		return false
	}
	s.claimTurn(r, now)
	return true
}

// slotOf is the start of the poll slot of r's server that holds t: the
// slots are the server's interval long, offset by a phase hashed from its
// name, so that every worker of a fleet cuts time into the same slots and
// the servers' polls spread over the interval.
func (r *serverRun) slotOf(t time.Time) time.Time {
	iv := int64(max(r.srv.Interval, time.Millisecond))
	h := fnv.New64a()
	h.Write([]byte(r.srv.Name))
	phase := int64(h.Sum64() % uint64(iv))
	return time.Unix(0, (t.UnixNano()-phase)/iv*iv+phase)
}

// nextTurn is when a poll of r's server started at start is followed by
// the next: alone, an interval later give or take 5%; in a fleet, at the
// start of the next slot at least half an interval after start (a poll
// made late in a slot, at a takeover, skips the slot right after).
func (s *Poller) nextTurn(r *serverRun, start time.Time) time.Time {
	if s.opts.Shard == nil {
		return start.Add(s.jitter(r.srv.Interval))
	}
	next := r.slotOf(start).Add(r.srv.Interval)
	if next.Sub(start) < r.srv.Interval/2 {
		next = next.Add(r.srv.Interval)
	}
	return next
}

// firstTurn is when a server first added at now is polled: alone, at a
// random moment of its first interval (at most 10 s), so that a monitor
// started on many servers spreads its polls; in a fleet, at the start of
// its next slot (the slots' phases spread the polls).
func (s *Poller) firstTurn(r *serverRun, now time.Time) time.Time {
	if s.opts.Shard == nil {
		return now.Add(time.Duration(s.rng.Int64N(int64(min(r.srv.Interval, 10*time.Second)) + 1)))
	}
	return r.slotOf(now).Add(r.srv.Interval)
}

// owns reports whether this poller polls server now.
func (s *Poller) owns(server string) bool {
	return s.opts.Shard == nil || s.opts.Shard.Owns(server)
}

// alertView is what the Alerter sees of an event: all of it alone, and
// in a fleet neither the down and up events nor the status of a poll.
func (s *Poller) alertView(ev monitor.Event) (monitor.Event, bool) {
	if s.opts.Shard == nil {
		return ev, true
	}
	switch ev.Kind {
	case monitor.EventDown, monitor.EventUp:
		return ev, false
	}
	if ev.State != nil && (ev.State.Status == monitor.StatusUp || ev.State.Status == monitor.StatusDown) {
		st := *ev.State
		st.Status = monitor.StatusPending
		ev.State = &st
	}
	return ev, true
}

// Verdict raises the alert of a down or up transition that the fleet
// committed and this process won (see [monitor.Alerter.HandleVerdict]).
func (s *Poller) Verdict(v monitor.Verdict) { s.alerter.HandleVerdict(v) }
