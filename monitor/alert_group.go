package monitor

import (
	"fmt"
	"net"
	"strings"
	"time"
	"unicode/utf8"
)

// Alerts that happen together go to a webhook as one message: when a
// host with many servers goes down, its webhook gets "37 servers on
// 203.0.113.10 are down" and the list, not 37 messages. The Alerter
// waits the config's alert_group_window after the first alert of a
// quiet webhook before it sends, and every message takes what waits
// then, as much as one message of the webhook's format holds; what a
// rate limit or a retry holds back joins the next message. A message of
// one alert is that alert's own message, as without grouping.

// group is the part of a message's alerts about one thing: one kind of
// alert, and for down and up alerts one host.
type group struct {
	kind  AlertKind
	host  string // down and up only
	count int
}

// groupsOf sorts alerts into groups, in the order of their first alert.
func groupsOf(alerts []*Alert) []group {
	var gs []group
	index := map[group]int{}
	for _, a := range alerts {
		k := group{kind: a.Kind}
		if a.Kind == AlertDown || a.Kind == AlertUp {
			k.host = alertHost(a.Target)
		}
		i, ok := index[k]
		if !ok {
			i = len(gs)
			index[k] = i
			gs = append(gs, k)
		}
		gs[i].count++
	}
	return gs
}

// alertHost is the host of a HOST:PORT target, or the target itself.
func alertHost(target string) string {
	if h, _, err := net.SplitHostPort(target); err == nil {
		return h
	}
	return target
}

// Plural is "1 server" or "37 servers": n and the word for its number.
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// phrase says what a group is about: "37 servers on 203.0.113.10 are
// down". esc escapes the host for the format at hand.
func (g group) phrase(esc func(string) string) string {
	switch g.kind {
	case AlertDown:
		return fmt.Sprintf("%s on %s %s down", Plural(g.count, "server", "servers"), esc(g.host), isAre(g.count))
	case AlertUp:
		return fmt.Sprintf("%s on %s %s up again", Plural(g.count, "server", "servers"), esc(g.host), isAre(g.count))
	case AlertPlayers:
		return Plural(g.count, "player count crossed its threshold", "player counts crossed their thresholds")
	case AlertMap:
		return Plural(g.count, "map change", "map changes")
	case AlertJoin:
		return Plural(g.count, "player joined", "players joined")
	case AlertLeave:
		return Plural(g.count, "player left", "players left")
	}
	return Plural(g.count, string(g.kind)+" alert", string(g.kind)+" alerts")
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// maxHeadlineGroups is how many groups a headline names before it counts
// the rest.
const maxHeadlineGroups = 3

// headline says what a message of several alerts is about, in one line:
// "37 servers on 203.0.113.10 are down; 2 servers on 198.51.100.7 are up
// again". A message of one alert is that alert's line.
func headline(alerts []*Alert, esc func(string) string) string {
	if len(alerts) == 1 {
		return alerts[0].describe(esc)
	}
	gs := groupsOf(alerts)
	var parts []string
	rest := 0
	for i, g := range gs {
		if i < maxHeadlineGroups {
			parts = append(parts, g.phrase(esc))
		} else {
			rest += g.count
		}
	}
	s := strings.Join(parts, "; ")
	if rest > 0 {
		s += "; " + Plural(rest, "more alert", "more alerts")
	}
	return s
}

// groupKind is the kind of a message's alerts when they are all of one
// kind, or "".
func groupKind(alerts []*Alert) AlertKind {
	k := alerts[0].Kind
	for _, a := range alerts[1:] {
		if a.Kind != k {
			return ""
		}
	}
	return k
}

// latest is the time of a message's newest alert.
func latest(alerts []*Alert) time.Time {
	t := alerts[0].Time
	for _, a := range alerts[1:] {
		if a.Time.After(t) {
			t = a.Time
		}
	}
	return t
}

// AlertGroup is the body of a "json" message that carries several
// alerts (a message of one alert is the [Alert] itself): kind "group",
// a line that sums them up, and each alert in full.
type AlertGroup struct {
	Version int       `json:"version"`
	Kind    string    `json:"kind"` // "group"
	Time    time.Time `json:"time"` // the newest alert's
	Text    string    `json:"text"`
	Count   int       `json:"count"`
	Alerts  []*Alert  `json:"alerts"`
}

// listLines lists the first alerts, a line each ("• " and the alert's
// line cut to lineMax characters), as many as fit in budget characters,
// and at least one; it returns the list and how many it holds.
func listLines(alerts []*Alert, esc func(string) string, lineMax, budget int) (string, int) {
	var b strings.Builder
	n, size := 0, 0
	for _, a := range alerts {
		line := "• " + truncate(a.describe(esc), lineMax)
		l := utf8.RuneCountInString(line) + 1
		if n > 0 && size+l > budget {
			break
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
		size += l
		n++
	}
	return b.String(), n
}
