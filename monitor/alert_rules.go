package monitor

import (
	"time"

	"github.com/gsq-project/gsq/result"
)

// The rule engine turns the monitor's events into alerts. It is pure: its
// clock is the time of each event, it starts no goroutine and sends
// nothing; the Alerter delivers what it returns.
//
// Every rule compares what is true now (the server's status, which side
// of a threshold its player count is on, its map, whether a player is
// on) with what it last announced. The first value it sees is taken as
// announced without an alert (a monitor that starts does not announce
// every server's map), except a server down at start-up, which is news.
// When the two differ and the rule's cooldown has passed since its last
// alert, it alerts; within the cooldown it waits, and the first poll after
// the cooldown alerts if the difference is still there ("delayed"). So a
// flapping value costs at most one alert per cooldown, and the last word
// is always the truth. An up alert answering a down alert is never held
// back: nobody should believe a server is down for five minutes longer
// than it was.

// Bounds on what the engine tracks per server.
const (
	maxTrackedPlayers = 4096 // names in a server's player set
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
	// Players online, when a join or leave rule needs them; nil until the
	// first player list (the baseline).
	present map[string]bool
	last    *ServerState // the last state seen, for alert details
}

// statusTrack is the down and up rules' state.
type statusTrack struct {
	announced Status    // StatusUp, StatusDown, or "" before the first
	lastDown  time.Time // when the last down alert went out
	downSince time.Time // when the announced down began
	held      bool      // a down is waiting for the cooldown to end
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

// presenceTrack is one player's presence as a join or leave rule
// announced it.
type presenceTrack struct {
	announced bool // present, as far as the rule has said
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
		sa := &serverAlerts{srv: srv}
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
		if !sa.wantsPlayers() {
			sa.present = nil
		}
		next[srv.Name] = sa
	}
	e.servers = next
}

func (sa *serverAlerts) wantsPlayers() bool {
	for _, rt := range sa.rules {
		if rt.rule.needsPlayers() {
			return true
		}
	}
	return false
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
		sa.observeMap(ev, ev.Detail, emit)
	case EventJoin, EventLeave:
		if sa.present != nil && ev.Detail != "" {
			if ev.Kind == EventJoin && len(sa.present) < maxTrackedPlayers {
				sa.present[ev.Detail] = true
			} else if ev.Kind == EventLeave {
				delete(sa.present, ev.Detail)
			}
			sa.observePlayers(ev, emit)
		}
	case EventPoll:
		if ev.State == nil {
			break
		}
		st := ev.State
		if st.Status == StatusUp || st.Status == StatusDown {
			sa.observeStatus(ev, st.Status, emit)
		}
		if st.LastError != nil {
			break // a failed poll says nothing of players or map
		}
		if st.Summary.Players != nil {
			sa.observeCount(ev, *st.Summary.Players, emit)
		}
		if st.Summary.Map != nil {
			sa.observeMap(ev, *st.Summary.Map, emit)
		}
		if st.Players != nil && sa.wantsPlayers() {
			baseline := sa.present == nil
			sa.present = make(map[string]bool, len(st.Players))
			for _, p := range st.Players {
				if p.Name != "" && len(sa.present) < maxTrackedPlayers {
					sa.present[p.Name] = true
				}
			}
			if baseline {
				sa.takeBaseline()
			}
			sa.observePlayers(ev, emit)
		}
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
		var failures int
		var lastErr *result.Error
		if st := sa.last; st != nil && st.Status == StatusDown {
			failures, lastErr = st.ConsecutiveFailures, st.LastError
			if !st.LastSuccess.IsZero() {
				t.downSince = st.LastSuccess
			} else if !st.Since.IsZero() {
				t.downSince = st.Since
			}
		}
		if sa.down == nil {
			return
		}
		a := sa.alert(ev, sa.down)
		a.Failures, a.Error, a.Delayed = failures, lastErr, delayed
		since := t.downSince
		a.Since = &since
		emit(a)
	}
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

// observeMap checks the map rules against the map now.
func (sa *serverAlerts) observeMap(ev Event, m string, emit func(*Alert)) {
	for _, rt := range sa.rules {
		r := rt.rule
		if r.On != AlertMap || m == "" {
			continue
		}
		if !rt.known {
			rt.known, rt.announced = true, m
			continue
		}
		if m == rt.announced {
			rt.held = false
			continue
		}
		if !cooled(rt.lastSent, ev.Time, r.Cooldown) {
			rt.held = true
			continue
		}
		a := sa.alert(ev, r)
		a.Map, a.PreviousMap, a.Delayed = m, rt.announced, rt.held
		rt.announced, rt.lastSent, rt.held = m, ev.Time, false
		emit(a)
	}
}

// takeBaseline records the players of the first player list as announced,
// so that a monitor that starts does not report them all as joining.
func (sa *serverAlerts) takeBaseline() {
	for _, rt := range sa.rules {
		if !rt.rule.needsPlayers() {
			continue
		}
		rt.players = make(map[string]*presenceTrack)
		for name := range sa.present {
			if rt.rule.Player.MatchString(name) && len(rt.players) < maxPlayerTrackers {
				rt.players[name] = &presenceTrack{announced: true}
			}
		}
	}
}

// observePlayers checks the join and leave rules against the players
// online now.
func (sa *serverAlerts) observePlayers(ev Event, emit func(*Alert)) {
	if sa.present == nil {
		return // no baseline yet
	}
	for _, rt := range sa.rules {
		r := rt.rule
		if !r.needsPlayers() {
			continue
		}
		if rt.players == nil {
			rt.players = make(map[string]*presenceTrack)
		}
		// Players who joined: online, and not announced.
		for name := range sa.present {
			if p := rt.players[name]; (p == nil || !p.announced) && r.Player.MatchString(name) {
				if p == nil {
					if len(rt.players) >= maxPlayerTrackers {
						continue
					}
					p = &presenceTrack{}
					rt.players[name] = p
				}
				sa.presenceChanged(ev, rt, name, p, true, emit)
			}
		}
		// Players who left: announced, and gone.
		for name, p := range rt.players {
			if !sa.present[name] {
				if p.announced {
					sa.presenceChanged(ev, rt, name, p, false, emit)
				} else if cooled(p.lastSent, ev.Time, r.Cooldown) {
					delete(rt.players, name) // nothing left to say about them
				} else {
					p.held = false
				}
			}
		}
	}
}

// presenceChanged handles a player whose presence differs from what rule
// rt announced.
func (sa *serverAlerts) presenceChanged(ev Event, rt *ruleTrack, name string, p *presenceTrack, online bool, emit func(*Alert)) {
	r := rt.rule
	if online != (r.On == AlertJoin) {
		p.announced, p.held = online, false // the other rule's news
		return
	}
	if !cooled(p.lastSent, ev.Time, r.Cooldown) {
		p.held = true
		return
	}
	a := sa.alert(ev, r)
	a.Player, a.Delayed = name, p.held
	p.announced, p.lastSent, p.held = online, ev.Time, false
	emit(a)
}
