package protocol

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/result"
)

// A2S is Valve's server queries over UDP: package a2s, whose Conversation
// asks info, players and rules, challenge and split replies included.
var A2S = &Protocol{
	Name:            "a2s",
	Title:           "Valve's server queries (A2S)",
	DefaultPort:     a2s.DefaultPort,
	Transport:       UDP,
	Sections:        []result.Section{result.SectionInfo, result.SectionPlayers, result.SectionRules},
	DefaultSections: []result.Section{result.SectionInfo, result.SectionPlayers, result.SectionRules},
	Options: []Option{
		{Name: "pad-info", Values: boolValues,
			Usage: "pad A2S_INFO requests to 1200 bytes, Valve's 2020 alternative to the challenge: servers that accept it answer one round trip sooner"},
		{Name: "legacy-challenge", Values: boolValues,
			Usage: "fetch a missing challenge with the deprecated A2S_SERVERQUERY_GETCHALLENGE request"},
		{Name: "max-challenges", Usage: "new challenges accepted from one server (default 3)"},
	},
	Describe:      a2s.Describe,
	PortHint:      "the query port often differs from the game port (try the server's query port, commonly 27015 or game port + 1)",
	ErrIncomplete: a2s.ErrIncomplete,
	prepare:       prepareA2S,
}

var boolValues = []string{"true", "false"}

// a2sSections maps the sections of a result to those of a conversation.
var a2sSections = map[result.Section]a2s.Sections{
	result.SectionInfo:    a2s.SectionInfo,
	result.SectionPlayers: a2s.SectionPlayers,
	result.SectionRules:   a2s.SectionRules,
}

func prepareA2S(p *Protocol, sections []result.Section, s Settings) (Query, error) {
	q := &a2sQuery{asking: asking{p: p, detail: func() result.Detail { return new(result.A2S) }}}
	for _, sec := range p.Sections { // in answer order, whatever the order asked
		if slices.Contains(sections, sec) {
			q.sections = append(q.sections, sec)
			q.opts.Sections |= a2sSections[sec]
		}
	}
	var err error
	if q.opts.PadInfo, err = p.boolOption(s, "pad-info"); err != nil {
		return nil, err
	}
	if q.opts.LegacyChallenge, err = p.boolOption(s, "legacy-challenge"); err != nil {
		return nil, err
	}
	if v, _ := p.option(s, "max-challenges"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("a2s option max-challenges: %q is not a number from 1 up", v)
		}
		q.opts.MaxChallenges = n
	}
	return q, nil
}

// a2sQuery asks A2S servers the sections of opts.
type a2sQuery struct {
	asking
	opts a2s.Options // the template of every conversation
}

// a2sConversation is an a2s.Conversation with the options it reads, and
// room for what Record returns.
type a2sConversation struct {
	a2s.Conversation
	opts  a2s.Options
	ended [3]result.Section
}

func (q *a2sQuery) Start(w Waits, addr netip.AddrPort, challenge uint32, hasChallenge bool) Conversation {
	c := &a2sConversation{opts: q.opts}
	c.opts.Timeout, c.opts.MaxTimeout, c.opts.Retries, c.opts.Deadline, c.opts.Serial =
		w.Timeout, w.MaxTimeout, w.Retries, w.Deadline, w.Serial
	c.Conversation.Start(&c.opts, addr, challenge, hasChallenge)
	return c
}

// Record records the sections the conversation has ended, each with its
// value or error, and the round trip as the Ping. What it returns is
// valid until the next Record of conv.
func (q *a2sQuery) Record(conv Conversation, r *result.Result) []result.Section {
	c := conv.(*a2sConversation)
	ended, res := c.Ended(), c.Result()
	part := a2s.Result{RTT: res.RTT}
	out := c.ended[:0]
	for _, s := range q.sections {
		if ended&a2sSections[s] == 0 {
			continue
		}
		out = append(out, s)
		switch s {
		case result.SectionInfo:
			part.Info, part.GoldSource, part.InfoErr = res.Info, res.GoldSource, res.InfoErr
		case result.SectionPlayers:
			part.Players, part.PlayersErr = res.Players, res.PlayersErr
		case result.SectionRules:
			part.Rules, part.RulesErr = res.Rules, res.RulesErr
		}
	}
	if len(out) == 0 {
		return nil
	}
	r.SetA2S(&part)
	return out
}

// boolOption reads the option name of s as true or false (absent: false).
func (p *Protocol) boolOption(s Settings, name string) (bool, error) {
	v, err := p.option(s, name)
	return v == "true", err
}
