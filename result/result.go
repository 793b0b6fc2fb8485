package result

import (
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
)

// Section names a part of a server's answer, as the keys of the JSON
// "errors" object do.
type Section string

// The sections protocols share. A2S answers info, players and rules; OGP
// info, teams, players, rules, addons and limits. A protocol's own
// sections are named in its file (SectionMods in a2s.go).
const (
	SectionInfo    Section = "info"
	SectionTeams   Section = "teams"
	SectionPlayers Section = "players"
	SectionRules   Section = "rules"
	SectionAddOns  Section = "addons"
	SectionLimits  Section = "limits"
)

// Result is the outcome of querying one game server, whatever the
// protocol. It is a value: build it with New and the Set methods, then
// read its fields; do not change it after handing it to another goroutine.
//
// A section that answered is in Detail; a section that failed is left out
// there and its error is in Errors; a section not asked for is in
// neither. Err is set when the server as a whole failed: no section
// answered, or no query could be made (the name did not resolve).
type Result struct {
	// Target is the server as the caller named it ("localhost:27015"),
	// Addr the address queried; Addr is the zero value when none was.
	Target string
	Addr   netip.AddrPort
	// Protocol is the query protocol's name, as package protocol's
	// registry names it and the JSON "protocol" field shows it.
	Protocol string
	// Ping is the round-trip time of the first exchange that answered
	// (A2S_INFO for A2S); zero when unknown.
	Ping time.Duration
	// Summary is what the answers say, under the same names whatever the
	// protocol.
	Summary Summary
	// Detail holds the protocol's own answers: an [*A2S] or an [*OGP],
	// one type per protocol. It is nil until an answer (or the protocol's
	// setup) sets it.
	Detail Detail
	// Errors lists the sections that failed, in the order they were set.
	Errors []SectionError
	// Err is why the server as a whole failed, nil when any section
	// answered.
	Err *Error
}

// Detail is one protocol's own answers in a [Result]: the sections it
// answered, in its own types and its own JSON. Each protocol's type is in
// a file of its own in this package ([*A2S] in a2s.go, [*OGP] in ogp.go);
// nothing else in the package knows the protocols.
type Detail interface {
	// Answered reports whether any section answered.
	Answered() bool
	// PlayerList returns the players the answers list, under the same
	// names whatever the protocol; nil when they hold no player list (it
	// was not asked for, or failed), empty when the server has no one on.
	PlayerList() []Player
	// appendHead appends the members that follow "protocol" in the JSON
	// object (OGP's "dialect"), appendSections those of the sections
	// that answered, after "summary". They take and return the object by
	// value, which keeps it off the heap.
	appendHead(o jsonenc.Object) jsonenc.Object
	appendSections(o jsonenc.Object) jsonenc.Object
}

// Player is one player on a server, as every protocol can report one. A
// field the protocol does not report is zero.
type Player struct {
	Name     string        // for display: valid UTF-8 (see Summary)
	Score    int64         // the score, or frags
	Duration time.Duration // time on the server
}

// SectionError is the error of one section.
type SectionError struct {
	Section Section
	Err     *Error
}

// New returns the Result of querying target at addr with the protocol
// named protocol, before any answer: set the answers with the Set
// methods of the protocol's Detail (SetA2SInfo, SetOGP...), or the
// failure with Fail. addr is the zero value when the target could not be
// resolved. Package protocol makes a protocol's results with its Detail
// set from the start.
func New(target string, addr netip.AddrPort, protocol string) *Result {
	return &Result{Target: target, Addr: addr, Protocol: protocol}
}

// Fail records that the server as a whole failed with err before any
// section could be asked, such as a name that does not resolve.
func (r *Result) Fail(err error) { r.Err = NewError(err) }

// SectionErr returns the error of section s, or nil.
func (r *Result) SectionErr(s Section) *Error {
	for _, e := range r.Errors {
		if e.Section == s {
			return e.Err
		}
	}
	return nil
}

// setSection records the outcome of section s: answered when err is nil,
// else failed with err. It keeps Err in step: set to the first section's
// error while no section has answered, nil once one has.
func (r *Result) setSection(s Section, err error) {
	r.clearSection(s)
	if err != nil {
		r.failSection(s, NewError(err))
	}
	r.updateErr()
}

// clearSection forgets the error of section s.
func (r *Result) clearSection(s Section) {
	for i, e := range r.Errors {
		if e.Section == s {
			r.Errors = append(r.Errors[:i], r.Errors[i+1:]...)
			return
		}
	}
}

func (r *Result) failSection(s Section, e *Error) {
	if r.Errors == nil {
		r.Errors = make([]SectionError, 0, 3)
	}
	r.Errors = append(r.Errors, SectionError{s, e})
}

// updateErr sets Err from the sections.
func (r *Result) updateErr() {
	switch {
	case r.answered():
		r.Err = nil
	case len(r.Errors) > 0:
		r.Err = r.Errors[0].Err
	}
}

// answered reports whether any section answered.
func (r *Result) answered() bool { return r.Detail != nil && r.Detail.Answered() }

// PlayerList returns the players the server listed, under the same names
// whatever the protocol: nil when the result holds no player list (see
// [Detail]).
func (r *Result) PlayerList() []Player {
	if r.Detail == nil {
		return nil
	}
	return r.Detail.PlayerList()
}

// PlayersHidden reports whether the server said players are on but hid
// who they are (Minecraft's hide-online-players): its PlayerList is nil
// because the list is unknown, not because nobody is on. A Detail that
// can tell has a PlayersHidden method.
func (r *Result) PlayersHidden() bool {
	h, ok := r.Detail.(interface{ PlayersHidden() bool })
	return ok && h.PlayersHidden()
}

// UpWithoutAnswer reports whether the server showed it is up without
// answering the query: it took the connection and closed it, as a
// Minecraft server with enable-status=false does. A monitor counts such a
// poll as up, though r.Err says why nothing was read.
func (r *Result) UpWithoutAnswer() bool {
	u, ok := r.Detail.(interface{ UpWithoutAnswer() bool })
	return ok && u.UpWithoutAnswer()
}

// MarshalJSON encodes r as documented in docs/json.md; see AppendJSON.
func (r *Result) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends r to b as one JSON object, the contract of
// `gsq query --json` and `gsq scan` documented in docs/json.md, and
// returns the extended buffer. It does not append a newline.
func (r *Result) AppendJSON(b []byte) []byte {
	o := jsonenc.Begin(b, false)
	o.Str("target", r.Target)
	if r.Addr.IsValid() {
		o.Key("address")
		o.B = r.Addr.AppendTo(append(o.B, '"'))
		o.B = append(o.B, '"')
	}
	o.Str("protocol", r.Protocol)
	if r.Detail != nil {
		o = r.Detail.appendHead(o)
	}
	if r.Ping > 0 {
		o.Key("ping_ms")
		o.B, _ = jsonenc.AppendRounded(o.B, float64(r.Ping)/float64(time.Millisecond), 2) // a positive duration: finite
	}
	o.Key("summary")
	o.B = r.Summary.AppendJSON(o.B)
	if r.Detail != nil {
		o = r.Detail.appendSections(o)
	}
	o.Key("errors")
	errs := jsonenc.Begin(o.B, false)
	for _, e := range r.Errors {
		errs.AnyKey(string(e.Section))
		errs.B = e.Err.appendJSON(errs.B)
	}
	o.B = errs.End()
	o.Key("error")
	if r.Err != nil {
		o.B = r.Err.appendJSON(o.B)
	} else {
		o.B = append(o.B, "null"...)
	}
	return o.End()
}
