// Package console is the shape every remote console gsq speaks shares, so
// that a program (and `gsq rcon`) can run commands on a game server and
// follow what it says unasked without knowing which protocol carries them:
// Source and Minecraft RCON (package rcon), Rust's WebRCON, BattlEye RCon,
// the 7 Days to Die telnet console and Palworld's REST API each implement
// [Session] in a package of their own.
//
// The shape follows the field notes' "one console session with events"
// (console-field-notes.md §1) and net/http's conventions: a session is
// safe for concurrent use, every blocking call takes a context first, and
// what the server says unasked never reaches a caller waiting for an
// answer: it goes to [Session.Events].
//
// Keep-alive and reconnection with a fresh login are the session's own
// job, done on timers no caller can block, whatever the callers are doing.
//
// # What a console package reuses
//
// Package rcon is built from these pieces, and a new console is too:
//
//   - [NewError] declares the package's sentinels (ErrAuthFailed,
//     ErrTimeout, a closed session's), so that its errors match both its
//     own and [ErrAuthFailed], [ErrTimeout] and [ErrClosed].
//   - [Feed] is the Events channel, with the loss policy Session
//     promises; the package turns what the server says unasked into
//     events ([Event]), typed where its protocol says what they are.
//   - [Terminator] finds the end of an answer that carries none (an RCON
//     answer split in packets, a telnet console's lines, Reforger's late
//     output), step by step as the session collects it: [FirstMessage],
//     [QuietPeriod] and [MarkerReply] are the common strategies, and a
//     package may add its own (rcon's finds out how the server behaves).
//     The session decides which messages belong to which command, and
//     what the end marker is; the Terminator, when the answer ends.
//   - [Redialer] replaces a lost connection in the background, with
//     backoff, and stops at a refused password; [Link] holds the current
//     connection for a session whose callers wait for one, replaced by a
//     Redialer; [DialLogin] bounds a login's connection by a timeout and
//     a context.
//   - [Idle] runs the keep-alive on its own timer, and [Watch], which it
//     is built on, checks a connection gone quiet, whatever the callers
//     are doing.
//   - [Lockout] counts a server's failed logins per source and blocks
//     a source at the limit, for every console server (rcon's too).
//   - Package console/consoletest is the test harness: an in-memory
//     network with deadlines, on which a session and its fake server
//     talk inside a testing/synctest bubble, off the wall clock.
//
// This package uses the standard library only.
package console

import (
	"context"
	"time"
)

// Session is a logged-in console on one game server.
type Session interface {
	// Exec runs cmd and returns its whole answer, however many packets,
	// frames or lines it spans.
	Exec(ctx context.Context, cmd string) (string, error)
	// Send runs cmd without waiting for an answer, for commands that
	// never answer (fire and forget). It returns once cmd is written.
	Send(ctx context.Context, cmd string) error
	// Events delivers what the server says unasked, in the order it came.
	// The channel is closed when the session is closed. A reader that
	// falls behind loses events rather than stalling the session: the
	// next event delivered counts them in Missed.
	Events() <-chan Event
	// Close ends the session and closes Events.
	Close() error
}

// Kind says what an Event is.
type Kind string

// The kinds of events. A protocol types an event where it says what the
// event is, and leaves it KindLog otherwise.
const (
	KindLog    Kind = "log"    // a console or log line
	KindChat   Kind = "chat"   // a player's chat message
	KindJoin   Kind = "join"   // a player connected
	KindLeave  Kind = "leave"  // a player disconnected
	KindKill   Kind = "kill"   // a kill or death
	KindReport Kind = "report" // a player's report (Rust F7)
	KindAdmin  Kind = "admin"  // a console admin logged in or out, or ran something
	// KindHeartbeat is a packet a server sends only to show that it is
	// alive (rcon++ sends an empty packet of id -1 every 30 s).
	KindHeartbeat Kind = "heartbeat"
)

// Event is one thing the server said unasked.
type Event struct {
	// Time is when it was received.
	Time time.Time
	Kind Kind
	// Text is the message for display, decoded to UTF-8.
	Text string
	// Player and PlayerID name the player the event is about, when the
	// protocol says; Channel is a chat message's channel ("global",
	// "team", "side", ...), when it says.
	Player   string
	PlayerID string
	Channel  string
	// Raw is the payload as received (a packet body, a JSON message, a
	// line), for what the typed fields leave out.
	Raw []byte
	// Missed counts the events lost before this one because the reader
	// of Events fell behind.
	Missed int
}
