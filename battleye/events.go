package battleye

import (
	"strings"
	"time"

	"github.com/gsq-project/gsq/console"
	"github.com/gsq-project/gsq/internal/textenc"
)

// chatChannels are the channels of Arma and DayZ chat, as BattlEye
// prefixes a chat line: "(Global) Name: text".
var chatChannels = []string{"Global", "Side", "Command", "Group", "Vehicle", "Direct", "System", "Unknown"}

// classify turns a server message into an event, typed where its form is
// known: chat, a player connecting or leaving, an admin logging in.
func classify(data []byte) console.Event {
	text := textenc.Decode(data)
	e := console.Event{Time: time.Now(), Kind: console.KindLog, Text: text, Raw: append([]byte(nil), data...)}
	if ch, name, msg, ok := chat(text); ok {
		e.Kind, e.Channel, e.Player, e.Text = console.KindChat, ch, name, msg
		return e
	}
	if strings.HasPrefix(text, "RCon admin #") {
		e.Kind = console.KindAdmin
		if id, _, ok := strings.Cut(text[len("RCon admin #"):], " "); ok {
			e.PlayerID = strings.TrimSuffix(id, ":")
		}
		return e
	}
	rest, ok := strings.CutPrefix(text, "Player #")
	if !ok {
		return e
	}
	id, rest, ok := strings.Cut(rest, " ")
	if !ok {
		return e
	}
	switch {
	case strings.HasSuffix(rest, " disconnected"):
		e.Kind, e.PlayerID, e.Player = console.KindLeave, id, strings.TrimSuffix(rest, " disconnected")
	case strings.Contains(rest, ") has been kicked by "):
		e.Kind, e.PlayerID = console.KindLeave, id
		e.Player = cutLastParen(rest[:strings.Index(rest, ") has been kicked by ")+1])
	case strings.HasSuffix(rest, " connected"):
		e.Kind, e.PlayerID = console.KindJoin, id
		e.Player = cutLastParen(strings.TrimSuffix(rest, " connected"))
	}
	return e
}

// chat splits "(Channel) Name: message"; an admin's "RCon admin #0:
// (Global) message" is chat too. The message is what the player said, as
// other consoles' chat events carry it (the whole line stays in Raw).
func chat(text string) (channel, name, msg string, ok bool) {
	if strings.HasPrefix(text, "RCon admin #") {
		if who, rest, found := strings.Cut(text, ": ("); found {
			if ch, msg, found := strings.Cut(rest, ") "); found && isChannel(ch) {
				return strings.ToLower(ch), who, msg, true
			}
		}
		return "", "", "", false
	}
	if !strings.HasPrefix(text, "(") {
		return "", "", "", false
	}
	ch, rest, found := strings.Cut(text[1:], ") ")
	if !found || !isChannel(ch) {
		return "", "", "", false
	}
	name, msg, found = strings.Cut(rest, ": ")
	if !found {
		return "", "", "", false
	}
	return strings.ToLower(ch), name, msg, true
}

func isChannel(s string) bool {
	for _, c := range chatChannels {
		if s == c {
			return true
		}
	}
	return false
}

// cutLastParen drops a trailing " (...)" (an address or a GUID).
func cutLastParen(s string) string {
	if strings.HasSuffix(s, ")") {
		if i := strings.LastIndex(s, " ("); i >= 0 {
			return s[:i]
		}
	}
	return s
}

// isEvent reports whether a server message has the form of an event
// rather than of command output.
func isEvent(data []byte) bool { return classify(data).Kind != console.KindLog }
