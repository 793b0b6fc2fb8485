package result

import (
	"errors"
	"net/netip"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/bohemia"
	"github.com/gsq-project/gsq/internal/jsonenc"
)

// SectionMods is the DayZ mod list that a Result decodes from an A2S
// server's rules.
const SectionMods Section = "mods"

// A2S holds the answers of an A2S server: the [Detail] of its Result. A
// nil field did not answer, or was not asked for.
type A2S struct {
	Info *a2s.Info
	// GoldSource is the obsolete 'm' reply of a GoldSource server that
	// answered A2S_INFO twice, with 'm' and then 'I'; Info holds the 'I'
	// reply then.
	GoldSource *a2s.Info
	Players    *a2s.Players
	Rules      *a2s.Rules
	// Mods is the DayZ mod list carried in binary rules (the DayZ Server
	// Browser Protocol), decoded; nil when the rules carry none.
	Mods *bohemia.Browser
}

// Answered reports whether info, players or rules answered.
func (a *A2S) Answered() bool { return a.Info != nil || a.Players != nil || a.Rules != nil }

// PlayerList returns the A2S_PLAYER list, nil when it did not answer.
func (a *A2S) PlayerList() []Player {
	if a.Players == nil {
		return nil
	}
	out := make([]Player, 0, len(a.Players.List))
	for _, p := range a.Players.List {
		d := time.Duration(max(0, float64(p.Duration)) * float64(time.Second))
		out = append(out, Player{Name: p.Name.UTF8(), Score: int64(p.Score), Duration: d})
	}
	return out
}

func (*A2S) appendHead(o jsonenc.Object) jsonenc.Object { return o }

// SetA2S records the outcome of an A2S conversation (a2s.Client.Query,
// or an a2s.Conversation that is done): each section that holds an
// answer or an error, with the round-trip time as Ping. A section the
// conversation was not asked has neither, and is left as it is. A2A_PING
// has no place in a Result.
func (r *Result) SetA2S(res *a2s.Result) {
	if res.Info != nil || res.InfoErr != nil {
		r.SetA2SInfo(&a2s.InfoResult{Info: res.Info, GoldSource: res.GoldSource, RTT: res.RTT}, res.InfoErr)
	}
	if res.Players != nil || res.PlayersErr != nil {
		r.SetA2SPlayers(res.Players, res.PlayersErr)
	}
	if res.Rules != nil || res.RulesErr != nil {
		r.SetA2SRules(res.Rules, res.RulesErr)
	}
}

// SetA2SInfo records the answer to A2S_INFO (res), or its error, and
// fills the Summary and Ping from it.
func (r *Result) SetA2SInfo(res *a2s.InfoResult, err error) {
	a := r.a2s()
	a.Info, a.GoldSource, r.Summary, r.Ping = nil, nil, Summary{}, 0
	if err == nil && res != nil && res.Info != nil {
		a.Info = res.Info
		if res.GoldSource != res.Info {
			a.GoldSource = res.GoldSource
		}
		r.Ping = res.RTT
		r.Summary = a2sSummary(res.Info, r.Addr)
	} else if err == nil {
		err = errNoAnswer
	}
	r.setSection(SectionInfo, err)
}

// SetA2SPlayers records the answer to A2S_PLAYER, or its error.
func (r *Result) SetA2SPlayers(p *a2s.Players, err error) {
	a := r.a2s()
	a.Players = nil
	if err == nil && p == nil {
		err = errNoAnswer
	}
	if err == nil {
		a.Players = p
	}
	r.setSection(SectionPlayers, err)
}

// SetA2SRules records the answer to A2S_RULES, or its error. Rules that
// carry DayZ's binary mod list have it decoded into A2S.Mods; when that
// list does not decode, the mods section fails with a protocol error.
func (r *Result) SetA2SRules(rules *a2s.Rules, err error) {
	a := r.a2s()
	a.Rules, a.Mods = nil, nil
	r.clearSection(SectionMods)
	if err == nil && rules == nil {
		err = errNoAnswer
	}
	if err == nil {
		a.Rules = rules
	}
	r.setSection(SectionRules, err)
	if err != nil {
		return
	}
	msg, _, merr := bohemia.Message(rules.List)
	if errors.Is(merr, bohemia.ErrNoMessage) {
		return
	}
	if merr == nil {
		a.Mods, merr = bohemia.Decode(msg)
	}
	if merr != nil {
		a.Mods = nil
		r.failSection(SectionMods, &Error{Kind: KindProtocol, Message: merr.Error(), Err: merr})
	}
}

// errNoAnswer stands for a nil answer given without an error.
var errNoAnswer = errors.New("result: no answer and no error")

// a2s returns r's A2S detail, making it when r has none.
func (r *Result) a2s() *A2S {
	a, ok := r.Detail.(*A2S)
	if !ok {
		a = new(A2S)
		r.Detail = a
	}
	return a
}

// a2sSummary is the Summary of an A2S_INFO reply from addr.
func a2sSummary(in *a2s.Info, addr netip.AddrPort) Summary {
	v := new(summaryValues)
	v.players, v.maxPlayers = in.PlayerCounts()
	v.bots, v.password = int(in.Bots), in.Visibility != 0
	s := Summary{Name: &v.strs[0], Map: &v.strs[1], Game: &v.strs[2],
		Players: &v.players, MaxPlayers: &v.maxPlayers, Password: &v.password}
	if !in.NoBots {
		s.Bots = &v.bots
	}
	var version, connect []byte
	if in.Format != a2s.TypeInfoReplyGoldSource {
		version = in.Version
		s.Version = &v.strs[3]
	}
	var cb [64]byte
	if port := connectPort(in); port != 0 && addr.IsValid() {
		connect = netip.AddrPortFrom(addr.Addr(), port).AppendTo(cb[:0])
		s.Connect = &v.strs[4]
	}
	v.setStrings(in.Name, in.Map, in.Game, version, connect)
	return s
}

// connectPort is the game port an A2S_INFO reply announces: the EDF port
// of a Source reply, the port of a GoldSource reply's address; 0 when
// there is none.
func connectPort(in *a2s.Info) uint16 {
	if in.Format == a2s.TypeInfoReplyGoldSource {
		if ap, err := netip.ParseAddrPort(string(in.Address)); err == nil {
			return ap.Port()
		}
		return 0
	}
	if in.EDF&a2s.EDFPort != 0 {
		return in.Port
	}
	return 0
}

// appendSections appends the A2S sections that answered.
func (a *A2S) appendSections(o jsonenc.Object) jsonenc.Object {
	if a.Info != nil {
		o.Key("info")
		info := appendInfo(o.B, a.Info, a.GoldSource)
		o.B = info
	}
	if a.Players != nil {
		o.Key("players")
		o.B = appendPlayers(o.B, a.Players)
	}
	if a.Rules != nil {
		o.Key("rules")
		o.B = appendRules(o.B, a.Rules)
	}
	if a.Mods != nil {
		o.Key("mods")
		o.B = appendMods(o.B, a.Mods)
	}
	return o
}

// appendInfo appends an A2S_INFO reply; gold, when set, is the 'm' reply
// of a server that also sent in, nested as "goldsource".
func appendInfo(b []byte, in, gold *a2s.Info) []byte {
	o := jsonenc.Begin(b, false)
	source := in.Format != a2s.TypeInfoReplyGoldSource
	if source {
		o.Str("format", "source")
	} else {
		o.Str("format", "goldsource")
		o.Text("server_address", in.Address)
	}
	o.Uint("protocol", uint64(in.Protocol))
	o.Text("name", in.Name)
	o.Text("map", in.Map)
	o.Text("folder", in.Folder)
	o.Text("game", in.Game)
	if source {
		o.Uint("app_id", uint64(in.AppID()))
	}
	players, maxPlayers := in.PlayerCounts()
	o.Int("players", int64(players))
	o.Int("max_players", int64(maxPlayers))
	if players != int(in.Players) || maxPlayers != int(in.MaxPlayers) {
		// Servers with more than 255 slots wrap the count bytes and carry
		// the real numbers in their keywords; keep what the bytes said.
		o.Uint("players_byte", uint64(in.Players))
		o.Uint("max_players_byte", uint64(in.MaxPlayers))
	}
	if !in.NoBots {
		o.Uint("bots", uint64(in.Bots))
	}
	o.Str("server_type", in.ServerType.String())
	o.Str("environment", in.Environment.String())
	if in.Visibility == 0 {
		o.Str("visibility", "public")
	} else {
		o.Str("visibility", "private")
	}
	o.Bool("vac", in.VAC == 1)
	if m := in.Mod; m != nil {
		o.Key("mod")
		mo := jsonenc.Begin(o.B, false)
		mo.Text("link", m.Link)
		mo.Text("download_link", m.DownloadLink)
		mo.Uint("version", uint64(m.Version))
		mo.Uint("size", uint64(m.Size))
		mo.Bool("multiplayer_only", m.Type == 1)
		mo.Bool("own_dll", m.DLL == 1)
		o.B = mo.End()
	}
	if s := in.Ship; s != nil {
		o.Key("ship")
		so := jsonenc.Begin(o.B, false)
		so.Uint("mode", uint64(s.Mode))
		so.Uint("witnesses", uint64(s.Witnesses))
		so.Uint("duration", uint64(s.Duration))
		o.B = so.End()
	}
	if source {
		o.Text("version", in.Version)
	}
	if in.EDF&a2s.EDFPort != 0 {
		o.Uint("port", uint64(in.Port))
	}
	if in.EDF&a2s.EDFSteamID != 0 {
		o.Uint("steam_id", in.SteamID)
	}
	if in.EDF&a2s.EDFKeywords != 0 {
		o.Text("keywords", in.Keywords)
	}
	if in.EDF&a2s.EDFGameID != 0 {
		o.Uint("game_id", in.GameID)
	}
	appendTags(&o, in)
	if in.EDF&a2s.EDFSpectator != 0 {
		o.Uint("spectator_port", uint64(in.SpectatorPort))
		o.Text("spectator_name", in.SpectatorName)
	}
	if gold != nil {
		o.Key("goldsource")
		o.B = appendInfo(o.B, gold, nil)
	}
	return o.End()
}

// appendPlayers appends an A2S_PLAYER reply as a list. It and
// appendRules write each member by hand into a local buffer: a list holds
// hundreds of members, and this is the bulk of a scan's output.
func appendPlayers(b []byte, p *a2s.Players) []byte {
	b = append(b, '[')
	for i := range p.List {
		pl := &p.List[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"index":`...)
		b = strconv.AppendUint(b, uint64(pl.Index), 10)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendText(b, "name", pl.Name, false)
		b = append(b, `,"score":`...)
		b = strconv.AppendInt(b, int64(pl.Score), 10)
		mark := len(b)
		b = append(b, `,"duration":`...)
		if nb, ok := jsonenc.AppendRounded(b, float64(pl.Duration), 3); ok {
			b = nb
		} else {
			b = b[:mark] // left out: not a finite number
		}
		if p.Ship {
			b = append(b, `,"deaths":`...)
			b = strconv.AppendInt(b, int64(pl.Deaths), 10)
			b = append(b, `,"money":`...)
			b = strconv.AppendInt(b, int64(pl.Money), 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendRules appends an A2S_RULES reply as a list.
func appendRules(b []byte, r *a2s.Rules) []byte {
	b = append(b, '[')
	for i := range r.List {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = jsonenc.AppendText(b, "name", r.List[i].Name, false)
		b = append(b, `,"value":`...)
		b = jsonenc.AppendText(b, "value", r.List[i].Value, false)
		b = append(b, '}')
	}
	return append(b, ']')
}

// Steam AppIDs of the games whose keywords carry tags the JSON decodes.
const (
	appDayZ  = 221100
	appArma3 = 107410
)

// appendTags appends the keyword tags of DayZ and Arma 3 servers, found
// by AppID, as info.dayz or info.arma3.
func appendTags(info *jsonenc.Object, in *a2s.Info) {
	if in.EDF&a2s.EDFKeywords == 0 {
		return
	}
	switch in.AppID() {
	case appDayZ:
		t := bohemia.ParseDayZTags(in.Keywords.UTF8())
		info.Key("dayz")
		o := jsonenc.Begin(info.B, false)
		o.Bool("official", t.Official())
		o.Bool("battleye", t.BattlEye)
		o.Bool("first_person", t.FirstPerson)
		o.Bool("external", t.External)
		o.Bool("private_hive", t.PrivateHive)
		o.Bool("mods", t.Mods)
		o.Bool("dlc", t.DLC)
		o.Str("shard", t.Shard)
		if t.Queue >= 0 {
			o.Int("queue", int64(t.Queue))
		}
		o.Float("day_acceleration", t.DayAcceleration)
		o.Float("night_acceleration", t.NightAcceleration)
		o.Str("time", t.Time)
		info.B = o.End()
	case appArma3:
		t := bohemia.ParseArma3Tags(in.Keywords.UTF8())
		info.Key("arma3")
		o := jsonenc.Begin(info.B, false)
		o.Bool("battleye", t.BattlEye)
		o.Int("required_version", int64(t.RequiredVersion))
		o.Int("required_build", int64(t.RequiredBuild))
		state := strconv.Itoa(t.State)
		if t.State >= 0 && t.State < len(bohemia.Arma3State) {
			state = bohemia.Arma3State[t.State]
		}
		o.Str("state", state)
		o.Int("difficulty", int64(t.Difficulty))
		o.Bool("equal_mod_required", t.EqualModRequired)
		o.Bool("locked", t.Locked)
		o.Bool("verify_signatures", t.VerifySignatures)
		o.Bool("dedicated", t.Dedicated)
		o.Str("game_type", t.GameType)
		o.Int("language", int64(t.Language))
		o.Str("platform", t.Platform)
		o.Int("time_left_minutes", int64(t.TimeLeft))
		o.Int("file_patching", int64(t.FilePatching))
		if t.Island != "" {
			o.Str("island", t.Island)
		}
		info.B = o.End()
	}
}

// appendMods appends a decoded DayZ mod list.
func appendMods(b []byte, br *bohemia.Browser) []byte {
	o := jsonenc.Begin(b, false)
	o.Uint("version", uint64(br.Version))
	o.List("list", len(br.Mods), func(mo *jsonenc.Object, i int) {
		m := &br.Mods[i]
		mo.Text("name", m.Name)
		mo.Uint("workshop_id", m.WorkshopID)
		mo.Bool("dlc", m.DLC)
		mo.Uint("hash", uint64(m.Hash))
	})
	o.List("signatures", len(br.Signatures), func(so *jsonenc.Object, i int) { so.Text("name", br.Signatures[i]) })
	o.Uint("dlc", uint64(br.DLC))
	o.Uint("overflow", uint64(br.Overflow))
	return o.End()
}
