// Package store keeps the history of `gsq monitor`: one interface, [Store],
// with an embedded SQLite implementation (the default) and a PostgreSQL one
// behind it, the same schema and the same test suite for both.
//
// History is kept at four levels: raw samples, and rollups per minute, per
// hour and per day (min, average and max players, uptime fraction), each
// with its own retention, so that the database stops growing at steady
// state. Player sessions (who was on, from when to when) and per-server
// records are kept beside it.
package store

import (
	"context"
	"time"
)

// Server is a monitored server as the store knows it. Name is its key:
// unique, stable across restarts and config reloads.
type Server struct {
	Name     string            `json:"name"`
	Target   string            `json:"target"`   // HOST:PORT as configured
	Protocol string            `json:"protocol"` // "a2s" or "ogp"
	Labels   map[string]string `json:"labels,omitempty"`
}

// Sample is the outcome of one poll of one server.
type Sample struct {
	Server string    // Server.Name
	Time   time.Time // when the poll ended
	Up     bool
	// The fields below are meaningful when Up is true; a value the server
	// did not report is -1 (numbers) or "" (strings).
	Players    int
	MaxPlayers int
	Bots       int
	Map        string
	Version    string
	Name       string        // the server's announced name
	Ping       time.Duration // round-trip time of the poll
	// PlayerList is the players seen by this poll, for player sessions.
	// nil means the poll did not ask for players, or the server's player
	// data is switched off (privacy): open sessions are left as they are.
	PlayerList []PlayerSeen
}

// PlayerSeen is one player in a poll's player list.
type PlayerSeen struct {
	Name  string
	Score int64
}

// Level is a level of history.
type Level int

// The levels of history, finest first.
const (
	LevelRaw Level = iota
	LevelMinute
	LevelHour
	LevelDay
)

// Point is one bucket of a server's history.
type Point struct {
	Time       time.Time `json:"time"` // start of the bucket
	Samples    int       `json:"samples"`
	Uptime     float64   `json:"uptime"` // fraction of the bucket's polls that were up, 0..1
	MinPlayers int       `json:"min_players"`
	AvgPlayers float64   `json:"avg_players"`
	MaxPlayers int       `json:"max_players"`
	// Capacity is the largest max_players reported in the bucket.
	Capacity int `json:"capacity"`
	// Up reports whether any poll in the bucket was up; the player figures
	// are those of the polls that were up. A bucket with no poll up is a
	// gap in a chart.
	Up bool `json:"up"`
}

// Session is one stretch of time a player was seen on a server.
type Session struct {
	Server    string     `json:"server"`
	Player    string     `json:"player"`
	Joined    time.Time  `json:"joined"`
	Left      *time.Time `json:"left,omitempty"` // nil while online
	LastScore int64      `json:"last_score"`
}

// SessionQuery selects sessions: those of Server (all servers when empty)
// and of Player (all when empty) that overlap [From, To); the zero To means
// now. At most Limit are returned, newest first (0 means 1000).
type SessionQuery struct {
	Server string
	Player string
	From   time.Time
	To     time.Time
	Limit  int
}

// Records are a server's peaks: the most players at once in the last 24
// hours and ever, and when.
type Records struct {
	Peak24h   int       `json:"peak_24h"`
	Peak24hAt time.Time `json:"peak_24h_at"`
	AllTime   int       `json:"all_time"`
	AllTimeAt time.Time `json:"all_time_at"`
}

// MapChange is the map a server switched to, and when.
type MapChange struct {
	Time time.Time `json:"time"`
	Map  string    `json:"map"`
}

// Retention is how long each level of history is kept; zero means
// forever.
type Retention struct {
	Raw    time.Duration // default 48h
	Minute time.Duration // default 14 days
	Hour   time.Duration // default 1 year
	Day    time.Duration // default forever
}

// DefaultRetention is the retention of a store opened with a zero one.
var DefaultRetention = Retention{
	Raw:    48 * time.Hour,
	Minute: 14 * 24 * time.Hour,
	Hour:   365 * 24 * time.Hour,
}

// Store is the monitor's history. Implementations are safe for concurrent
// use.
type Store interface {
	// SyncServers records the configured servers, adding new ones and
	// updating the target, protocol and labels of known ones. Servers not
	// in the list keep their history.
	SyncServers(ctx context.Context, servers []Server) error
	// Servers lists every server the store knows, by name.
	Servers(ctx context.Context) ([]Server, error)
	// Write stores one poll round's samples in one transaction, and
	// updates player sessions, records and map changes from them.
	Write(ctx context.Context, samples []Sample) error
	// History returns a server's history over [from, to) in buckets of
	// step, read from the coarsest level whose buckets fit in step and
	// whose retention still covers from.
	History(ctx context.Context, server string, from, to time.Time, step time.Duration) ([]Point, error)
	// Uptime is the fraction of a server's polls over [from, to) that were
	// up, and how many polls there were.
	Uptime(ctx context.Context, server string, from, to time.Time) (fraction float64, polls int, err error)
	// Sessions returns player sessions.
	Sessions(ctx context.Context, q SessionQuery) ([]Session, error)
	// Records returns a server's peaks.
	Records(ctx context.Context, server string) (Records, error)
	// Maps returns a server's map changes over [from, to), oldest first.
	Maps(ctx context.Context, server string, from, to time.Time) ([]MapChange, error)
	// Maintain rolls raw samples up into the coarser levels, deletes what
	// retention no longer covers and reclaims the space, as of now. The
	// monitor calls it every minute or so; it is cheap when there is
	// little to do.
	Maintain(ctx context.Context, now time.Time) error
	// Close releases the database.
	Close() error
}
