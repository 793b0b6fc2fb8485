package rcon

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gsq-project/gsq/console"
)

// This file holds what a client finds out about the server it meets, so
// that zero Options work against servers that bend the protocol, and the
// client's own Terminator, which finds the end of answers by what it has
// found out. A Profile seeds it with what is known in advance. The
// package documentation says what is detected and how.

// verdict is what the client knows of one behaviour of the server.
type verdict int8

const (
	unknown verdict = iota
	yes
	no
)

// traits is what the server was found (or, through a profile, is known)
// to do. It outlives a connection: a reconnection meets the same server.
type traits struct {
	dialect Dialect
	// fixedIDs are ids the server puts on replies instead of the
	// request's (Palworld 0, old Conan Exiles 42). Such a reply belongs
	// to the one command in flight, so commands are serial.
	fixedIDs []int32
	// probe: does the server answer an empty RESPONSE_VALUE? SRCDS
	// mirrors it, then sends an extra packet; Factorio, Palworld and
	// legacy Rust never answer it.
	probe verdict
	// backToBack: does it answer a probe that arrives in the same
	// segment as the command? ARK drops a request that arrives while it
	// handles another.
	backToBack verdict
	// single: an answer is one packet, so no probe is needed (CS2; and
	// servers that never answer probes).
	single bool
	// rust: legacy Rust RCON: type-4 console lines, and an empty packet
	// with id -1 after each answer, which ends it.
	rust bool
	// minecraft: a Source-dialect connection whose probe was answered
	// "Unknown request 0" is a Minecraft server: its answers end at a
	// fragment shorter than 4096 UTF-16 units, and it is never sent two
	// packets back to back.
	minecraft bool
	// execMarker: the end-of-answer marker is an empty command, not an
	// empty RESPONSE_VALUE (the Minecraft dialect, and servers that hang
	// up on the latter).
	execMarker bool
}

func (t *traits) acceptsID(id int32) bool { return slices.Contains(t.fixedIDs, id) }

func (t *traits) addFixedIDs(ids ...int32) {
	for _, id := range ids {
		if !t.acceptsID(id) {
			t.fixedIDs = append(t.fixedIDs, id)
		}
	}
}

// clone returns a copy that shares nothing with t.
func (t traits) clone() traits {
	t.fixedIDs = slices.Clone(t.fixedIDs)
	return t
}

// minecraftRules reports whether answers follow Minecraft's fragments.
func (t *traits) minecraftRules() bool { return t.dialect == DialectMinecraft || t.minecraft }

// oneAtATime reports whether the server must never get two packets in
// one read (vanilla Minecraft drops the connection then; legacy Rust
// drops all but the first).
func (t *traits) oneAtATime() bool { return t.minecraftRules() || t.rust }

// Probe timing. A probe counts as unanswered when nothing came within
// the probe wait after the last packet (or part of one): max(minProbeWait,
// probeWaitRTTs login round trips).
const (
	minProbeWait  = 250 * time.Millisecond
	probeWaitRTTs = 4
)

// adaptive is what a client knows of its server, and its default
// Terminator, which ends answers by what it knows and learns what it
// does not. Learning is serialised; the traits are replaced whole, so a
// reader loads them without a lock.
type adaptive struct {
	mu   sync.Mutex             // serialises learning
	cur  atomic.Pointer[traits] // never changed once stored
	rtt  atomic.Int64           // the login's round-trip time, ns
	note func(format string, args ...any)
}

var _ console.Terminator = (*adaptive)(nil)

// newAdaptive starts from what the profile and the options say.
func newAdaptive(p Profile, o *Options, note func(format string, args ...any)) *adaptive {
	t := p.traits.clone()
	t.dialect = o.Dialect
	if o.Dialect == DialectCS2 {
		t.single = true
	}
	if o.LooseIDs {
		t.addFixedIDs(0, -1, 42)
	}
	a := &adaptive{note: note}
	a.cur.Store(&t)
	return a
}

// traits returns what is known of the server; it must not be changed.
func (a *adaptive) traits() *traits { return a.cur.Load() }

// learn applies f to a copy of the traits, which it keeps, and notes msg,
// if f reports a change.
func (a *adaptive) learn(f func(t *traits) bool, format string, args ...any) {
	a.mu.Lock()
	t := a.cur.Load().clone()
	changed := f(&t)
	if changed {
		a.cur.Store(&t)
	}
	a.mu.Unlock()
	if changed {
		a.note(format, args...)
	}
}

// probeWait is how long an answered probe's reply may take.
func (a *adaptive) probeWait() time.Duration {
	return max(minProbeWait, probeWaitRTTs*time.Duration(a.rtt.Load()))
}

// loggedIn learns from a login's reply, which took rtt: a reply id other
// than the request's (Palworld answers 0, old Conan Exiles 42) is the id
// the server puts on its replies.
func (a *adaptive) loggedIn(rtt time.Duration, sent, got int32) {
	a.rtt.Store(int64(rtt))
	if got != sent {
		a.learn(func(t *traits) bool { ok := !t.acceptsID(got); t.addFixedIDs(got); return ok },
			"the login reply carries id %d, not the request's %d: replies with id %d go to the command in flight, and commands are serial", got, sent, got)
	}
}

// sawRustLine learns from a type-4 console line that the server is
// legacy Rust.
func (a *adaptive) sawRustLine() {
	a.learn(func(t *traits) bool { ok := !t.rust; t.rust = true; return ok },
		"type-4 console lines: legacy Rust RCON; answers end with an empty packet of id -1, and the connection is switched to UTF-8")
}

// canPipeline reports whether the server allows commands in flight
// together.
func (a *adaptive) canPipeline() bool {
	t := a.traits()
	return len(t.fixedIDs) == 0 && !t.oneAtATime() && t.backToBack != no
}

// assumeInOrder takes what pipelining assumes of the server, unless it is
// known otherwise: that it handles requests in order, as SRCDS does, and
// so mirrors a probe, also one that comes with the command.
func (a *adaptive) assumeInOrder() {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.cur.Load().clone()
	if t.probe == unknown {
		t.probe = yes
	}
	if t.backToBack == unknown {
		t.backToBack = yes
	}
	a.cur.Store(&t)
}

// Start sends the probe with the command only once the server has
// answered a probe and is not known to drop one that arrives with the
// command (the first such command tests that).
func (a *adaptive) Start(x *console.Exchange) console.Step {
	t := a.traits()
	x.Wait = 0
	if t.probe == yes && t.backToBack != no && !t.single && !t.oneAtATime() && len(t.fixedIDs) == 0 {
		return console.StepMark
	}
	return console.StepContinue
}

// Message decides by the server's rules, probing where they do not tell:
// Minecraft's answer ends at a fragment shorter than 4096 bytes and is
// probed after a full one; legacy Rust's ends at its own empty packet;
// one packet ends the answer of a server that splits nothing or answers
// no probe; and any other answer is probed. While the client has yet to
// learn whether the server answers the probe (or a probe with the
// command), an unanswered one must not hold the command until its
// deadline: it waits the probe wait.
func (a *adaptive) Message(x *console.Exchange, body []byte) console.Step {
	t := a.traits()
	var s console.Step
	switch {
	case t.minecraftRules():
		s = console.StepDone
		if fullFragment(body) {
			s = console.StepMark
		}
	case t.rust:
		s = console.StepContinue
	case t.single || t.probe == no:
		s = console.StepDone
	default:
		s = console.StepMark
	}
	x.Wait = 0
	if (x.Marked || s == console.StepMark) && !t.minecraftRules() &&
		(t.probe == unknown || x.MarkedWithCommand && t.backToBack == unknown) {
		x.Wait = a.probeWait()
	}
	return s
}

// Marker takes the probe's reply, which ends the answer, and learns from
// it: that probes are answered, also with the command; that the server is
// Minecraft, if it answered "Unknown request 0"; or, from a reply to a
// probe it gave up on, that probes are answered after all.
func (a *adaptive) Marker(x *console.Exchange, body []byte) console.Step {
	switch t := a.traits(); {
	case x.Ended:
		a.learn(func(s *traits) bool {
			ok := s.probe != yes
			s.probe, s.single = yes, s.dialect == DialectCS2
			return ok
		}, "a late reply to an end-of-answer probe thought unanswered: probes are answered after all")
	case !x.Marked || t.dialect == DialectMinecraft:
		// Legacy Rust's own end of an answer; Minecraft's marker.
	case len(body) > 0 && !t.minecraft:
		a.learn(func(s *traits) bool { ok := !s.minecraft; s.minecraft, s.probe = true, yes; return ok },
			"the probe was answered %q: a Minecraft server; probing only after a full fragment, never back to back", DecodeText(body))
	default:
		if t.probe != yes {
			a.learn(func(s *traits) bool { ok := s.probe != yes; s.probe = yes; return ok },
				"the end-of-answer probe is mirrored (SRCDS)")
		}
		if x.MarkedWithCommand && t.backToBack != yes {
			a.learn(func(s *traits) bool { ok := s.backToBack != yes; s.backToBack = yes; return ok },
				"a probe in the command's segment is answered: probing with each command")
		}
	}
	return console.StepDone
}

// Silence takes a probe unanswered for the probe wait: after a full SRCDS
// fragment, which more follow, the server is slow, not silent; a probe
// that went with the command was dropped by a server that drops requests
// arriving while it handles one, and another follows; otherwise the
// server answers no probe, and its answers are one packet.
func (a *adaptive) Silence(x *console.Exchange) console.Step {
	switch {
	case x.LastSize == DefaultSourceSplitSize:
		return console.StepContinue
	case x.MarkedWithCommand:
		a.learn(func(s *traits) bool { ok := s.backToBack != no; s.backToBack = no; return ok },
			"a probe in the command's segment went unanswered: the server drops requests that arrive while it handles one (as ARK does); probing after the answer's first packet")
		x.Wait = 0 // probes are answered: wait for the new one's reply
		return console.StepRemark
	}
	a.learn(func(s *traits) bool { ok := s.probe != no; s.probe, s.single = no, true; return ok },
		"the end-of-answer probe went unanswered (as on Factorio, Palworld and legacy Rust): one packet per answer")
	return console.StepDone
}

// Lost takes a server that hung up between packets while the client
// waited to learn whether it answers probes at all: it hung up on the
// probe (go-mc's does), the answer is whole, and the client uses
// Minecraft's rules, with an empty command as the end-of-answer marker,
// from then on. One that hangs up on a probe written with the command
// takes no probes there.
func (a *adaptive) Lost(x *console.Exchange) bool {
	t := a.traits()
	switch {
	case !x.Marked:
	case x.Messages > 0 && !x.MarkedWithCommand && t.probe == unknown && !t.minecraftRules():
		a.learn(func(s *traits) bool { ok := !s.execMarker; s.minecraft, s.execMarker = true, true; return ok },
			"the server hung up on the end-of-answer probe (as go-mc's does): the answer is whole; Minecraft's rules, with an empty command as the end marker, from now on")
		return true
	case x.Messages == 0 && x.MarkedWithCommand && t.backToBack == unknown:
		a.learn(func(s *traits) bool { ok := s.backToBack != no; s.backToBack = no; return ok },
			"the server hung up on a probe in the command's segment: probing after the answer's first packet from now on")
	}
	return false
}

// fullFragment reports whether a Minecraft fragment may be followed by
// more. Vanilla cuts output every 4096 UTF-16 units, each at least one
// byte, and servers built on other code every 4096 bytes, possibly inside
// a UTF-8 sequence: a fragment shorter than 4096 bytes is the last one.
func fullFragment(body []byte) bool { return len(body) >= MinecraftFragmentUnits }
