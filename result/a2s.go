package result

import (
	"errors"
	"net/netip"
	"strconv"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/a2s/bohemia"
)

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

func (r *Result) a2s() *A2S {
	if r.A2S == nil {
		r.A2S = &A2S{}
	}
	return r.A2S
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
func (a *A2S) appendSections(o *object) {
	if a.Info != nil {
		o.key("info")
		info := appendInfo(o.b, a.Info, a.GoldSource)
		o.b = info
	}
	if a.Players != nil {
		o.key("players")
		o.b = appendPlayers(o.b, a.Players)
	}
	if a.Rules != nil {
		o.key("rules")
		o.b = appendRules(o.b, a.Rules)
	}
	if a.Mods != nil {
		o.key("mods")
		o.b = appendMods(o.b, a.Mods)
	}
}

// appendInfo appends an A2S_INFO reply; gold, when set, is the 'm' reply
// of a server that also sent in, nested as "goldsource".
func appendInfo(b []byte, in, gold *a2s.Info) []byte {
	o := beginObject(b)
	source := in.Format != a2s.TypeInfoReplyGoldSource
	if source {
		o.str("format", "source")
	} else {
		o.str("format", "goldsource")
		o.text("server_address", in.Address)
	}
	o.uint("protocol", uint64(in.Protocol))
	o.text("name", in.Name)
	o.text("map", in.Map)
	o.text("folder", in.Folder)
	o.text("game", in.Game)
	if source {
		o.uint("app_id", uint64(in.AppID()))
	}
	players, maxPlayers := in.PlayerCounts()
	o.int("players", int64(players))
	o.int("max_players", int64(maxPlayers))
	if players != int(in.Players) || maxPlayers != int(in.MaxPlayers) {
		// Servers with more than 255 slots wrap the count bytes and carry
		// the real numbers in their keywords; keep what the bytes said.
		o.uint("players_byte", uint64(in.Players))
		o.uint("max_players_byte", uint64(in.MaxPlayers))
	}
	if !in.NoBots {
		o.uint("bots", uint64(in.Bots))
	}
	o.str("server_type", in.ServerType.String())
	o.str("environment", in.Environment.String())
	if in.Visibility == 0 {
		o.str("visibility", "public")
	} else {
		o.str("visibility", "private")
	}
	o.bool("vac", in.VAC == 1)
	if m := in.Mod; m != nil {
		o.key("mod")
		mo := beginObject(o.b)
		mo.text("link", m.Link)
		mo.text("download_link", m.DownloadLink)
		mo.uint("version", uint64(m.Version))
		mo.uint("size", uint64(m.Size))
		mo.bool("multiplayer_only", m.Type == 1)
		mo.bool("own_dll", m.DLL == 1)
		o.b = mo.end()
	}
	if s := in.Ship; s != nil {
		o.key("ship")
		so := beginObject(o.b)
		so.uint("mode", uint64(s.Mode))
		so.uint("witnesses", uint64(s.Witnesses))
		so.uint("duration", uint64(s.Duration))
		o.b = so.end()
	}
	if source {
		o.text("version", in.Version)
	}
	if in.EDF&a2s.EDFPort != 0 {
		o.uint("port", uint64(in.Port))
	}
	if in.EDF&a2s.EDFSteamID != 0 {
		o.uint("steam_id", in.SteamID)
	}
	if in.EDF&a2s.EDFKeywords != 0 {
		o.text("keywords", in.Keywords)
	}
	if in.EDF&a2s.EDFGameID != 0 {
		o.uint("game_id", in.GameID)
	}
	appendTags(&o, in)
	if in.EDF&a2s.EDFSpectator != 0 {
		o.uint("spectator_port", uint64(in.SpectatorPort))
		o.text("spectator_name", in.SpectatorName)
	}
	if gold != nil {
		o.key("goldsource")
		o.b = appendInfo(o.b, gold, nil)
	}
	return o.end()
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
		b = appendText(b, "name", pl.Name)
		b = append(b, `,"score":`...)
		b = strconv.AppendInt(b, int64(pl.Score), 10)
		mark := len(b)
		b = append(b, `,"duration":`...)
		if nb, ok := appendRounded(b, float64(pl.Duration), 3); ok {
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
		b = appendText(b, "name", r.List[i].Name)
		b = append(b, `,"value":`...)
		b = appendText(b, "value", r.List[i].Value)
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
func appendTags(info *object, in *a2s.Info) {
	if in.EDF&a2s.EDFKeywords == 0 {
		return
	}
	switch in.AppID() {
	case appDayZ:
		t := bohemia.ParseDayZTags(in.Keywords.UTF8())
		info.key("dayz")
		o := beginObject(info.b)
		o.bool("official", t.Official())
		o.bool("battleye", t.BattlEye)
		o.bool("first_person", t.FirstPerson)
		o.bool("external", t.External)
		o.bool("private_hive", t.PrivateHive)
		o.bool("mods", t.Mods)
		o.bool("dlc", t.DLC)
		o.str("shard", t.Shard)
		if t.Queue >= 0 {
			o.int("queue", int64(t.Queue))
		}
		o.float("day_acceleration", t.DayAcceleration)
		o.float("night_acceleration", t.NightAcceleration)
		o.str("time", t.Time)
		info.b = o.end()
	case appArma3:
		t := bohemia.ParseArma3Tags(in.Keywords.UTF8())
		info.key("arma3")
		o := beginObject(info.b)
		o.bool("battleye", t.BattlEye)
		o.int("required_version", int64(t.RequiredVersion))
		o.int("required_build", int64(t.RequiredBuild))
		state := strconv.Itoa(t.State)
		if t.State >= 0 && t.State < len(bohemia.Arma3State) {
			state = bohemia.Arma3State[t.State]
		}
		o.str("state", state)
		o.int("difficulty", int64(t.Difficulty))
		o.bool("equal_mod_required", t.EqualModRequired)
		o.bool("locked", t.Locked)
		o.bool("verify_signatures", t.VerifySignatures)
		o.bool("dedicated", t.Dedicated)
		o.str("game_type", t.GameType)
		o.int("language", int64(t.Language))
		o.str("platform", t.Platform)
		o.int("time_left_minutes", int64(t.TimeLeft))
		o.int("file_patching", int64(t.FilePatching))
		if t.Island != "" {
			o.str("island", t.Island)
		}
		info.b = o.end()
	}
}

// appendMods appends a decoded DayZ mod list.
func appendMods(b []byte, br *bohemia.Browser) []byte {
	o := beginObject(b)
	o.uint("version", uint64(br.Version))
	o.list("list", len(br.Mods), func(mo *object, i int) {
		m := &br.Mods[i]
		mo.text("name", m.Name)
		mo.uint("workshop_id", m.WorkshopID)
		mo.bool("dlc", m.DLC)
		mo.uint("hash", uint64(m.Hash))
	})
	o.list("signatures", len(br.Signatures), func(so *object, i int) { so.text("name", br.Signatures[i]) })
	o.uint("dlc", uint64(br.DLC))
	o.uint("overflow", uint64(br.Overflow))
	return o.end()
}
