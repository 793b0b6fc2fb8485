package result

import (
	"slices"
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/minecraft/mcquery"
	"github.com/gsq-project/gsq/rcon/mctext"
)

// MCQuery holds a Minecraft server's answer to Query (package
// minecraft/mcquery), the GameSpy 4 style status over UDP: the [Detail]
// of its Result. Its sections are info and players: the basic stat
// answers info alone, the full stat (asked when players is) both.
type MCQuery struct {
	// Basic is the basic stat, when only info was asked and it came.
	Basic *mcquery.BasicStat
	// Full is the full stat, when players was asked and it came.
	Full *mcquery.FullStat
}

// Answered reports whether a stat came.
func (q *MCQuery) Answered() bool { return q.Basic != nil || q.Full != nil }

// PlayerList returns the full stat's players, every one online (names
// decoded for display); nil without a full stat.
func (q *MCQuery) PlayerList() []Player {
	if q.Full == nil {
		return nil
	}
	out := make([]Player, len(q.Full.Players))
	for i, p := range q.Full.Players {
		out[i] = Player{Name: string(appendDecoded(nil, p))}
	}
	return out
}

func (*MCQuery) appendHead(o jsonenc.Object) jsonenc.Object { return o }

// appendSections appends "info" and, from a full stat, "players".
func (q *MCQuery) appendSections(o jsonenc.Object) jsonenc.Object {
	b := q.basic()
	if b == nil {
		return o
	}
	o.Key("info")
	in := o.Sub()
	in.Text("motd", b.MOTD)
	in.Text("game_type", b.GameType)
	in.Text("map", b.Map)
	in.Int("num_players", int64(b.NumPlayers))
	in.Int("max_players", int64(b.MaxPlayers))
	in.Uint("host_port", uint64(b.HostPort))
	in.Text("host_ip", b.HostIP)
	if f := q.Full; f != nil {
		for _, k := range [...]string{"game_id", "version", "plugins"} {
			if v, ok := f.Value(k); ok {
				in.Text(k, v)
			}
		}
		in.List("keys", len(f.KV), func(e *jsonenc.Object, i int) {
			e.Text("key", f.KV[i].Key)
			e.Text("value", f.KV[i].Value)
		})
	}
	o.B = in.End()
	if f := q.Full; f != nil {
		o.List("players", len(f.Players), func(e *jsonenc.Object, i int) {
			e.Text("name", f.Players[i])
		})
	}
	return o
}

// basic is the basic stat, or the one the full stat holds.
func (q *MCQuery) basic() *mcquery.BasicStat {
	if q.Full != nil {
		return q.Full.Basic()
	}
	return q.Basic
}

// SetMCQuery records a Query conversation's result: the stat as the info
// section (and the players section from a full stat), or the error of
// every section asked, and fills the Summary (the MOTD as plain text for
// the name, the map, the counts and, from a full stat, the version) and
// Ping from it.
func (r *Result) SetMCQuery(res *mcquery.Result, asked []Section) {
	q, ok := r.Detail.(*MCQuery)
	if !ok {
		q = new(MCQuery)
		r.Detail = q
	}
	*q, r.Summary, r.Ping = MCQuery{}, Summary{}, 0
	err := res.Err
	if err == nil && res.Basic == nil && res.Full == nil {
		err = errNoAnswer
	}
	if err == nil {
		q.Basic, q.Full = res.Basic, res.Full
		r.Ping = max(res.RTT, time.Nanosecond)
		r.Summary = mcquerySummary(q)
	}
	for _, s := range []Section{SectionInfo, SectionPlayers} {
		if slices.Contains(asked, s) {
			r.setSection(s, err)
		}
	}
}

// mcquerySummary is the Summary of a stat.
func mcquerySummary(q *MCQuery) Summary {
	var s Summary
	v := new(summaryValues)
	b := q.basic()
	name := mctext.Strip(string(appendDecoded(nil, b.MOTD)))
	var version []byte
	if q.Full != nil {
		version, _ = q.Full.Value("version")
	}
	v.setStrings([]byte(name), b.Map, nil, version, nil)
	s.Name, s.Map = &v.strs[0], &v.strs[1]
	if version != nil {
		s.Version = &v.strs[3]
	}
	if b.NumPlayers >= 0 {
		v.players = int(b.NumPlayers)
		s.Players = &v.players
	}
	if b.MaxPlayers >= 0 {
		v.maxPlayers = int(b.MaxPlayers)
		s.MaxPlayers = &v.maxPlayers
	}
	return s
}
