package rcon

import (
	"fmt"
	"time"
)

// Step tells the client what to do next while it collects an answer.
type Step int

// Steps returned by a [Terminator].
const (
	// StepContinue keeps reading.
	StepContinue Step = iota
	// StepDone ends the answer with what has arrived, unless the probe
	// was sent: then the answer ends at the probe's reply.
	StepDone
	// StepProbe sends the end-of-answer probe (an empty RESPONSE_VALUE
	// with its own id; an empty command on [DialectMinecraft]) unless it
	// was already sent; the answer then ends when the server replies to
	// the probe. On [DialectMinecraft] a probe asked for by Start is held
	// back until the first packet of the answer has arrived, so two
	// packets are never written back to back.
	StepProbe
)

// String returns the step's name.
func (s Step) String() string {
	switch s {
	case StepContinue:
		return "continue"
	case StepDone:
		return "done"
	case StepProbe:
		return "probe"
	}
	return fmt.Sprintf("Step(%d)", int(s))
}

// Terminator is a strategy that decides where the answer to a command
// ends, for [Options].Terminator; without one the client finds out by
// itself (see the package documentation). Implementations must be
// stateless (a Client calls them from several goroutines): everything
// they need is passed in.
type Terminator interface {
	// Start returns the step to take when the command is written.
	Start() Step
	// Packet is called with the body of the n-th packet (from 0) of the
	// answer, in arrival order.
	Packet(n int, body []byte) Step
	// Silence returns how long to wait for the next packet once n
	// packets have arrived before the answer counts as complete; 0
	// means no such rule (wait for the deadline).
	Silence(n int) time.Duration
}

// SourceProbe is Valve's own workaround for finding the end of a split
// answer (the Valve Developer Community page "Source RCON Protocol",
// "Multiple-packet Responses"): right after the command, in the same
// write, send an empty RESPONSE_VALUE. SRCDS handles requests in order,
// so every packet of the answer arrives before the mirror of the probe.
// The extra packet SRCDS sends after the mirror (body 0x0000 0001 0000
// 0000) carries the probe's id and is dropped, never reaching the next
// command.
type SourceProbe struct{}

// Start asks for the probe at once.
func (SourceProbe) Start() Step { return StepProbe }

// Packet keeps reading until the probe's reply.
func (SourceProbe) Packet(int, []byte) Step { return StepContinue }

// Silence returns 0.
func (SourceProbe) Silence(int) time.Duration { return 0 }

// MinecraftFragmentUnits is the fragment length, in UTF-16 code units,
// at which vanilla Minecraft cuts command output (wiki.vg, "RCON":
// "Fragmentation").
const MinecraftFragmentUnits = 4096

// MinecraftFragments is the Minecraft strategy: the server cuts output
// every 4096 UTF-16 code units (each at least one byte of UTF-8), or, on
// servers built on other code, every 4096 bytes, so a fragment shorter
// than 4096 bytes is the last one. A longer one may or may not be (the
// output can be an exact multiple), so then a probe is sent: an empty
// command, which vanilla answers after the remaining fragments. It is
// only ever sent after a fragment has arrived, so the server has already
// read the command and the two packets cannot arrive in one read, which
// makes vanilla drop the connection. A server that ignores the probe
// makes such answers end in [ErrTimeout], returned with the output.
type MinecraftFragments struct{}

// Start waits for the first fragment.
func (MinecraftFragments) Start() Step { return StepContinue }

// Packet ends at a short fragment and probes after a full one.
func (MinecraftFragments) Packet(_ int, body []byte) Step {
	if fullFragment(body) {
		return StepProbe
	}
	return StepDone
}

// Silence returns 0.
func (MinecraftFragments) Silence(int) time.Duration { return 0 }

// SinglePacket ends the answer at its first packet: for servers that
// never split (CS2, Factorio, Palworld). NoReply, if set, is how long to
// wait for that packet before returning an empty answer without error,
// for servers that do not answer some commands; zero waits until the
// deadline and then fails with [ErrTimeout].
type SinglePacket struct {
	NoReply time.Duration
}

// Start waits for the packet.
func (SinglePacket) Start() Step { return StepContinue }

// Packet ends the answer.
func (SinglePacket) Packet(int, []byte) Step { return StepDone }

// Silence returns NoReply before the packet.
func (s SinglePacket) Silence(int) time.Duration { return s.NoReply }

// QuietPeriod ends the answer when no packet has arrived for Quiet after
// the last one: a fallback for servers nothing else works with, at the
// price of that much latency. NoReply, if set, is how long to wait for
// the first packet before returning an empty answer without error, for
// servers that do not answer some commands at all; zero waits until the
// deadline and then fails with [ErrTimeout].
type QuietPeriod struct {
	Quiet   time.Duration // zero means DefaultQuiet
	NoReply time.Duration
}

// DefaultQuiet is QuietPeriod's default silence after the last packet.
const DefaultQuiet = 250 * time.Millisecond

// Start waits for packets.
func (QuietPeriod) Start() Step { return StepContinue }

// Packet keeps reading.
func (QuietPeriod) Packet(int, []byte) Step { return StepContinue }

// Silence returns NoReply before the first packet and Quiet after.
func (q QuietPeriod) Silence(n int) time.Duration {
	if n == 0 {
		return q.NoReply
	}
	if q.Quiet <= 0 {
		return DefaultQuiet
	}
	return q.Quiet
}
