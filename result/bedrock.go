package result

import (
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/minecraft/bedrock"
	"github.com/gsq-project/gsq/rcon/mctext"
)

// Bedrock holds a Minecraft Bedrock server's status (package
// minecraft/bedrock): the [Detail] of its Result. Its one section is
// info.
type Bedrock struct {
	// Status is the status; nil when the ping failed.
	Status *bedrock.Status
	// Transport is how the status was asked (RakNet's unconnected ping).
	Transport bedrock.Transport
	// ServerGUID is the GUID the RakNet pong carried.
	ServerGUID int64
}

// Answered reports whether the server answered.
func (b *Bedrock) Answered() bool { return b.Status != nil }

// PlayerList returns nil: the pong carries counts, no names.
func (*Bedrock) PlayerList() []Player { return nil }

func (*Bedrock) appendHead(o jsonenc.Object) jsonenc.Object { return o }

// appendSections appends "info", the pong's status string field by
// field: those the server sent non-empty.
func (b *Bedrock) appendSections(o jsonenc.Object) jsonenc.Object {
	st := b.Status
	if st == nil {
		return o
	}
	o.Key("info")
	in := o.Sub()
	in.Str("transport", b.Transport.String())
	in.Int("server_guid", b.ServerGUID)
	texts := [...]struct {
		k string
		v bedrock.Text
	}{{"edition", st.Edition}, {"motd", st.MOTD}, {"version", st.Version}, {"server_id", st.ServerID},
		{"level_name", st.LevelName}, {"game_mode", st.GameMode}}
	ints := [...]struct {
		k string
		v *int32
	}{{"protocol", st.Protocol}, {"online", st.Online}, {"max", st.Max}, {"game_mode_id", st.GameModeID},
		{"port_v4", st.PortV4}, {"port_v6", st.PortV6}}
	for _, t := range texts {
		if t.v != nil {
			in.Text(t.k, t.v)
		}
	}
	for _, n := range ints {
		if n.v != nil {
			in.Int(n.k, int64(*n.v))
		}
	}
	if st.Extra != nil {
		in.List("extra", len(st.Extra), func(e *jsonenc.Object, i int) { e.Text("value", st.Extra[i]) })
	}
	o.B = in.End()
	return o
}

// SetBedrock records a Bedrock ping's result: the status as the info
// section, or the error, and fills the Summary (the MOTD as plain text
// for the name, the level name as the map, the counts, the version) and
// Ping from it.
func (r *Result) SetBedrock(res *bedrock.Result) {
	b, ok := r.Detail.(*Bedrock)
	if !ok {
		b = new(Bedrock)
		r.Detail = b
	}
	*b, r.Summary, r.Ping = Bedrock{}, Summary{}, 0
	err := res.Err
	if err == nil && res.Status == nil {
		err = errNoAnswer
	}
	if err == nil {
		b.Status, b.Transport = res.Status, res.Transport
		if res.Pong != nil {
			b.ServerGUID = res.Pong.ServerGUID
		}
		r.Ping = max(res.RTT, time.Nanosecond)
		r.Summary = bedrockSummary(res.Status)
	}
	r.setSection(SectionInfo, err)
}

// bedrockSummary is the Summary of a Bedrock status.
func bedrockSummary(st *bedrock.Status) Summary {
	var s Summary
	v := new(summaryValues)
	name := mctext.Strip(string(appendDecoded(nil, st.MOTD)))
	v.setStrings([]byte(name), st.LevelName, nil, st.Version, nil)
	if st.MOTD != nil {
		s.Name = &v.strs[0]
	}
	if st.LevelName != nil {
		s.Map = &v.strs[1]
	}
	if st.Version != nil {
		s.Version = &v.strs[3]
	}
	if st.Online != nil {
		v.players = int(*st.Online)
		s.Players = &v.players
	}
	if st.Max != nil {
		v.maxPlayers = int(*st.Max)
		s.MaxPlayers = &v.maxPlayers
	}
	return s
}
