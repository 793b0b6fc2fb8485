package store

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Server is a monitored server as the store knows it. Name is its key:
// unique, stable across restarts and config reloads.
type Server struct {
	Name     string            `json:"name"`
	Target   string            `json:"target"`   // HOST:PORT as configured
	Protocol string            `json:"protocol"` // "a2s" or "ogp"
	Labels   map[string]string `json:"labels,omitempty"`
	// Announced is the name the server announced at its last successful
	// poll (Sample.Name), "" before any. SyncServers ignores it.
	Announced string `json:"announced,omitempty"`
}

// Sample is the outcome of one poll of one server.
type Sample struct {
	Server string    // Server.Name
	Time   time.Time // when the poll ended; stored to the second
	Up     bool
	// The fields below are meaningful when Up is true; a value the server
	// did not report is -1 (numbers) or "" (strings).
	Players    int
	MaxPlayers int
	Bots       int
	Map        string
	Version    string
	// Name is the server's announced name. Only the latest is kept
	// (Server.Announced): it is not part of the history.
	Name string
	Ping time.Duration // round-trip time of the poll; stored to the microsecond
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

var levelNames = [...]string{"raw", "minute", "hour", "day"}

// String returns the level's name: "raw", "minute", "hour" or "day".
func (l Level) String() string {
	if l < LevelRaw || l > LevelDay {
		return fmt.Sprintf("Level(%d)", int(l))
	}
	return levelNames[l]
}

// Bucket is the length of the level's buckets, aligned to the Unix epoch
// (days run from 00:00 UTC); 0 for raw samples.
func (l Level) Bucket() time.Duration {
	switch l {
	case LevelMinute:
		return time.Minute
	case LevelHour:
		return time.Hour
	case LevelDay:
		return 24 * time.Hour
	}
	return 0
}

// ParseLevel parses a level's name, as String returns it.
func ParseLevel(s string) (Level, error) {
	for l, name := range levelNames {
		if strings.EqualFold(s, name) {
			return Level(l), nil
		}
	}
	return 0, fmt.Errorf("store: unknown level %q (want %s)", s, strings.Join(levelNames[:], ", "))
}

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
	// gap in a chart: Up is false and the player figures are 0. A figure
	// that no up poll of the bucket reported is -1.
	Up bool `json:"up"`
}

// Session is one stretch of time a player was seen on a server.
//
// Joined is the time of the first poll that listed the player. Left is
// the time of the first poll that no longer listed them; when no such
// poll came in time (the server went down, or the monitor stopped, for
// longer than the session gap), it is the last time they were seen.
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
// hours and ever, and when. The peak's time is the latest time it was
// reached, the record's the first; a peak read from a rollup bucket has
// the bucket's start as its time.
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

// UptimeStat is a server's uptime over a period: the fraction of its
// polls that found it up (0 when there was none), and how many polls
// there were.
type UptimeStat struct {
	Fraction float64 `json:"fraction"`
	Polls    int     `json:"polls"`
}

// Span selects stored history: a server's, or every server's when Server
// is empty, over [From, To). A zero From or To leaves that end open.
type Span struct {
	Server string
	From   time.Time
	To     time.Time
}

// Retention is how long each level of history is kept; zero means
// forever.
type Retention struct {
	Raw    time.Duration // default 48h
	Minute time.Duration // default 14 days
	Hour   time.Duration // default 1 year
	Day    time.Duration // default forever
	// Sessions is how long a player session is kept after it ended;
	// default 90 days.
	Sessions time.Duration
	// Maps is how long a map change is kept; default 30 days.
	Maps time.Duration
}

// DefaultRetention is the retention of a store opened with a zero one.
var DefaultRetention = Retention{
	Raw:      48 * time.Hour,
	Minute:   14 * 24 * time.Hour,
	Hour:     365 * 24 * time.Hour,
	Sessions: 90 * 24 * time.Hour,
	Maps:     30 * 24 * time.Hour,
}

// Store is the monitor's history. Implementations are safe for concurrent
// use. A server's samples are written through one Store at a time.
//
// Methods that name a server return an error that matches
// [ErrUnknownServer] when the store does not know it.
type Store interface {
	// SyncServers records the configured servers, adding new ones and
	// updating the target, protocol and labels of known ones. Servers not
	// in the list keep their history.
	SyncServers(ctx context.Context, servers []Server) error
	// Servers lists every server the store knows, by name.
	Servers(ctx context.Context) ([]Server, error)
	// Write stores one poll round's samples in one transaction, and
	// updates player sessions, records and map changes from them. Every
	// sample's server must be known (SyncServers); otherwise nothing is
	// written.
	Write(ctx context.Context, samples []Sample) error
	// History returns a server's history over [from, to) in buckets of
	// step, read from the coarsest level whose buckets fit in step and
	// whose retention still covers from. Buckets are aligned to multiples
	// of step since the Unix epoch, so the first one starts at from
	// rounded down; every bucket is returned, gaps included.
	History(ctx context.Context, server string, from, to time.Time, step time.Duration) ([]Point, error)
	// Uptime is the fraction of a server's polls over [from, to) that were
	// up, and how many polls there were.
	Uptime(ctx context.Context, server string, from, to time.Time) (fraction float64, polls int, err error)
	// UptimeAll is Uptime for every server at once, by name: one pass over
	// the history, for a list of many servers.
	UptimeAll(ctx context.Context, from, to time.Time) (map[string]UptimeStat, error)
	// Sessions returns player sessions.
	Sessions(ctx context.Context, q SessionQuery) ([]Session, error)
	// OnlineAt returns the sessions of the players who were on a server
	// at a time: joined at or before it and not left by then.
	OnlineAt(ctx context.Context, server string, at time.Time) ([]Session, error)
	// PlayTime adds up the time of the sessions q selects (Limit aside),
	// each clipped to [q.From, q.To): how long a player played over a
	// week, or, with no player, the player-time a server saw. Sessions
	// counts them.
	PlayTime(ctx context.Context, q SessionQuery) (total time.Duration, sessions int, err error)
	// Records returns a server's peaks.
	Records(ctx context.Context, server string) (Records, error)
	// Maps returns a server's map changes over [from, to), oldest first.
	Maps(ctx context.Context, server string, from, to time.Time) ([]MapChange, error)
	// EachSample calls fn with every raw sample in span, oldest first
	// (PlayerList and Name are not kept), streaming; an error from fn
	// stops it and is returned.
	EachSample(ctx context.Context, span Span, fn func(Sample) error) error
	// EachPoint calls fn with every stored bucket of a rollup level in
	// span, by server then time, streaming; an error from fn stops it and
	// is returned. Buckets younger than the level's last rollup are not
	// stored yet.
	EachPoint(ctx context.Context, level Level, span Span, fn func(server string, p Point) error) error
	// Maintain rolls raw samples up into the coarser levels, deletes what
	// retention no longer covers and reclaims the space, as of now. The
	// monitor calls it every minute or so; it is cheap when there is
	// little to do.
	Maintain(ctx context.Context, now time.Time) error
	// Check verifies the database: the engine's own integrity check
	// (SQLite's integrity_check, PostgreSQL's amcheck when installed)
	// and the store's invariants. It reads the whole database.
	Check(ctx context.Context) error
	// Close releases the database.
	Close() error
}
