package result

import (
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/webrcon"
)

// WebRcon holds what a Rust server's WebRCON answered to "serverinfo"
// (the info section) and "playerlist" (players): the [Detail] of its
// Result. A nil field did not answer, or was not asked for.
type WebRcon struct {
	Info    *webrcon.ServerInfo
	Players []webrcon.Player // empty when nobody is on
}

// WebRconAnswer is what one poll of a WebRCON server got: each command's
// answer or error, and the round trip of the first.
type WebRconAnswer struct {
	Info       *webrcon.ServerInfo
	InfoErr    error
	Players    []webrcon.Player
	PlayersErr error
	RTT        time.Duration
}

// Answered reports whether a command answered.
func (w *WebRcon) Answered() bool { return w.Info != nil || w.Players != nil }

// PlayerList returns playerlist's players: the name and the time
// connected (Rust reports no score); nil when it did not answer.
func (w *WebRcon) PlayerList() []Player {
	if w.Players == nil {
		return nil
	}
	out := make([]Player, len(w.Players))
	for i, p := range w.Players {
		out[i] = Player{Name: p.DisplayName, Duration: time.Duration(p.ConnectedSeconds) * time.Second}
	}
	return out
}

func (*WebRcon) appendHead(o jsonenc.Object) jsonenc.Object { return o }

// appendSections appends "info" (serverinfo's fields under snake_case
// names) and "players" ([{steam_id, name, ping, connected_seconds,
// health}]), those that answered. Players' addresses are left out: they
// are personal.
func (w *WebRcon) appendSections(o jsonenc.Object) jsonenc.Object {
	if in := w.Info; in != nil {
		o.Key("info")
		i := o.Sub()
		i.Str("hostname", in.Hostname)
		i.Str("map", in.Map)
		i.Int("players", int64(in.Players))
		i.Int("max_players", int64(in.MaxPlayers))
		i.Int("queued", int64(in.Queued))
		i.Int("joining", int64(in.Joining))
		i.Int("entity_count", int64(in.EntityCount))
		i.Str("game_time", in.GameTime)
		i.Int("uptime", int64(in.Uptime))
		i.Float("framerate", in.Framerate)
		i.Int("memory", int64(in.Memory))
		i.Int("network_in", int64(in.NetworkIn))
		i.Int("network_out", int64(in.NetworkOut))
		i.Bool("restarting", in.Restarting)
		i.Str("save_created_time", in.SaveCreatedTime)
		o.B = i.End()
	}
	if w.Players != nil {
		o.List("players", len(w.Players), func(e *jsonenc.Object, i int) {
			p := &w.Players[i]
			e.Str("steam_id", p.SteamID)
			e.Str("name", p.DisplayName)
			e.Int("ping", int64(p.Ping))
			e.Int("connected_seconds", int64(p.ConnectedSeconds))
			e.Float("health", p.Health)
		})
	}
	return o
}

// SetWebRcon records what a WebRCON server answered (a), each section
// asked (info, players) with its answer or error, and fills the Summary
// from serverinfo (the host name, the map, the counts) or, without it,
// the player count from playerlist.
func (r *Result) SetWebRcon(a *WebRconAnswer, asked []Section) {
	w, ok := r.Detail.(*WebRcon)
	if !ok {
		w = new(WebRcon)
		r.Detail = w
	}
	w.Info, w.Players, r.Summary, r.Ping = nil, nil, Summary{}, 0
	for _, s := range asked {
		var err error
		switch s {
		case SectionInfo:
			w.Info, err = a.Info, a.InfoErr
			if err == nil && w.Info == nil {
				err = errNoAnswer
			}
		case SectionPlayers:
			w.Players, err = a.Players, a.PlayersErr
			if err == nil && w.Players == nil {
				w.Players = []webrcon.Player{}
			}
		default:
			continue
		}
		r.setSection(s, err)
	}
	if w.Answered() {
		r.Ping = max(a.RTT, time.Nanosecond)
	}
	v := new(summaryValues)
	if in := w.Info; in != nil {
		v.setStrings([]byte(in.Hostname), []byte(in.Map))
		v.players, v.maxPlayers = in.Players, in.MaxPlayers
		r.Summary.Name, r.Summary.Map = &v.strs[0], &v.strs[1]
		r.Summary.Players, r.Summary.MaxPlayers = &v.players, &v.maxPlayers
	} else if w.Players != nil {
		v.players = len(w.Players)
		r.Summary.Players = &v.players
	}
}
