package monitor

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/gsq-project/gsq/result"
)

// DefaultSessionGap is the least time a server's players may go unlisted
// before the monitor takes them as gone: see [Policy].
const DefaultSessionGap = 5 * time.Minute

// maxListed bounds the entries of one player list that the presence
// follows: a hostile server cannot make a poll cost more.
const maxListed = 1024

// Poll is the outcome of one poll of a server, as a [Tracker] takes it.
type Poll struct {
	Start time.Time // when it was sent
	End   time.Time // when it ended: the time of the state and events it makes
	// Result is what the server answered; Result.Err is set when the poll
	// failed. Nil is a poll the monitor canceled.
	Result *result.Result
}

// Policy is how a [Tracker] judges its server.
type Policy struct {
	// Health is the down rule.
	Health HealthPolicy
	// Players is whether the polls list the server's players and the
	// tracker follows who is on (the server's player_data and query).
	Players bool
	// SessionGap is how long the players may go unlisted (the polls
	// failing, short of the down rule) before they are taken as gone, at
	// the time they were last listed; zero means DefaultSessionGap, a
	// negative value never.
	SessionGap time.Duration
}

func (p Policy) sessionGap() time.Duration { return cmp.Or(p.SessionGap, DefaultSessionGap) }

// Policy returns how a Tracker judges server s: the config's down rule
// and grace, its player settings, and a session gap of three of its
// intervals, DefaultSessionGap at least.
func (c *Config) Policy(s *Server) Policy {
	return Policy{
		Health:     c.HealthPolicy(s),
		Players:    s.FollowsPlayers(),
		SessionGap: max(DefaultSessionGap, 3*s.Interval),
	}
}

// Tracker turns the polls of one server into its state and events: the
// one place that decides whether the server is up or down ([Health]),
// who is on it, and which map it runs. The poller, the tests and any
// other runner of polls call it; the page's live stream, the alert rules
// and the store's sessions all read its events, so they cannot disagree.
//
// It is pure: its clock is the polls' times, it starts no goroutine and
// does no I/O. It is not safe for concurrent use: a server's polls are
// observed in the order they end, by one goroutine at a time.
//
// # Presence
//
// Players are told apart by name only, so presence is a multiset of
// names: two players named "Player" are two, and when one leaves, one
// leave event says so. The first list the tracker sees is a baseline:
// its players are reported as Baseline joins, which open sessions but
// are no news. Then each list is compared with the one before: one join
// event for each name that gained a player, one leave event for each
// that lost one. A failed poll, or a successful one whose player section
// failed, changes nothing, until the server goes down or its players
// have gone unlisted for longer than the session gap: then everyone
// leaves, as a Baseline leave at the time they were last listed, and
// the next list is a baseline again. Turning the player data off (a
// reload) does the same.
type Tracker struct {
	policy Policy
	health *Health
	state  ServerState // the last state handed out: a value, never changed in place
	// players is the presence: how many players of each name are on; nil
	// while unknown (before a first list, after a down or a gap).
	players  map[string]int
	listedAt time.Time // when a poll last listed the players
	mapName  string    // the map last seen; "" before one
}

// NewTracker starts tracking server srv at start: pending, no players
// known, no map.
func NewTracker(srv *Server, p Policy, start time.Time) *Tracker {
	t := &Tracker{policy: p, health: NewHealth(p.Health, start)}
	t.state = ServerState{
		Name: srv.Name, Target: srv.Address, Protocol: srv.Protocol, Labels: srv.Labels, Interval: srv.Interval,
		Status: StatusPending, Since: start, Queries: map[string]uint64{},
	}
	return t
}

// Reconfigure applies a reload's settings for the server: its labels,
// interval and policy. The state is kept and the next poll is judged by
// the new policy. (A server pointed elsewhere, at another address or
// over another protocol, needs a new Tracker: what this one knows no
// longer holds.)
func (t *Tracker) Reconfigure(srv *Server, p Policy) {
	t.policy = p
	t.health.SetPolicy(p.Health)
	st := t.state
	st.Labels, st.Interval = srv.Labels, srv.Interval
	t.state = st
}

// State returns the server's state now.
func (t *Tracker) State() ServerState { return t.state }

// ResumePlayers takes the players a previous run of the monitor knew to
// be on the server (the store's open sessions) and when it last listed
// them, so that the next list is compared with them rather than taken as
// a baseline: a monitor that restarts within the session gap carries the
// sessions on (and one that restarts later, or no longer follows the
// server's players, ends them at the first poll). Call it before the
// first poll, or when a fleet's worker takes the server over from
// another (what this tracker knew of its players is then forgotten: the
// other worker's sessions are what count).
func (t *Tracker) ResumePlayers(names []string, listed time.Time) {
	t.players, t.listedAt = nil, time.Time{}
	if len(names) == 0 {
		return
	}
	t.players = make(map[string]int, len(names))
	for _, n := range names {
		t.players[n]++
	}
	t.listedAt = listed
}

// Observe takes a poll that ended and returns the server's new state and
// the events the poll made, in order: EventUp or EventDown, the leaves
// of a server gone down or unlisted, EventMap, the joins and leaves of
// the new list, and last EventPoll. Every event carries a pointer to the
// new state. A poll the monitor canceled itself (on shutdown or reload)
// says nothing about the server: it changes nothing and makes no event.
func (t *Tracker) Observe(p Poll) (ServerState, []Event) {
	rr := p.Result
	if rr == nil {
		rr = &result.Result{Err: &result.Error{Kind: result.KindCanceled}}
	}
	if rr.Err != nil && rr.Err.Kind == result.KindCanceled {
		return t.state, nil
	}
	at := p.End
	var evs []Event
	// A server that is up but does not answer the query (a Minecraft
	// server with status off) is up: its poll counts as a success.
	herr := rr.Err
	if rr.UpWithoutAnswer() {
		herr = nil
	}
	kind := t.health.Observe(at, herr)
	if kind != "" {
		evs = append(evs, Event{Kind: kind, Time: at})
	}
	st := t.state
	h := t.health
	st.Status, st.Since = h.Status(), h.Since()
	st.LastPoll, st.LastSuccess = at, h.LastSuccess()
	st.ConsecutiveFailures, st.FailingSince, st.LastError = h.ConsecutiveFailures(), h.FailingSince(), h.LastError()
	if herr == nil && rr.Err != nil {
		st.LastError = rr.Err // up, and why it answered nothing
	}
	st.QueryDuration = p.End.Sub(p.Start)
	st.Queries = maps.Clone(st.Queries)
	st.Queries[outcome(rr.Err)]++

	// Everyone leaves when the server is down, when its players went
	// unlisted too long, or when they are no longer followed.
	if t.players != nil && (st.Status == StatusDown || !t.policy.Players ||
		t.policy.sessionGap() > 0 && at.Sub(t.listedAt) > t.policy.sessionGap()) {
		evs = t.leaveAll(evs)
		st.Players = nil
	}
	if rr.Err == nil {
		st.Summary, st.Ping, st.PlayersHidden = rr.Summary, rr.Ping, rr.PlayersHidden()
		if m := rr.Summary.Map; m != nil && *m != "" {
			if t.mapName != "" && *m != t.mapName {
				evs = append(evs, Event{Kind: EventMap, Time: at, Detail: *m, Previous: t.mapName})
			}
			t.mapName = *m
		}
		if list, ok := listedPlayers(rr); ok && t.policy.Players {
			evs = t.presence(evs, list, at)
			t.listedAt = at
			st.Players, st.ListedAt = list, at
		}
	}
	if !t.policy.Players {
		st.Players = nil
	}
	evs = append(evs, Event{Kind: EventPoll, Time: at})
	t.state = st
	state := &st
	for i := range evs {
		evs[i].Server, evs[i].State = st.Name, state
	}
	return st, evs
}

// leaveAll makes everyone leave, at the time they were last listed, and
// forgets the presence: the next list is a baseline.
func (t *Tracker) leaveAll(evs []Event) []Event {
	for _, name := range slices.Sorted(maps.Keys(t.players)) {
		for range t.players[name] {
			evs = append(evs, Event{Kind: EventLeave, Time: t.listedAt, Detail: name, Baseline: true})
		}
	}
	t.players = nil
	return evs
}

// presence compares a list with the presence: a join event for each
// player a name gained, a leave event for each it lost; every player of
// a baseline list is a Baseline join.
func (t *Tracker) presence(evs []Event, list []Player, at time.Time) []Event {
	now := make(map[string]int, len(list))
	for i, p := range list {
		if i == maxListed {
			break
		}
		if p.Name != "" {
			now[p.Name]++
		}
	}
	baseline := t.players == nil
	for _, name := range slices.Sorted(maps.Keys(t.players)) {
		for range t.players[name] - now[name] {
			evs = append(evs, Event{Kind: EventLeave, Time: at, Detail: name})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(now)) {
		for range now[name] - t.players[name] {
			evs = append(evs, Event{Kind: EventJoin, Time: at, Detail: name, Baseline: baseline})
		}
	}
	t.players = now
	return evs
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

// listedPlayers is the players of a poll, and whether the poll has them
// (an empty list is a server with nobody on): the one place that reads a
// result's player list.
func listedPlayers(rr *result.Result) ([]Player, bool) {
	list := rr.PlayerList()
	return list, list != nil
}

// Snapshot is a Tracker's state as plain data, which encoding/json
// writes and reads back: what a worker taking over a server needs to
// carry on where another left off ([RestoreTracker]).
type Snapshot struct {
	Health HealthState
	State  ServerState
	// Players is the presence: players by name; nil while unknown.
	Players  map[string]int
	ListedAt time.Time
	Map      string
}

// Snapshot returns the tracker's state.
func (t *Tracker) Snapshot() Snapshot {
	return Snapshot{Health: t.health.State(), State: t.state, Players: maps.Clone(t.players), ListedAt: t.listedAt, Map: t.mapName}
}

// RestoreTracker returns a Tracker for srv that carries on from s: fed
// the same polls, it returns what the tracker s was taken from would
// have.
func RestoreTracker(srv *Server, p Policy, s Snapshot) *Tracker {
	t := &Tracker{policy: p, health: RestoreHealth(p.Health, s.Health), state: s.State,
		players: maps.Clone(s.Players), listedAt: s.ListedAt, mapName: s.Map}
	t.Reconfigure(srv, p)
	return t
}
