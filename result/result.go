package result

import (
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/bohemia"
	"github.com/gsq-project/gsq/ogp"
)

// Protocol names the query protocol of a Result, as the JSON "protocol"
// field does.
type Protocol string

// The protocols.
const (
	A2SProtocol Protocol = "a2s" // Valve's server queries
	OGPProtocol Protocol = "ogp" // the Open Game Protocol
)

// Section names a part of a server's answer, as the keys of the JSON
// "errors" object do.
type Section string

// The sections. A2S answers info, players and rules; OGP answers info,
// teams, players, rules, addons and limits. Mods is the DayZ mod list
// that Result decodes from an A2S server's rules.
const (
	SectionInfo    Section = "info"
	SectionTeams   Section = "teams"
	SectionPlayers Section = "players"
	SectionRules   Section = "rules"
	SectionAddOns  Section = "addons"
	SectionLimits  Section = "limits"
	SectionMods    Section = "mods"
)

// Result is the outcome of querying one game server, whatever the
// protocol. It is a value: build it with New and the Set methods, then
// read its fields; do not change it after handing it to another goroutine.
//
// A section that answered is in A2S or OGP; a section that failed is left
// out there and its error is in Errors; a section not asked for is in
// neither. Err is set when the server as a whole failed: no section
// answered, or no query could be made (the name did not resolve).
type Result struct {
	// Target is the server as the caller named it ("localhost:27015"),
	// Addr the address queried; Addr is the zero value when none was.
	Target string
	Addr   netip.AddrPort
	// Protocol is the query protocol.
	Protocol Protocol
	// Ping is the round-trip time of the first exchange that answered
	// (A2S_INFO for A2S); zero when unknown.
	Ping time.Duration
	// Summary is what the answers say, under the same names whatever the
	// protocol.
	Summary Summary
	// A2S holds the answers of an A2S server, OGP those of an OGP server;
	// the other is nil.
	A2S *A2S
	OGP *OGP
	// Errors lists the sections that failed, in the order they were set.
	Errors []SectionError
	// Err is why the server as a whole failed, nil when any section
	// answered.
	Err *Error
}

// A2S holds the answers of an A2S server. A nil field did not answer,
// or was not asked for.
type A2S struct {
	Info *a2s.Info
	// GoldSource is the obsolete 'm' reply of a GoldSource server that
	// answered A2S_INFO twice, with 'm' and then 'I'; Info holds the 'I'
	// reply then.
	GoldSource *a2s.Info
	Players    *a2s.Players
	Rules      *a2s.Rules
	// Mods is the DayZ mod list carried in binary rules (the DayZ Server
	// Browser Protocol), decoded; nil when the rules carry none.
	Mods *bohemia.Browser
}

// OGP holds the answer of an OGP server.
type OGP struct {
	Dialect ogp.Dialect
	// Answer is the server's answer; its Request flags say which sections
	// it holds. Nil when the query failed.
	Answer *ogp.Answer
}

// SectionError is the error of one section.
type SectionError struct {
	Section Section
	Err     *Error
}

// New returns the Result of querying target at addr with protocol p,
// before any answer: set the answers with SetA2SInfo, SetA2SPlayers,
// SetA2SRules or SetOGP, or the failure with Fail. addr is the zero value
// when the target could not be resolved.
func New(target string, addr netip.AddrPort, p Protocol) *Result {
	switch p {
	case A2SProtocol:
		x := &struct { // one allocation for both
			r Result
			a A2S
		}{r: Result{Target: target, Addr: addr, Protocol: p}}
		x.r.A2S = &x.a
		return &x.r
	case OGPProtocol:
		x := &struct {
			r Result
			o OGP
		}{r: Result{Target: target, Addr: addr, Protocol: p}}
		x.r.OGP = &x.o
		return &x.r
	}
	return &Result{Target: target, Addr: addr, Protocol: p}
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
func (r *Result) answered() bool {
	if a := r.A2S; a != nil && (a.Info != nil || a.Players != nil || a.Rules != nil) {
		return true
	}
	return r.OGP != nil && r.OGP.Answer != nil && r.OGP.Answer.Request&ogpSections != 0
}

// MarshalJSON encodes r as documented in docs/json.md; see AppendJSON.
func (r *Result) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends r to b as one JSON object, the contract of
// `gsq query --json` and `gsq scan` documented in docs/json.md, and
// returns the extended buffer. It does not append a newline.
func (r *Result) AppendJSON(b []byte) []byte {
	o := beginObject(b)
	o.str("target", r.Target)
	if r.Addr.IsValid() {
		o.key("address")
		o.b = r.Addr.AppendTo(append(o.b, '"'))
		o.b = append(o.b, '"')
	}
	o.str("protocol", string(r.Protocol))
	if r.OGP != nil {
		o.str("dialect", r.OGP.Dialect.String())
	}
	if r.Ping > 0 {
		o.key("ping_ms")
		o.b, _ = appendRounded(o.b, float64(r.Ping)/float64(time.Millisecond), 2) // a positive duration: finite
	}
	o.key("summary")
	o.b = r.Summary.AppendJSON(o.b)
	switch {
	case r.A2S != nil:
		r.A2S.appendSections(&o)
	case r.OGP != nil && r.OGP.Answer != nil:
		appendOGPSections(&o, r.OGP.Answer, r.OGP.Dialect)
	}
	o.key("errors")
	errs := beginObject(o.b)
	for _, e := range r.Errors {
		errs.anyKey(string(e.Section))
		errs.b = e.Err.appendJSON(errs.b)
	}
	o.b = errs.end()
	o.key("error")
	if r.Err != nil {
		o.b = r.Err.appendJSON(o.b)
	} else {
		o.b = append(o.b, "null"...)
	}
	return o.end()
}
