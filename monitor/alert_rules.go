package monitor

import (
	"time"
)

// The rule engine turns a Tracker's events, and nothing else, into
// alerts. It is pure: its clock is the time of each event, it starts no
// goroutine and sends nothing; the Alerter delivers what it returns.
//
// Every rule compares what is true now (the server's status, which side
// of a threshold its player count is on, its map, how many players of a
// name are on) with what it last announced. What the monitor learns
// rather than sees change is taken as announced without an alert: the
// first status, count and map, and the Baseline joins and leaves (a
// monitor that starts does not announce every server's map and
// players), except a server down at start-up, which is news. When the
// two differ and the rule's cooldown has passed since its last alert, it
// alerts; within the cooldown it waits, and the first poll after the
// cooldown alerts if the difference is still there ("delayed"). So a
// flapping value costs at most one alert per cooldown, and the last word
// is always the truth. An up alert answering a down alert is never held
// back: nobody should believe a server is down for five minutes longer
// than it was.

// Bounds on what the engine tracks per server.
const (
	maxTrackedPlayers = 4096 // names whose count a server's presence keeps
	maxPlayerTrackers = 1024 // players per join or leave rule
)

// ruleEngine tracks, per server, what each rule last announced.
type ruleEngine struct {
	servers map[string]*serverAlerts
}

// serverAlerts is a server's rules and what they announced.
type serverAlerts struct {
	srv    Server
	status statusTrack
	down   *Rule // the server's down and up rules, if any
	up     *Rule
	rules  []*ruleTrack // players, map, join, leave
	// present counts the players of each name on the server, as the
	// join and leave events say: the Tracker's presence, replayed.
	present map[string]int
	last    *ServerState // the last state seen, for alert details
}

// statusTrack is the down and up rules' state.
type statusTrack struct {
	announced Status    // StatusUp, StatusDown, or "" before the first
	lastDown  time.Time // when the last down alert went out
	downSince time.Time // when the announced down began
	held      bool      // a down is waiting for the cooldown to end
	quiet     bool      // the announced down was silenced: so is its up
}

// ruleTrack is a players, map, join or leave rule's state.
type ruleTrack struct {
	rule *Rule
	// players and map rules:
	known     bool
	announced string // the side ("high", "low") or the map
	side      string // players: the side now, hysteresis applied
	lastSent  time.Time
	held      bool
	// join and leave rules, per player name:
	players map[string]*presenceTrack
}

// presenceTrack is how many players of one name a join or leave rule
// announced as on the server.
type presenceTrack struct {
	announced int
	lastSent  time.Time
	held      bool
}

func newRuleEngine(cfg *Config) *ruleEngine {
	e := &ruleEngine{servers: make(map[string]*serverAlerts)}
	e.reload(cfg)
	return e
}

// reload takes a new config's rules. What a server's rules announced is
// kept for the servers and rules that are still there; a server pointed
// elsewhere starts afresh.
func (e *ruleEngine) reload(cfg *Config) {
	next := make(map[string]*serverAlerts, len(cfg.Servers))
	for i := range cfg.Servers {
		srv := cfg.Servers[i]
		sa := &serverAlerts{srv: srv, present: map[string]int{}}
		old := e.servers[srv.Name]
		if old != nil && old.srv.Address == srv.Address && old.srv.Protocol == srv.Protocol {
			sa.status, sa.present, sa.last = old.status, old.present, old.last
		} else {
			old = nil
		}
		for j := range srv.Alerts {
			r := &srv.Alerts[j]
			switch r.On {
			case AlertDown:
				sa.down = r
			case AlertUp:
				sa.up = r
			default:
				rt := &ruleTrack{rule: r}
				if old != nil {
					for _, ot := range old.rules {
						if ot.rule.key() == r.key() {
							*rt = *ot
							rt.rule = r
						}
					}
				}
				sa.rules = append(sa.rules, rt)
			}
		}
		next[srv.Name] = sa
	}
	e.servers = next
}

// handle returns the alerts an event raises, in order.
func (e *ruleEngine) handle(ev Event) []*Alert {
	sa := e.servers[ev.Server]
	if sa == nil {
		return nil
	}
	if ev.State != nil {
		sa.last = ev.State
	}
	var out []*Alert
	emit := func(a *Alert) { out = append(out, a) }
	switch ev.Kind {
	case EventDown:
		sa.observeStatus(ev, StatusDown, emit)
	case EventUp:
		sa.observeStatus(ev, StatusUp, emit)
	case EventMap:
		sa.observeMap(ev, emit)
	case EventJoin, EventLeave:
		sa.observePresence(ev, emit)
	case EventPoll:
		// A poll's state: the first status and count, and what the
		// cooldowns held back.
		st := ev.State
		if st == nil {
			break
		}
		if st.Status == StatusUp || st.Status == StatusDown {
			sa.observeStatus(ev, st.Status, emit)
		}
		if st.LastError == nil && st.Summary.Players != nil {
			sa.observeCount(ev, *st.Summary.Players, emit)
		}
		if m := st.Summary.Map; st.LastError == nil && m != nil && *m != "" {
			sa.recheckMap(ev, *m, emit)
		}
		sa.recheckPresence(ev, emit)
	}
	return out
}

// alert starts an alert of rule r about the server.
func (sa *serverAlerts) alert(ev Event, r *Rule) *Alert {
	a := &Alert{
		Version:  AlertVersion,
		Kind:     r.On,
		Server:   sa.srv.Name,
		Target:   sa.srv.Address,
		Protocol: sa.srv.Protocol,
		Labels:   sa.srv.Labels,
		Time:     ev.Time,
		rule:     r,
	}
	if sa.last != nil && !sa.last.LastSuccess.IsZero() {
		s := sa.last.Summary
		a.Summary = &s
	}
	return a
}

// cooled reports whether a rule whose last alert was at last may alert
// again at now.
func cooled(last, now time.Time, cooldown time.Duration) bool {
	return last.IsZero() || now.Sub(last) >= cooldown
}

func (sa *serverAlerts) observeStatus(ev Event, now Status, emit func(*Alert)) {
	t := &sa.status
	switch now {
	case StatusUp:
		t.held = false
		if t.announced == StatusDown && sa.up != nil {
			a := sa.alert(ev, sa.up)
			since := t.downSince
			a.Since = &since
			a.DowntimeSeconds = ev.Time.Sub(since).Seconds()
			emit(a)
		}
		t.announced = StatusUp
	case StatusDown:
		if t.announced == StatusDown {
			return
		}
		cooldown := time.Duration(0)
		if sa.down != nil {
			cooldown = sa.down.Cooldown
		} else if sa.up != nil {
			cooldown = sa.up.Cooldown
		}
		if !cooled(t.lastDown, ev.Time, cooldown) {
			t.held = true
			return
		}
		delayed := t.held
		t.announced, t.lastDown, t.held = StatusDown, ev.Time, false
		t.downSince = ev.Time
		if st := sa.last; st != nil && st.Status == StatusDown {
			// The last answer, or for a server that never answered, the
			// first poll that failed.
			if !st.LastSuccess.IsZero() {
				t.downSince = st.LastSuccess
			} else if !st.FailingSince.IsZero() {
				t.downSince = st.FailingSince
			}
		}
		if sa.down == nil {
			return
		}
		a := sa.downAlert(ev)
		a.Delayed = delayed
		emit(a)
	}
}

// downAlert is the server's down alert at ev: the failed polls and the
// last error as the last state says, since the announced down began.
func (sa *serverAlerts) downAlert(ev Event) *Alert {
	a := sa.alert(ev, sa.down)
	if st := sa.last; st != nil && st.Status == StatusDown {
		a.Failures, a.Error = st.ConsecutiveFailures, st.LastError
	}
	since := sa.status.downSince
	a.Since = &since
	return a
}

// observeCount checks the players rules against a count.
func (sa *serverAlerts) observeCount(ev Event, n int, emit func(*Alert)) {
	for _, rt := range sa.rules {
		r := rt.rule
		if r.On != AlertPlayers {
			continue
		}
		switch {
		case n >= r.Threshold:
			rt.side = "high"
		case n <= r.Threshold-r.Hysteresis || rt.side == "":
			rt.side = "low" // the first count below the threshold is low
		}
		if !rt.known {
			rt.known, rt.announced = true, rt.side
			continue
		}
		if rt.side == rt.announced {
			rt.held = false
			continue
		}
		dir := Rising
		if rt.side == "low" {
			dir = Falling
		}
		if r.Direction != Both && r.Direction != dir {
			rt.announced, rt.held = rt.side, false
			continue
		}
		if !cooled(rt.lastSent, ev.Time, r.Cooldown) {
			rt.held = true
			continue
		}
		a := sa.alert(ev, r)
		count := n
		a.Players, a.Threshold, a.Direction, a.Delayed = &count, r.Threshold, dir, rt.held
		rt.announced, rt.lastSent, rt.held = rt.side, ev.Time, false
		emit(a)
	}
}

// observeMap checks the map rules against a map change. A rule that has
// seen no map yet takes the one before the change as announced.
func (sa *serverAlerts) observeMap(ev Event, emit func(*Alert)) {
	for _, rt := range sa.rules {
		if rt.rule.On != AlertMap {
			continue
		}
		if !rt.known {
			rt.known, rt.announced = true, ev.Previous
		}
		sa.mapNow(ev, rt, ev.Detail, emit)
	}
}

// recheckMap sends, after its cooldown, a map change a rule held back,
// if the map is still another than the one announced.
func (sa *serverAlerts) recheckMap(ev Event, m string, emit func(*Alert)) {
	for _, rt := range sa.rules {
		if rt.rule.On == AlertMap && rt.known && (rt.held || m == rt.announced) {
			sa.mapNow(ev, rt, m, emit)
		}
	}
}

// mapNow compares the map now with what rule rt announced.
func (sa *serverAlerts) mapNow(ev Event, rt *ruleTrack, m string, emit func(*Alert)) {
	r := rt.rule
	switch {
	case m == rt.announced:
		rt.held = false
	case !cooled(rt.lastSent, ev.Time, r.Cooldown):
		rt.held = true
	default:
		a := sa.alert(ev, r)
		a.Map, a.PreviousMap, a.Delayed = m, rt.announced, rt.held
		rt.announced, rt.lastSent, rt.held = m, ev.Time, false
		emit(a)
	}
}

// observePresence counts a join or leave, and checks the join and leave
// rules against the count now.
func (sa *serverAlerts) observePresence(ev Event, emit func(*Alert)) {
	name := ev.Detail
	before, known := sa.present[name]
	if !known && ev.Kind == EventJoin && len(sa.present) >= maxTrackedPlayers {
		return
	}
	now := before + 1
	if ev.Kind == EventLeave {
		now = max(0, before-1)
	}
	if now == 0 {
		delete(sa.present, name)
	} else {
		sa.present[name] = now
	}
	for _, rt := range sa.rules {
		if !rt.rule.needsPlayers() || !rt.rule.Player.MatchString(name) {
			continue
		}
		p := rt.players[name]
		if p == nil {
			if len(rt.players) >= maxPlayerTrackers {
				continue
			}
			if rt.players == nil {
				rt.players = make(map[string]*presenceTrack)
			}
			p = &presenceTrack{announced: before}
			rt.players[name] = p
		}
		if ev.Baseline {
			p.announced, p.held = now, false // known, not news
			continue
		}
		sa.presenceNow(ev, rt, name, p, now, emit)
	}
}

// recheckPresence sends, after their cooldown, the joins and leaves a
// rule held back that are still true, and forgets the players there is
// nothing left to say about.
func (sa *serverAlerts) recheckPresence(ev Event, emit func(*Alert)) {
	for _, rt := range sa.rules {
		for name, p := range rt.players {
			if p.held {
				sa.presenceNow(ev, rt, name, p, sa.present[name], emit)
			}
			if !p.held && p.announced == 0 && sa.present[name] == 0 && cooled(p.lastSent, ev.Time, rt.rule.Cooldown) {
				delete(rt.players, name)
			}
		}
	}
}

// presenceNow compares how many players of a name are on with what rule
// rt announced: a join rule alerts when there are more, a leave rule
// when there are fewer, and each takes the other's news as announced.
func (sa *serverAlerts) presenceNow(ev Event, rt *ruleTrack, name string, p *presenceTrack, now int, emit func(*Alert)) {
	r := rt.rule
	more := now > p.announced
	switch {
	case now == p.announced:
		p.held = false
	case more != (r.On == AlertJoin):
		p.announced, p.held = now, false // the other rule's news
	case !cooled(p.lastSent, ev.Time, r.Cooldown):
		p.held = true
	default:
		a := sa.alert(ev, r)
		a.Player, a.Delayed = name, p.held
		p.announced, p.lastSent, p.held = now, ev.Time, false
		emit(a)
	}
}
