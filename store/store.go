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
	// Vantage is the region of the fleet worker that polled (issue 23);
	// "" for a single process.
	Vantage string
	// Slot is the scheduled poll slot the sample belongs to, in a fleet:
	// the same instant for every worker that polls the server in that
	// slot, so that a retried batch, or an old and a new owner around a
	// hand-over, keep one row per (server, slot, vantage). Zero for a
	// single process: the sample is keyed by its Time.
	Slot time.Time
	// Fence, in a fleet, is the lease under which the worker polled the
	// server's shard: the write fails with ErrFenced (a *FencedError),
	// writing nothing, when another worker took the shard since. The zero
	// Fence is none.
	Fence Fence
	// PlayerList is the players this poll listed: the scores of their
	// open sessions, and the time the server's players were last listed
	// ([Store.Present]). nil means the poll listed none (it did not ask,
	// or the server's player data is off). It opens and ends no session.
	PlayerList []PlayerSeen
	// Sessions are the players who joined or left, as the monitor's
	// tracker decided at this poll: one entry per player, so that two
	// players of one name are two sessions. The store opens and ends
	// sessions from these alone, in order, whether the poll answered or
	// not (a server that goes down loses its players).
	Sessions []SessionChange
	// Outage, when set, opens an incident: the server went down at this
	// poll. Recovered ends its open incident: it answered again.
	Outage    *Outage
	Recovered bool
}

// SessionChange is a player who joined or left a server.
type SessionChange struct {
	Player string
	Left   bool // false: joined
	// Time is when: the poll that saw it, or for a player who left with
	// their server, when they were last listed. Zero means the sample's
	// time. A leave ends the newest open session of the player's name:
	// the longest on stay on.
	Time time.Time
}

// Presence is who a server's open sessions say is on it: one name per
// open session, and when a poll last listed its players.
type Presence struct {
	Players []string
	Listed  time.Time
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

// Session is one stretch of time a player was seen on a server, as the
// monitor's tracker saw them join and leave (Sample.Sessions).
//
// Joined is the time of the first poll that listed the player. Left is
// the time of the first poll that no longer listed them; when no such
// poll came (the server went down, its list went stale, or it is no
// longer monitored), it is the last time they were listed.
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
// there were, maintenance incidents left out (Store.Uptime).
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

// Budget is what one server may add to the store in a clock hour (UTC,
// of the samples' times): without it, a server that lists new players
// and a new map at every poll grows the database without bound (29.6 MB
// a server an hour, measured). What goes over it is refused and counted
// ([Store.Refused]); the rest of the poll is kept. A zero field means
// DefaultBudget's, a negative one no limit.
type Budget struct {
	// Sessions is how many player sessions a server may open an hour.
	// A player listed while the hour's sessions are spent is not
	// tracked; a session already open goes on.
	Sessions int
	// NameBytes is how many bytes of player names the store has never
	// seen a server may bring an hour (the names are kept as long as a
	// session of theirs). A player whose name is new while the hour's
	// bytes are spent is not tracked.
	NameBytes int
	// Changes is how many times an hour a server's map or version may
	// change (each new one is kept, and a map change besides). A poll
	// whose map or version changes while the hour's changes are spent
	// keeps no map or version.
	Changes int
}

// DefaultBudget is the budget of a store opened without WithBudget. A
// busy honest server stays well within it: 100 players who stay 20
// minutes on average and a map change every 10 minutes that empties
// the player list (every session ends and starts again) open about 900
// sessions an hour at the busiest, bring 5 KB of new names in the
// first hour and less once the regulars are known, and change the map 6
// times. docs/store.md has the worst case it leaves: 4.4 MB a server a
// day in SQLite.
var DefaultBudget = Budget{Sessions: 1200, NameBytes: 16 << 10, Changes: 30}

// Refusals counts what a server's polls held that the store did not
// keep, over the server's Budget. A player refused is counted at each
// write that lists them until the next hour gives them a session.
type Refusals struct {
	Sessions int64 `json:"sessions"` // players not tracked: the hour's sessions were spent
	Names    int64 `json:"names"`    // players not tracked: their name was new and the hour's name bytes were spent
	Changes  int64 `json:"changes"`  // maps or versions not kept: the hour's changes were spent
}

// Store is the monitor's history. Implementations are safe for concurrent
// use. A server's samples are written through one Store at a time.
//
// Methods that name a server return an error that matches
// [ErrUnknownServer] when the store does not know it.
type Store interface {
	AlertJournal
	// SyncServers records the configured servers, adding new ones and
	// updating the target, protocol and labels of known ones. Servers not
	// in the list keep their history; they are no longer watched, so
	// their open sessions end, at the time their players were last
	// listed.
	SyncServers(ctx context.Context, servers []Server) error
	// Servers lists every server the store knows, by name.
	Servers(ctx context.Context) ([]Server, error)
	// Write stores one poll round's samples in one transaction, and
	// updates player sessions, records and map changes from them. Every
	// sample's server must be known (SyncServers); otherwise nothing is
	// written. A raw sample is keyed (slot or time, server, vantage): of
	// the samples of a key, in the batch or already stored, the first
	// stays. A batch with a sample whose Fence is stale writes nothing
	// and fails with a *FencedError (SQLite refuses any Fence).
	Write(ctx context.Context, samples []Sample) error
	// History returns a server's history over [from, to) in buckets of
	// step, read from the coarsest level whose buckets fit in step and
	// whose retention still covers from. Buckets are aligned to multiples
	// of step since the Unix epoch, so the first one starts at from
	// rounded down; every bucket is returned, gaps included.
	History(ctx context.Context, server string, from, to time.Time, step time.Duration) ([]Point, error)
	// HistoryMany is History for several servers at once, by name, in one
	// read of the recent samples: for a list's sparklines. Servers the
	// store does not know are left out.
	HistoryMany(ctx context.Context, servers []string, from, to time.Time, step time.Duration) (map[string][]Point, error)
	// DayAverages returns every server's average players on each UTC day
	// of [from, to) (from rounded up and to down to days), polls down
	// counting as none: a slice a day, NaN for a day without polls.
	// Servers without a poll in the range are left out. It reads the
	// days rolled up only, and returns the end of those it could: before
	// to while the last days are not rolled up yet.
	DayAverages(ctx context.Context, from, to time.Time) (averages map[string][]float64, through time.Time, err error)
	// Uptime is the fraction of a server's polls over [from, to) that were
	// up, and how many polls there were, leaving out the polls of its
	// maintenance incidents (Incident.Maintenance, from start to end): a
	// maintenance window is neither up nor down time. It is the one
	// uptime figure: the API's, the status page's and the poller's.
	Uptime(ctx context.Context, server string, from, to time.Time) (fraction float64, polls int, err error)
	// UptimeAll is Uptime for every server at once, by name: one pass over
	// the history, for a list of many servers.
	UptimeAll(ctx context.Context, from, to time.Time) (map[string]UptimeStat, error)
	// Sessions returns player sessions.
	Sessions(ctx context.Context, q SessionQuery) ([]Session, error)
	// Present returns, by server name, the players of the open sessions,
	// for a monitor that starts again to carry them on (servers with none
	// are left out).
	Present(ctx context.Context) (map[string]Presence, error)
	// Resume reads again from the database what the writer knows of the
	// named servers (their open sessions, last listing, last map, open
	// incident) and returns the presence of those with open sessions: a
	// fleet's worker that takes servers over from another carries on the
	// sessions and incidents the other wrote, rather than opening them
	// twice.
	Resume(ctx context.Context, servers []string) (map[string]Presence, error)
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
	// EachPoint calls fn with every bucket of a rollup level in span
	// that has polls, by server then time, streaming; an error from fn
	// stops it and is returned. The buckets are History's with a step of
	// the level's bucket: the first starts at span.From rounded down to
	// a bucket, and the ones not rolled up yet (the last minutes, the
	// hour and day under way) are read from the finer levels, so an
	// export gives the API's figures.
	EachPoint(ctx context.Context, level Level, span Span, fn func(server string, p Point) error) error
	// Maintain rolls raw samples up into the coarser levels, deletes what
	// retention no longer covers and reclaims the space, as of now. The
	// monitor calls it every minute or so; it is cheap when there is
	// little to do.
	Maintain(ctx context.Context, now time.Time) error
	// Refused returns, by server, what the store refused to keep since
	// it was opened because the server went over its Budget: for a
	// metric. Servers that had nothing refused are left out.
	Refused() map[string]Refusals
	// Check verifies the database: the engine's own integrity check
	// (SQLite's integrity_check, PostgreSQL's amcheck when installed)
	// and the store's invariants. It reads the whole database.
	Check(ctx context.Context) error
	// Close releases the database.
	Close() error

	// Incidents returns down periods of servers, newest first.
	Incidents(ctx context.Context, q IncidentQuery) ([]Incident, error)
	// SearchPlayers finds players by a part of their name.
	SearchPlayers(ctx context.Context, q string, exclude []string, limit int) ([]PlayerMatch, error)
	// Player returns a player's history across servers.
	Player(ctx context.Context, name string, exclude []string, recent time.Time) (Player, error)
	// Regulars returns the players with the most time on a server.
	Regulars(ctx context.Context, server string, from, to time.Time, limit int) ([]Regular, error)
	// ForgetPlayer deletes a player's sessions and name.
	ForgetPlayer(ctx context.Context, name string) (int, error)
	// AddWindow keeps a maintenance window set through the API (its
	// JSON), and returns its id; Windows lists them, oldest first;
	// DeleteWindow deletes one, reporting whether it was there.
	AddWindow(ctx context.Context, spec string) (int64, error)
	Windows(ctx context.Context) ([]StoredWindow, error)
	DeleteWindow(ctx context.Context, id int64) (bool, error)
}
