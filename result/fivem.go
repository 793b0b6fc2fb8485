package result

import (
	"slices"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/internal/jsonenc"
)

// SectionDynamic is FiveM's /dynamic.json: the host name, the player
// count and limit, the game type and the map. SectionInfo is its
// /info.json, SectionPlayers its /players.json.
const SectionDynamic Section = "dynamic"

// FiveM holds the answers of a FiveM (or RedM) server's HTTP endpoints:
// the [Detail] of its Result. A nil field did not answer, or was not
// asked for.
type FiveM struct {
	Info    *fivem.Info
	Dynamic *fivem.Dynamic
	// Players is /players.json's list; nil when it did not answer (many
	// servers disable it), empty when nobody is on.
	Players []fivem.Player
}

// Answered reports whether an endpoint answered.
func (f *FiveM) Answered() bool { return f.Info != nil || f.Dynamic != nil || f.Players != nil }

// PlayerList returns /players.json's players (names as sent, no score
// or time: the endpoint has neither), nil when it did not answer.
func (f *FiveM) PlayerList() []Player {
	if f.Players == nil {
		return nil
	}
	out := make([]Player, len(f.Players))
	for i, p := range f.Players {
		out[i] = Player{Name: p.Name}
	}
	return out
}

func (*FiveM) appendHead(o jsonenc.Object) jsonenc.Object { return o }

// appendSections appends "info", "dynamic" and "players", those that
// answered. The icon, the players' addresses and their identifiers are
// left out: they are large, or personal.
func (f *FiveM) appendSections(o jsonenc.Object) jsonenc.Object {
	if in := f.Info; in != nil {
		o.Key("info")
		i := o.Sub()
		i.Str("server", in.Server)
		i.Int("version", in.Version)
		i.Str("game", in.Game())
		i.Strings("resources", in.Resources)
		i.Key("vars")
		vars := i.Sub()
		keys := make([]string, 0, len(in.Vars))
		for k := range in.Vars {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			vars.AnyKey(k)
			vars.B = jsonenc.AppendString(vars.B, in.Vars[k], vars.HTML)
		}
		i.B = vars.End()
		o.B = i.End()
	}
	if d := f.Dynamic; d != nil {
		o.Key("dynamic")
		j := o.Sub()
		j.Str("hostname", d.Hostname)
		j.Int("clients", int64(d.Clients))
		j.Int("max_clients", int64(d.MaxClients))
		j.Str("game_type", d.GameType)
		j.Str("map_name", d.MapName)
		o.B = j.End()
	}
	if f.Players != nil {
		o.List("players", len(f.Players), func(e *jsonenc.Object, i int) {
			p := &f.Players[i]
			e.Int("id", p.ID)
			e.Str("name", p.Name)
			e.Int("ping", p.Ping)
		})
	}
	return o
}

// SetFiveM records what a FiveM server's endpoints answered (res), each
// endpoint asked as its section (info, dynamic, players) with its answer
// or error, and fills the Summary from /dynamic.json (the host name, the
// counts, the map and game type) and /info.json (the build, the limit
// and the project name when /dynamic.json did not answer). asked says
// which sections were asked; the others are left as they are.
func (r *Result) SetFiveM(res *fivem.Result, asked []Section) {
	f, ok := r.Detail.(*FiveM)
	if !ok {
		f = new(FiveM)
		r.Detail = f
	}
	f.Info, f.Dynamic, f.Players, r.Summary, r.Ping = nil, nil, nil, Summary{}, 0
	for _, s := range asked {
		var err error
		switch s {
		case SectionInfo:
			f.Info, err = res.Info, res.InfoErr
			if err == nil && f.Info == nil {
				err = errNoAnswer
			}
		case SectionDynamic:
			f.Dynamic, err = res.Dynamic, res.DynamicErr
			if err == nil && f.Dynamic == nil {
				err = errNoAnswer
			}
		case SectionPlayers:
			f.Players, err = res.Players, res.PlayersErr
			if err == nil && f.Players == nil {
				f.Players = []fivem.Player{}
			}
		default:
			continue
		}
		r.setSection(s, err)
	}
	if f.Answered() {
		r.Ping = max(res.RTT, time.Nanosecond)
	}
	r.Summary = fivemSummary(f)
}

// fivemSummary is the Summary of what a FiveM server answered.
func fivemSummary(f *FiveM) Summary {
	var s Summary
	v := new(summaryValues)
	var name, mp, game, version []byte
	if d := f.Dynamic; d != nil {
		name, mp, game = []byte(d.Hostname), []byte(d.MapName), []byte(d.GameType)
		v.players, v.maxPlayers = d.Clients, d.MaxClients
		s.Players, s.MaxPlayers = &v.players, &v.maxPlayers
	}
	if in := f.Info; in != nil {
		version = strconv.AppendInt(nil, in.Version, 10)
		if name == nil && in.ProjectName() != "" {
			name = []byte(in.ProjectName())
		}
		if s.MaxPlayers == nil && in.MaxClients() > 0 {
			v.maxPlayers = in.MaxClients()
			s.MaxPlayers = &v.maxPlayers
		}
	}
	if s.Players == nil && f.Players != nil {
		v.players = len(f.Players)
		s.Players = &v.players
	}
	raws := [...][]byte{name, mp, game, version}
	v.setStrings(raws[0], raws[1], raws[2], raws[3], nil)
	for i, dst := range [...]**string{&s.Name, &s.Map, &s.Game, &s.Version} {
		if raws[i] != nil {
			*dst = &v.strs[i]
		}
	}
	return s
}
