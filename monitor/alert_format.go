package monitor

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// oneLine keeps text on one line: control characters (a newline in a
// server name, say) become spaces, so that no server can forge a second
// line in a log or a chat message.
func oneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// truncate cuts s to at most n characters (runes), ending with "…" when
// it cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// Colours of a chat message's side bar, by kind of alert.
var alertColors = map[AlertKind]int{
	AlertDown:    0xd9363e, // red
	AlertUp:      0x2e9e5b, // green
	AlertPlayers: 0x3b82c4, // blue
	AlertMap:     0x8a63d2, // purple
	AlertJoin:    0x3b82c4,
	AlertLeave:   0x7b8794, // grey
}

// alertFields are the details of an alert as name-value pairs, their
// values escaped by esc; empty values are left out (Discord rejects
// them).
func alertFields(a *Alert, esc func(string) string) [][2]string {
	var f [][2]string
	add := func(name, value string) {
		if value != "" {
			f = append(f, [2]string{name, value})
		}
	}
	if a.Server == a.Target { // a server of -f, named after its address
		add("Server", esc(a.Server)+" ("+esc(a.Protocol)+")")
	} else {
		add("Server", esc(a.Server)+" ("+esc(a.Target)+", "+esc(a.Protocol)+")")
	}
	if s := a.Summary; s != nil && s.Name != nil {
		add("Name", esc(*s.Name))
	}
	switch a.Kind {
	case AlertJoin, AlertLeave:
		add("Player", esc(a.Player))
	case AlertMap:
		add("Map", esc(a.Map))
		add("Previous map", esc(a.PreviousMap))
	case AlertDown:
		if a.Error != nil {
			add("Error", esc(string(a.Error.Kind)+": "+a.Error.Message))
		}
		if a.Since != nil {
			add("Last answer", a.Since.UTC().Format(time.RFC3339))
		}
	}
	if a.Kind != AlertMap {
		if s := a.Summary; s != nil && s.Map != nil {
			add("Map", esc(*s.Map))
		}
	}
	if s := a.Summary; s != nil && s.Players != nil {
		v := strconv.Itoa(*s.Players)
		if a.Players != nil {
			v = strconv.Itoa(*a.Players)
		}
		if s.MaxPlayers != nil {
			v += "/" + strconv.Itoa(*s.MaxPlayers)
		}
		add("Players", v)
	}
	return f
}
