package rcon

import (
	"slices"
	"time"
)

// This file holds what a client finds out about the server it meets,
// so that zero Options work against servers that bend the protocol. The
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
// Client.lmu guards it.
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

// Probe timing. A probe counts as unanswered when nothing came within
// the probe wait after the last packet (or part of one): max(minProbeWait,
// probeWaitRTTs login round trips).
const (
	minProbeWait  = 250 * time.Millisecond
	probeWaitRTTs = 4
)

// probeWait is how long an answered probe's reply may take.
func (c *Client) probeWait() time.Duration {
	return max(minProbeWait, probeWaitRTTs*time.Duration(c.rtt.Load()))
}

// learned returns what is known of the server. Its fixedIDs must not be
// changed in place.
func (c *Client) learned() traits { return *c.srv.Load() }

// learn applies f to a copy of the traits, which it keeps and logs msg
// about if f reports a change.
func (c *Client) learn(cn *conn, f func(t *traits) bool, format string, args ...any) {
	c.lmu.Lock()
	t := c.srv.Load().clone()
	changed := f(&t)
	if changed {
		c.srv.Store(&t)
	}
	c.lmu.Unlock()
	if changed {
		c.note(cn, format, args...)
	}
}

// canPipeline reports whether the server allows commands in flight
// together.
func (c *Client) canPipeline() bool {
	t := c.learned()
	return t.dialect != DialectMinecraft && len(t.fixedIDs) == 0 && !t.rust && !t.minecraft &&
		t.backToBack != no && (c.opts.Terminator == nil || silenceFree(c.opts.Terminator))
}

// silenceFree reports whether t never ends an answer by a quiet period.
func silenceFree(t Terminator) bool {
	return t.Silence(0) == 0 && t.Silence(1) == 0
}

// fullFragment reports whether a Minecraft fragment may be followed by
// more. Vanilla cuts output every 4096 UTF-16 units, each at least one
// byte, and servers built on other code every 4096 bytes, possibly inside
// a UTF-8 sequence: a fragment shorter than 4096 bytes is the last one.
func fullFragment(body []byte) bool { return len(body) >= MinecraftFragmentUnits }
