package rcon

import (
	"bytes"
	"strings"
	"time"

	"github.com/gsq-project/gsq/console"
)

// unsolicited publishes a packet that belongs to no request as an event:
// Squad's type-1 packets (chat, typed when they hold a chat line, and
// admin actions), legacy Rust's type-4 console lines (which also teach
// the client that the server is legacy Rust), empty packets of id -1 from
// servers other than legacy Rust (rcon++'s heartbeats), and anything else
// as a raw log event. Legacy Rust's empty packet of id -1 ends an answer:
// one that arrives after its answer was given up is dropped. p's body may
// be shared.
func (c *Client) unsolicited(p Packet) {
	if p.Type == TypeRustConsole {
		c.know.sawRustLine()
	}
	heartbeat := p.ID == -1 && p.Type == TypeResponseValue && len(p.Body) == 0
	if heartbeat && c.know.traits().rust {
		return
	}
	e := console.Event{Time: time.Now(), Kind: console.KindLog, Raw: bytes.Clone(p.Body)}
	if e.Raw == nil {
		e.Raw = []byte{}
	}
	e.Text = DecodeText(e.Raw)
	switch {
	case heartbeat:
		e.Kind = console.KindHeartbeat
	case p.Type == TypeChatValue:
		squadEvent(&e)
	}
	c.events.Publish(e)
}

// squadEvent types a Squad type-1 packet, as SquadJS reads them: a chat
// line "[ChatAll] [SteamID:76561198000000000] Name : text", whose player
// part newer servers write "[Online IDs:EOS: 0002… steam: 7656…]" (the
// channel is ChatAll, ChatTeam, ChatSquad or ChatAdmin), or an admin's
// camera, warning, kick or ban. Anything else stays a log line.
func squadEvent(e *console.Event) {
	line := strings.TrimRight(e.Text, "\r\n")
	if channel, ids, name, text, ok := squadChat(line); ok {
		e.Kind, e.Channel, e.Player, e.PlayerID, e.Text = console.KindChat, channel, name, squadPlayerID(ids), text
		return
	}
	for _, s := range []string{"possessed admin camera", "unpossessed admin camera", "Remote admin has warned", "Kicked player", "Banned player"} {
		if strings.Contains(line, s) {
			e.Kind = console.KindAdmin
			return
		}
	}
}

// squadChat splits "[ChatAll] [IDS] Name : text".
func squadChat(line string) (channel, ids, name, text string, ok bool) {
	rest, ok := strings.CutPrefix(line, "[Chat")
	if !ok {
		return "", "", "", "", false
	}
	channel, rest, ok = strings.Cut(rest, "] [")
	if !ok || channel == "" || strings.ContainsAny(channel, " []") {
		return "", "", "", "", false
	}
	ids, rest, ok = strings.Cut(rest, "] ")
	if !ok {
		return "", "", "", "", false
	}
	name, text, ok = strings.Cut(rest, " : ")
	if !ok {
		return "", "", "", "", false
	}
	return strings.ToLower(channel), ids, name, text, true
}

// squadPlayerID picks the player's id from "SteamID:7656…" or
// "Online IDs:EOS: 0002… steam: 7656…": the Steam id, else the EOS one.
func squadPlayerID(ids string) string {
	if id, ok := strings.CutPrefix(ids, "SteamID:"); ok {
		return strings.TrimSpace(id)
	}
	fields := strings.Fields(ids)
	id := ""
	for i := 0; i+1 < len(fields); i++ {
		switch strings.ToLower(fields[i]) {
		case "steam:":
			return fields[i+1]
		case "ids:eos:", "eos:":
			id = fields[i+1]
		}
	}
	return id
}
