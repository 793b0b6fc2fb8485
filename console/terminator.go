package console

import (
	"fmt"
	"time"
)

// Many consoles send an answer in pieces (packets, lines, frames) and say
// nothing of where it ends: Source RCON splits long output into packets
// with no last-packet flag; the 7 Days to Die telnet console streams
// lines; Arma Reforger's BattlEye acknowledges a command and sends its
// output later. A session finds the end with a Terminator, which it
// consults at each step of collecting one answer. The common strategies
// are here ([FirstMessage], [QuietPeriod], [MarkerReply]); a protocol
// that has to find out how its server behaves implements its own
// (package rcon's adaptive one, its default, learns it from the server).
//
// The end marker is a request whose reply the server sends only after
// the whole answer to the command before it: Valve's empty
// RESPONSE_VALUE probe, a sentinel command on a telnet console. What it
// is, and how its reply is recognised, is the protocol's business; the
// Terminator decides when to send it.

// Step is what a session does next while it collects an answer.
type Step int

// The steps a [Terminator] returns.
const (
	// StepContinue keeps collecting.
	StepContinue Step = iota
	// StepDone ends the answer with what has arrived. From Message, while
	// an end marker is out, it waits for the marker's reply instead, so
	// that the next command cannot follow the marker before the server
	// has read it; from Silence it ends the answer even then, and the
	// marker's reply, should it come, is late (see [Terminator.Marker]).
	StepDone
	// StepMark sends the end marker, unless one is out: the answer then
	// ends at its reply. From Start it goes out with the command.
	StepMark
	// StepRemark sends a fresh end marker, taking the one out as lost.
	StepRemark
)

// String returns the step's name.
func (s Step) String() string {
	switch s {
	case StepContinue:
		return "continue"
	case StepDone:
		return "done"
	case StepMark:
		return "mark"
	case StepRemark:
		return "remark"
	}
	return fmt.Sprintf("Step(%d)", int(s))
}

// Exchange is what a session knows of one answer while it collects it.
// The session keeps it; a [Terminator] reads it and sets Wait.
type Exchange struct {
	// Sent is when the command was written.
	Sent time.Time
	// Last is when the last message of the answer, or a part of one,
	// arrived (Sent before any). A session reads the clock for it only
	// while Wait is set.
	Last time.Time
	// Messages counts the messages of the answer so far, Bytes their
	// bodies' bytes, and LastSize is the last one's.
	Messages, Bytes, LastSize int
	// Marked reports that an end marker is out and its reply has not
	// come; MarkedWithCommand that it went out with the command.
	Marked, MarkedWithCommand bool
	// Ended reports, to Marker, a reply that came after the answer had
	// ended without it: the Terminator gave up on the marker too soon.
	Ended bool
	// Wait, set by the Terminator, is how long the session waits after
	// Last for more before it calls Silence; zero waits until the
	// command's deadline.
	Wait time.Duration
}

// Terminator decides where the answer to a command ends. A session calls
// it for each answer from one goroutine at a time, but may collect
// several answers at once (pipelining): a Terminator that keeps state
// across answers must guard it.
type Terminator interface {
	// Start is called as the command is written: StepMark sends the end
	// marker with it.
	Start(x *Exchange) Step
	// Message is called with the body of each message of the answer, in
	// the order they arrive; x counts it already.
	Message(x *Exchange, body []byte) Step
	// Marker is called with the reply to the end marker, which ends the
	// answer unless it returns StepRemark or x.Ended is set (a late
	// reply, whose step is ignored).
	Marker(x *Exchange, body []byte) Step
	// Silence is called when nothing arrived for x.Wait after x.Last. A
	// StepContinue waits another x.Wait.
	Silence(x *Exchange) Step
	// Lost is called when the server closed the connection between two
	// messages of the answer. It reports whether the answer is whole;
	// if not, the command fails with the loss.
	Lost(x *Exchange) bool
}

// FirstMessage ends each answer at its first message: for servers that
// answer every command with one (Counter-Strike 2, Factorio, Palworld,
// Rust's WebRCON). NoReply, if set, is how long to wait for it before
// the answer counts as empty, for servers that leave some commands
// unanswered; zero waits until the command's deadline.
type FirstMessage struct {
	NoReply time.Duration
}

// Start waits for the message.
func (f FirstMessage) Start(x *Exchange) Step {
	x.Wait = f.NoReply
	return StepContinue
}

// Message ends the answer.
func (FirstMessage) Message(*Exchange, []byte) Step { return StepDone }

// Marker ends the answer.
func (FirstMessage) Marker(*Exchange, []byte) Step { return StepDone }

// Silence ends an answer that never came, empty.
func (FirstMessage) Silence(*Exchange) Step { return StepDone }

// Lost reports that the answer is not whole.
func (FirstMessage) Lost(*Exchange) bool { return false }

// DefaultQuiet is QuietPeriod's default silence after the last message.
const DefaultQuiet = 250 * time.Millisecond

// QuietPeriod ends each answer when nothing has arrived for Quiet after
// its last message: a fallback for servers nothing else works with, at
// the price of that much latency per command. NoReply, if set, is how
// long to wait for the first message before the answer counts as empty,
// for servers that leave some commands unanswered; zero waits until the
// command's deadline.
type QuietPeriod struct {
	Quiet   time.Duration // zero means DefaultQuiet
	NoReply time.Duration
}

// Start waits for the first message.
func (q QuietPeriod) Start(x *Exchange) Step {
	x.Wait = q.NoReply
	return StepContinue
}

// Message waits for a quiet period.
func (q QuietPeriod) Message(x *Exchange, _ []byte) Step {
	x.Wait = q.Quiet
	if x.Wait <= 0 {
		x.Wait = DefaultQuiet
	}
	return StepContinue
}

// Marker ends the answer.
func (QuietPeriod) Marker(*Exchange, []byte) Step { return StepDone }

// Silence ends the answer.
func (QuietPeriod) Silence(*Exchange) Step { return StepDone }

// Lost reports that the answer is not whole.
func (QuietPeriod) Lost(*Exchange) bool { return false }

// MarkerReply sends the end marker with each command, and the answer ends
// at the marker's reply: Valve's own way of finding the end of a split
// Source RCON answer (the Valve Developer Community page "Source RCON
// Protocol", "Multiple-packet Responses"), and a sentinel command's on a
// line-based console. It needs a server that handles requests in order
// and reads a marker that arrives with the command.
type MarkerReply struct{}

// Start sends the marker with the command.
func (MarkerReply) Start(*Exchange) Step { return StepMark }

// Message keeps reading until the marker's reply.
func (MarkerReply) Message(*Exchange, []byte) Step { return StepContinue }

// Marker ends the answer.
func (MarkerReply) Marker(*Exchange, []byte) Step { return StepDone }

// Silence keeps waiting (it is not called: MarkerReply sets no Wait).
func (MarkerReply) Silence(*Exchange) Step { return StepContinue }

// Lost reports that the answer is not whole.
func (MarkerReply) Lost(*Exchange) bool { return false }
