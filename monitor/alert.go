package monitor

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/result"
)

// AlertVersion is the version of the Alert JSON shape; it changes only
// when a field changes meaning or type.
const AlertVersion = 1

// Alert is one alert, as a webhook of format "json" receives it: one JSON
// object per POST. docs/monitor-config.md documents it. Server-supplied
// text (the summary's name and map, player names) is the game server's:
// a receiver that renders it as HTML or markup must escape it.
type Alert struct {
	Version  int               `json:"version"`
	Kind     AlertKind         `json:"kind"`
	Server   string            `json:"server"` // the configured name
	Target   string            `json:"target"` // HOST:PORT
	Protocol string            `json:"protocol"`
	Labels   map[string]string `json:"labels,omitempty"`
	// Time is when the monitor saw the change.
	Time time.Time `json:"time"`
	// Text says it all in one line, for people.
	Text string `json:"text"`
	// Summary is the server's last successful poll, when there was one.
	Summary *result.Summary `json:"summary,omitempty"`

	// Down: the failed polls in a row, and the last error. Since is the
	// last answer before the outage (for a server that never answered,
	// its first failed poll), for down and up alerts alike.
	Failures int           `json:"failures,omitempty"`
	Since    *time.Time    `json:"since,omitempty"`
	Error    *result.Error `json:"error,omitempty"`
	// Up: how long the server was silent, in seconds: from Since to Time.
	DowntimeSeconds float64 `json:"downtime_seconds,omitempty"`
	// Players: the count, the threshold crossed, and which way.
	Players   *int      `json:"players,omitempty"`
	Threshold int       `json:"threshold,omitempty"`
	Direction Direction `json:"direction,omitempty"`
	// Map: the new map (also in Summary) and the one before.
	Map         string `json:"map,omitempty"`
	PreviousMap string `json:"previous_map,omitempty"`
	// Join, leave: the player's name.
	Player string `json:"player,omitempty"`
	// Delayed is set when the rule's cooldown held the alert back: what it
	// says was still true when the cooldown ended.
	Delayed bool `json:"delayed,omitempty"`
	// AfterMaintenance is set on a down alert that a maintenance window
	// held back, sent at the first poll after the window found the server
	// still down.
	AfterMaintenance bool `json:"after_maintenance,omitempty"`

	rule *Rule // the rule that raised it: which webhooks it goes to
	// delivery is the idempotency key of an alert a fleet committed
	// ("server:transition"), sent as the X-Gsq-Delivery header; "" alone.
	delivery string
}

// describe says what the alert is about in one line. esc escapes text
// for the format at hand: a markup's special characters, say.
func (a *Alert) describe(esc func(string) string) string {
	name := esc(a.Server)
	var s string
	switch a.Kind {
	case AlertDown:
		s = name + " is down"
		if a.Failures > 0 {
			s += ": " + Plural(a.Failures, "poll", "polls") + " in a row failed"
		}
		switch {
		case a.Since != nil && a.Summary == nil:
			s += ", never answered in " + duration.Brief(a.Time.Sub(*a.Since))
		case a.Since != nil:
			s += ", no answer for " + duration.Brief(a.Time.Sub(*a.Since))
		}
		if a.Error != nil {
			s += " (" + esc(string(a.Error.Kind))
			if a.Error.Message != "" {
				s += ": " + esc(a.Error.Message)
			}
			s += ")"
		}
	case AlertUp:
		s = name + " is up"
		if a.DowntimeSeconds > 0 {
			s += " again after " + duration.Brief(time.Duration(a.DowntimeSeconds*float64(time.Second)))
		}
		if d := a.summaryLine(esc); d != "" {
			s += ": " + d
		}
	case AlertPlayers:
		n := 0
		if a.Players != nil {
			n = *a.Players
		}
		if a.Direction == Rising {
			s = fmt.Sprintf("%s has %s (threshold %d reached)", name, Plural(n, "player", "players"), a.Threshold)
		} else {
			s = fmt.Sprintf("%s is down to %s (below threshold %d)", name, Plural(n, "player", "players"), a.Threshold)
		}
	case AlertMap:
		s = fmt.Sprintf("%s changed map to %s", name, esc(a.Map))
		if a.PreviousMap != "" {
			s += " (from " + esc(a.PreviousMap) + ")"
		}
	case AlertJoin:
		s = fmt.Sprintf("%s joined %s", esc(a.Player), name)
	case AlertLeave:
		s = fmt.Sprintf("%s left %s", esc(a.Player), name)
	}
	if a.Delayed {
		s += " (held back by the alert cooldown)"
	}
	if a.AfterMaintenance {
		s += " (still down after its maintenance window)"
	}
	return s
}

// summaryLine is "de_dust2, 12/24 players" from the summary, or "".
func (a *Alert) summaryLine(esc func(string) string) string {
	if a.Summary == nil {
		return ""
	}
	var parts []string
	if m := a.Summary.Map; m != nil && *m != "" {
		parts = append(parts, esc(*m))
	}
	if p := a.Summary.Players; p != nil {
		if mx := a.Summary.MaxPlayers; mx != nil {
			parts = append(parts, fmt.Sprintf("%d/%d players", *p, *mx))
		} else {
			parts = append(parts, Plural(*p, "player", "players"))
		}
	}
	return strings.Join(parts, ", ")
}

// title is a short heading for chat formats.
func (a *Alert) title() string {
	switch a.Kind {
	case AlertDown:
		return "Server down"
	case AlertUp:
		return "Server up"
	case AlertPlayers:
		if a.Direction == Rising {
			return "Player count reached " + strconv.Itoa(a.Threshold)
		}
		return "Player count fell below " + strconv.Itoa(a.Threshold)
	case AlertMap:
		return "Map changed"
	case AlertJoin:
		return "Player joined"
	case AlertLeave:
		return "Player left"
	}
	return string(a.Kind)
}
