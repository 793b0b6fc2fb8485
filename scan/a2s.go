package scan

import (
	"errors"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/result"
)

// A2S asks each server the Valve A2S queries. With every section false it
// asks for info, players and rules. The conversation with each server is
// an [a2s.Conversation], the one a2s.Client has.
type A2S struct {
	Info    bool // A2S_INFO
	Players bool // A2S_PLAYER
	Rules   bool // A2S_RULES
	// MaxChallenges bounds the new challenges accepted from one server;
	// 0 means a2s.DefaultMaxChallenges.
	MaxChallenges int
	// LegacyChallenge fetches a missing challenge for A2S_PLAYER and
	// A2S_RULES with A2S_SERVERQUERY_GETCHALLENGE (see a2s.Query).
	LegacyChallenge bool
	// PadInfo pads A2S_INFO requests to a2s.PaddedInfoSize bytes, which
	// servers that accept it answer without a challenge (see a2s.Query).
	PadInfo bool
}

// DefaultPort is the usual A2S query port.
func (A2S) DefaultPort() uint16 { return 27015 }

func (A2S) protocol() {}

func (A2S) resultProtocol() result.Protocol { return result.A2SProtocol }

// sections is what p asks.
func (p A2S) sections() a2s.Sections {
	var s a2s.Sections
	if p.Info {
		s |= a2s.SectionInfo
	}
	if p.Players {
		s |= a2s.SectionPlayers
	}
	if p.Rules {
		s |= a2s.SectionRules
	}
	if s == 0 {
		s = a2s.AllSections
	}
	return s
}

// query is the template of the scan's conversations: retries is the
// number of resends (0 for none), deadline the Scanner's.
func (p A2S) query(retries int, deadline time.Duration, serial bool) a2s.Query {
	q := a2s.Query{
		Sections:        p.sections(),
		Retries:         retries,
		Deadline:        deadline,
		MaxChallenges:   p.MaxChallenges,
		LegacyChallenge: p.LegacyChallenge,
		PadInfo:         p.PadInfo,
		Serial:          serial,
	}
	if retries == 0 {
		q.Retries = -1
	}
	return q
}

// a2sStatus classifies the result of a conversation that asked sections.
func a2sStatus(r *a2s.Result, sections a2s.Sections) Status {
	var ok, timeouts, unreachable, failures int
	for i, err := range [...]error{r.InfoErr, r.PlayersErr, r.RulesErr} {
		switch {
		case sections&(1<<i) == 0:
		case err == nil:
			ok++
		case errors.Is(err, a2s.ErrUnreachable):
			unreachable++
		case errors.Is(err, a2s.ErrTimeout):
			timeouts++
		default:
			failures++
		}
	}
	switch {
	case failures+timeouts+unreachable == 0:
		return StatusAnswered
	case ok > 0:
		return StatusPartial
	case unreachable > 0:
		return StatusUnreachable
	case failures == 0:
		return StatusTimedOut
	}
	return StatusFailed
}
