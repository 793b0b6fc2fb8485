// Package monitor watches game servers over time for `gsq monitor`: it
// polls them on the scan engine's shared sockets, each on its own schedule,
// decides when one is down (consecutive failures over a threshold, so one
// lost datagram is no flap), tracks who is playing, keeps history in a
// [store.Store], and raises alerts.
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
	Name     string            `json:"name"`
	Target   string            `json:"target"`
	Protocol string            `json:"protocol"`
	Labels   map[string]string `json:"labels,omitempty"`

	Status Status    `json:"status"`
	Since  time.Time `json:"since"` // when Status last changed

	// Interval is how often the server is polled.
	Interval time.Duration `json:"-"`

	LastPoll            time.Time     `json:"last_poll"`
	LastSuccess         time.Time     `json:"last_success"`
	ConsecutiveFailures int           `json:"consecutive_failures"`
	Ping                time.Duration `json:"-"` // round trip of the last successful poll
	// Summary is the last successful poll's summary.
	Summary result.Summary `json:"summary"`
	// Players are the players online at the last successful poll; nil
	// when players are not asked for or the server's player data is off.
	Players []Player `json:"players,omitempty"`
	// LastError is why the last poll failed, nil after a success.
	LastError *result.Error `json:"last_error,omitempty"`
	// Queries counts polls by outcome: "ok", "timeout", "unreachable",
	// "error".
	Queries map[string]uint64 `json:"queries"`
	// QueryDuration is how long the last poll took.
	QueryDuration time.Duration `json:"-"`
	// Uptime24h is the fraction (0..1) of the server's polls over the last
	// 24 hours that were up, as cached by the monitor (refreshed from the
	// store every few minutes, so that listing thousands of servers reads
	// no database); nil until known.
	Uptime24h *float64 `json:"uptime_24h,omitempty"`
}

// Player is a player online now.
type Player struct {
	Name     string        `json:"name"`
	Score    int64         `json:"score"`
	Duration time.Duration `json:"-"` // time on the server, as the server reports it
}

// EventKind says what an Event is about.
type EventKind string

// The kinds of events.
const (
	EventPoll   EventKind = "poll"   // a poll ended; State is the new state
	EventDown   EventKind = "down"   // the server went down
	EventUp     EventKind = "up"     // the server came back up (or up for the first time)
	EventMap    EventKind = "map"    // the map changed; Detail is the new map
	EventJoin   EventKind = "join"   // a player joined; Detail is the name
	EventLeave  EventKind = "leave"  // a player left; Detail is the name
	EventConfig EventKind = "config" // the configuration was reloaded; Server is empty
)

// Event is a change the monitor saw, for live updates and alerts.
type Event struct {
	Kind   EventKind    `json:"kind"`
	Server string       `json:"server,omitempty"`
	Time   time.Time    `json:"time"`
	Detail string       `json:"detail,omitempty"`
	State  *ServerState `json:"state,omitempty"`
}
