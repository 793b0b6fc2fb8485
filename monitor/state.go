package monitor

import (
	"time"

	"github.com/gsq-project/gsq/result"
)

// Status is a monitored server's state.
type Status string

// The states of a server.
const (
	// StatusPending is a server not yet polled, or failing within the
	// start-up grace period or the down threshold after start.
	StatusPending Status = "pending"
	StatusUp      Status = "up"
	StatusDown    Status = "down"
)

// ServerState is what the monitor knows of a server now. It is a value:
// a snapshot that the monitor does not change after handing it out.
type ServerState struct {
	Name     string
	Target   string
	Protocol string
	Labels   map[string]string

	Status Status
	Since  time.Time // when Status last changed

	// Interval is how often the server is polled.
	Interval time.Duration

	LastPoll            time.Time
	LastSuccess         time.Time
	ConsecutiveFailures int
	// FailingSince is when the current run of failed polls began; zero
	// after a success.
	FailingSince time.Time
	Ping         time.Duration // round trip of the last successful poll
	// Summary is the last successful poll's summary.
	Summary result.Summary
	// Players are who is on the server, as the last poll that listed them
	// said: the Tracker's presence. Nil when the server's players are not
	// followed (not asked for, or its player data is off), before the
	// first list, and while the server is down or its list is stale
	// (older than the session gap): nobody is known to be on it then.
	Players []Player
	// ListedAt is when a poll last listed the players; the poll that
	// made this state listed them when it equals LastPoll.
	ListedAt time.Time
	// PlayersHidden is set when the last successful poll said players
	// are on but the server hides who (Minecraft's hide-online-players):
	// the page shows the count and says so, rather than "nobody".
	PlayersHidden bool
	// Vantages is, in a fleet of monitors, what each vantage point
	// (region) sees of the server beside the verdict in Status
	// (config_cluster.go); nil for one process alone.
	Vantages []VantageView
	// LastError is why the last poll failed, nil after a success.
	LastError *result.Error
	// Queries counts polls by outcome: "ok", "timeout", "unreachable",
	// "error".
	Queries map[string]uint64
	// QueryDuration is how long the last poll took.
	QueryDuration time.Duration
	// Uptime24h is the fraction (0..1) of the server's polls over the last
	// 24 hours that were up, as cached by the poller (read from the store
	// every minute, so that listing thousands of servers reads no
	// database, and counting each poll in between); nil until known. The
	// polls of maintenance incidents are left out, as in the store's
	// Uptime, the one figure. The Tracker leaves it nil. The list and the
	// server page both show this figure.
	Uptime24h *float64
	// RecentPolls are the outcomes of the server's last polls since the
	// monitor started, oldest first, a byte each: '1' answered, '0'
	// failed; at most [RecentPolls] of them. The poller fills it, for the
	// list's bar of the last polls; the Tracker leaves it empty.
	RecentPolls string
}

// Player is a player online now, as every protocol's result lists it:
// name, score, and time on the server as the server reports it.
type Player = result.Player

// EventKind says what an Event is about.
type EventKind string

// The kinds of events.
const (
	EventPoll   EventKind = "poll"   // a poll ended; State is the new state
	EventDown   EventKind = "down"   // the server went down
	EventUp     EventKind = "up"     // the server came back up (or up for the first time)
	EventMap    EventKind = "map"    // the map changed; Detail is the new map, Previous the old
	EventJoin   EventKind = "join"   // a player joined; Detail is the name
	EventLeave  EventKind = "leave"  // a player left; Detail is the name
	EventConfig EventKind = "config" // the configuration was reloaded; Server is empty
)

// Event is a change the monitor saw: a Tracker's output, which the page's
// live stream, the alert rules and the store's sessions all read, so
// that they cannot disagree.
type Event struct {
	Kind   EventKind
	Server string
	// Time is when the change happened as far as the monitor can tell:
	// the poll that saw it, or for a player who left with their server
	// (down) or whose list went stale, the last poll that listed them.
	Time time.Time
	// Detail is the new map of EventMap, and the player's name of
	// EventJoin and EventLeave: one event per player, so that two
	// players of one name who join are two events.
	Detail string
	// Previous is the map before, for EventMap.
	Previous string
	// Baseline marks a join or leave that is what the monitor learned
	// rather than what the players did: the players a first list finds
	// (after the start, an outage, a stale list, or a reload that turned
	// player data on), and those a server loses when it goes down, its
	// list goes stale or its player data is turned off. Sessions open and
	// end on them; alert rules take them as known, not as news.
	Baseline bool
	// Seq numbers the events a poller publishes, from 1 with no gap, so
	// that a reader can tell it missed none; 0 in a Tracker's output.
	Seq uint64
	// Slot is, on a fleet's worker, the slot of the poll the event came
	// from (package poller's grid: one poll per server, slot and region);
	// zero for a single process.
	Slot time.Time
	// State is the server's state after the poll (nil for EventConfig);
	// every event of one poll shares it, and nobody changes it.
	State *ServerState
}

// RecentPolls is how many poll outcomes ServerState.RecentPolls keeps.
const RecentPolls = 30
