package monitor

import (
	"encoding/json"
	"time"
)

// What the rule engine keeps across restarts, in the journal: per
// server, the status its down and up rules announced, and when (their
// cooldown), and what each players and map rule announced, and when.
// The join and leave rules' per-player state is not kept: the players
// on a server are carried on from the store's open sessions, which
// raise no alert, and their cooldowns start afresh.

// savedServer is a server's rules' state, as the journal keeps it.
type savedServer struct {
	// Address and Protocol: a server pointed elsewhere starts afresh.
	Address  string      `json:"address"`
	Protocol string      `json:"protocol"`
	Status   savedStatus `json:"status"`
	Rules    []savedRule `json:"rules,omitempty"`
}

type savedStatus struct {
	Announced Status    `json:"announced,omitempty"`
	LastDown  time.Time `json:"last_down,omitzero"`
	DownSince time.Time `json:"down_since,omitzero"`
	Held      bool      `json:"held,omitempty"`
	Quiet     bool      `json:"quiet,omitempty"`
}

// savedRule is a players or map rule's state, by the rule's key.
type savedRule struct {
	Rule      string    `json:"rule"`
	Announced string    `json:"announced"`
	Side      string    `json:"side,omitempty"`
	LastSent  time.Time `json:"last_sent,omitzero"`
	Held      bool      `json:"held,omitempty"`
}

// snapshot encodes a server's rules' state; nil for a server the engine
// does not know.
func (e *ruleEngine) snapshot(server string) []byte {
	sa := e.servers[server]
	if sa == nil {
		return nil
	}
	t := sa.status
	s := savedServer{Address: sa.srv.Address, Protocol: sa.srv.Protocol,
		Status: savedStatus{Announced: t.announced, LastDown: t.lastDown, DownSince: t.downSince, Held: t.held, Quiet: t.quiet}}
	for _, rt := range sa.rules {
		if rt.known && (rt.rule.On == AlertPlayers || rt.rule.On == AlertMap) {
			s.Rules = append(s.Rules, savedRule{Rule: rt.rule.key(), Announced: rt.announced, Side: rt.side, LastSent: rt.lastSent, Held: rt.held})
		}
	}
	b, _ := json.Marshal(&s) // times and strings: it cannot fail
	return b
}

// restore takes a server's rules' state from the journal. It reports
// false when the state no longer applies: the server is gone, or points
// elsewhere, or the state cannot be read.
func (e *ruleEngine) restore(server string, state []byte) bool {
	sa := e.servers[server]
	var s savedServer
	if sa == nil || json.Unmarshal(state, &s) != nil || s.Address != sa.srv.Address || s.Protocol != sa.srv.Protocol {
		return false
	}
	switch s.Status.Announced {
	case "", StatusUp, StatusDown:
	default:
		return false
	}
	sa.status = statusTrack{announced: s.Status.Announced, lastDown: s.Status.LastDown, downSince: s.Status.DownSince,
		held: s.Status.Held, quiet: s.Status.Quiet}
	for _, r := range s.Rules {
		for _, rt := range sa.rules {
			if rt.rule.key() == r.Rule {
				rt.known, rt.announced, rt.side, rt.lastSent, rt.held = true, r.Announced, r.Side, r.LastSent, r.Held
			}
		}
	}
	return true
}
