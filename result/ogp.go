package result

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/ogp"
)

// ogpSections are the request flags that ask for a section (the colour
// flag only changes how names are sent).
const ogpSections = ogp.RequestServerInfo | ogp.RequestTeams | ogp.RequestPlayers |
	ogp.RequestRules | ogp.RequestAddOns | ogp.RequestLimits

// ogpSectionNames names the section of each request flag, in answer order.
var ogpSectionNames = [...]struct {
	flag    ogp.RequestFlags
	section Section
}{
	{ogp.RequestServerInfo, SectionInfo},
	{ogp.RequestTeams, SectionTeams},
	{ogp.RequestPlayers, SectionPlayers},
	{ogp.RequestRules, SectionRules},
	{ogp.RequestAddOns, SectionAddOns},
	{ogp.RequestLimits, SectionLimits},
}

// OGP holds the answer of an OGP server: the [Detail] of its Result.
type OGP struct {
	Dialect ogp.Dialect
	// Answer is the server's answer; its Request flags say which sections
	// it holds. Nil when the query failed.
	Answer *ogp.Answer
}

// Answered reports whether the answer holds a section.
func (o *OGP) Answered() bool { return o.Answer != nil && o.Answer.Request&ogpSections != 0 }

// PlayerList returns the PLAYERLIST, nil when the answer has none, or
// when its entries were not sent (an empty field mask).
func (o *OGP) PlayerList() []Player {
	if o.Answer == nil || o.Answer.Request&ogp.RequestPlayers == 0 {
		return nil
	}
	l := &o.Answer.Players
	if len(l.Players) != l.Count {
		return nil
	}
	out := make([]Player, 0, len(l.Players))
	for _, p := range l.Players {
		out = append(out, Player{Name: p.Name.UTF8(), Score: int64(p.Score), Duration: time.Duration(p.Time) * time.Second})
	}
	return out
}

func (o *OGP) appendHead(j jsonenc.Object) jsonenc.Object {
	j.Str("dialect", o.Dialect.String())
	return j
}

func (o *OGP) appendSections(j jsonenc.Object) jsonenc.Object {
	if o.Answer != nil {
		appendOGPSections(&j, o.Answer, o.Dialect)
	}
	return j
}

// ogp returns r's OGP detail, making it when r has none.
func (r *Result) ogp() *OGP {
	o, ok := r.Detail.(*OGP)
	if !ok {
		o = new(OGP)
		r.Detail = o
	}
	return o
}

// SetOGP records the answer of an OGP server in dialect d to a query that
// asked for the sections in asked, or its error, and fills the Summary
// and Ping from it. An answer cut short by a field this version does not
// know (err wraps ogp.ErrUnknownField) keeps the sections before it; each
// section asked for and not in the answer then fails with err. A section
// the server left out of a complete answer is left out, with no error:
// the server does not have it.
func (r *Result) SetOGP(d ogp.Dialect, asked ogp.RequestFlags, resp *ogp.Result, err error) {
	o := r.ogp()
	o.Dialect, o.Answer = d, nil
	r.Summary, r.Ping, r.Errors = Summary{}, 0, r.Errors[:0]
	if err == nil && (resp == nil || resp.Answer == nil) {
		err = errNoAnswer
	}
	var got ogp.RequestFlags
	if resp != nil && resp.Answer != nil {
		a := resp.Answer
		o.Answer, r.Ping = a, resp.RTT
		got = a.Request
		if a.Request&ogp.RequestServerInfo != 0 {
			r.Summary = ogpSummary(a, d, r.Addr)
		}
	}
	if err != nil {
		e := NewError(err)
		for _, s := range ogpSectionNames {
			if asked&s.flag != 0 && got&s.flag == 0 {
				r.failSection(s.section, e)
			}
		}
		if len(r.Errors) == 0 && got&ogpSections == 0 {
			r.Err = e // nothing asked, nothing answered: still a failure
			return
		}
	}
	r.updateErr()
}

// ogpSummary is the Summary of an OGP answer holding the server info.
func ogpSummary(a *ogp.Answer, d ogp.Dialect, addr netip.AddrPort) Summary {
	var s Summary
	in, f, v := &a.Info, a.Info.Fields, new(summaryValues)
	var raws [len(v.strs)][]byte
	str := func(i int, dst **string, bit ogp.InfoFields, raw []byte) {
		if f&bit != 0 {
			raws[i], *dst = raw, &v.strs[i]
		}
	}
	str(0, &s.Name, ogp.InfoHostName, in.HostName)
	str(1, &s.Map, ogp.InfoMap, in.Map.Name)
	str(2, &s.Game, ogp.InfoGameName, in.GameName)
	var cb [64]byte
	if in.ConnectPort != 0 && addr.IsValid() {
		str(4, &s.Connect, ogp.InfoConnectPort, netip.AddrPortFrom(addr.Addr(), in.ConnectPort).AppendTo(cb[:0]))
	}
	v.setStrings(raws[:]...)
	if f&ogp.InfoPlayerCount != 0 {
		v.players = int(in.PlayerCount)
		s.Players = &v.players
	}
	if f&ogp.InfoSlotMax != 0 {
		v.maxPlayers = int(in.SlotMax)
		s.MaxPlayers = &v.maxPlayers
	}
	if f&ogp.InfoBotCount != 0 {
		v.bots = int(in.BotCount)
		s.Bots = &v.bots
	}
	if f&ogp.InfoServerFlags != 0 && d == ogp.V1 { // v0.91 has no password flag
		v.password = in.Flags.Password
		s.Password = &v.password
	}
	return s
}

// appendOGPSections appends the sections of an OGP answer.
func appendOGPSections(o *jsonenc.Object, a *ogp.Answer, d ogp.Dialect) {
	colored := a.Request&ogp.RequestColoredNames != 0
	if a.Request&ogp.RequestServerInfo != 0 {
		o.Key("info")
		o.B = appendOGPInfo(o.B, a, d, colored)
	}
	if a.Request&ogp.RequestTeams != 0 {
		o.Key("teams")
		o.B = appendOGPTeams(o.B, &a.Teams, colored)
	}
	if a.Request&ogp.RequestPlayers != 0 {
		o.Key("players")
		o.B = appendOGPPlayers(o.B, &a.Players, colored)
	}
	if a.Request&ogp.RequestRules != 0 {
		o.List("rules", len(a.Rules), func(e *jsonenc.Object, i int) {
			e.Text("name", a.Rules[i].Key)
			e.Text("value", a.Rules[i].Value)
		})
	}
	if a.Request&ogp.RequestAddOns != 0 {
		o.Key("addons")
		o.B = appendOGPAddOns(o.B, &a.AddOns)
	}
	if a.Request&ogp.RequestLimits != 0 {
		o.List("limits", len(a.Limits), func(e *jsonenc.Object, i int) {
			l := &a.Limits[i]
			e.Str("type", l.Type.String())
			e.Uint("limit", uint64(l.Limit))
			if l.HasLeft {
				e.Uint("left", uint64(l.Left))
			}
		})
	}
}

// colors appends a StringColorInfo as [{delta, code, rgb565}], rgb565
// only for the codes that carry one.
func colors(o *jsonenc.Object, k string, ci ogp.ColorInfo) {
	o.List(k, len(ci), func(e *jsonenc.Object, i int) {
		c := &ci[i]
		e.Uint("delta", uint64(c.Delta))
		e.Uint("code", uint64(c.Value))
		if c.Value >= 0x90 && c.Value <= 0x9F {
			e.Uint("rgb565", uint64(c.RGB565))
		}
	})
}

// flagNames appends the names of a VarBitArray value's bits ("alive|bot"
// becomes ["alive","bot"]).
func flagNames(o *jsonenc.Object, k string, s fmt.Stringer) {
	var names []string
	if str := s.String(); str != "0" {
		names = strings.Split(str, "|")
	}
	o.Strings(k, names)
}

func appendOGPMap(b []byte, m *ogp.MapInfo, d ogp.Dialect, f ogp.MapFields) []byte {
	o := jsonenc.Begin(b, false)
	o.Text("name", m.Name)
	if d == ogp.V091 {
		o.Text("file", m.File)
		return o.End()
	}
	if f&ogp.MapFileName != 0 {
		o.Text("file", m.File)
	}
	if f&ogp.MapFileSize != 0 {
		o.Uint("file_size", uint64(m.FileSize))
	}
	if f&ogp.MapFileMD5 != 0 {
		o.Str("file_md5", hex.EncodeToString(m.FileMD5[:]))
	}
	if f&ogp.MapVersion != 0 {
		o.Text("version", m.Version)
	}
	if f&ogp.MapURL != 0 {
		o.Text("url", m.URL)
	}
	if f&ogp.MapAuthor != 0 {
		o.Text("author", m.Author)
	}
	return o.End()
}

func appendOGPInfo(b []byte, a *ogp.Answer, d ogp.Dialect, colored bool) []byte {
	s, f := &a.Info, a.Info.Fields
	o := jsonenc.Begin(b, false)
	o.Uint("game_id", uint64(a.GameID))
	if f&ogp.InfoGameName != 0 {
		o.Text("game_name", s.GameName)
	}
	if f&ogp.InfoServerFlags != 0 {
		o.Bool("dedicated", s.Flags.Dedicated)
		o.Bool("proxy", s.Flags.Proxy)
		if d == ogp.V1 {
			o.Bool("password", s.Flags.Password)
		}
		o.Str("os", s.Flags.OS.String())
	}
	if f&ogp.InfoMod != 0 {
		o.Key("mod")
		m := jsonenc.Begin(o.B, false)
		m.Text("name", s.Mod.Name)
		if d == ogp.V091 {
			m.Text("dir", s.Mod.Dir)
		} else {
			mf := s.ModFields
			if mf&ogp.ModIdentifier != 0 {
				m.Text("identifier", s.Mod.Identifier)
			}
			if mf&ogp.ModSize != 0 {
				m.Uint("size", uint64(s.Mod.Size))
			}
			if mf&ogp.ModVersion != 0 {
				m.Text("version", s.Mod.Version)
			}
			if mf&ogp.ModURL != 0 {
				m.Text("url", s.Mod.URL)
			}
			if mf&ogp.ModAuthor != 0 {
				m.Text("author", s.Mod.Author)
			}
		}
		o.B = m.End()
	}
	if f&ogp.InfoConnectPort != 0 {
		o.Uint("connect_port", uint64(s.ConnectPort))
	}
	if f&ogp.InfoHostName != 0 {
		o.Text("host_name", s.HostName)
		if colored {
			colors(&o, "host_name_colors", s.HostNameColor)
		}
	}
	if f&ogp.InfoMap != 0 {
		o.Key("map")
		o.B = appendOGPMap(o.B, &s.Map, d, s.MapFields)
	}
	if f&ogp.InfoNextMap != 0 && (d == ogp.V091 || f&ogp.InfoMap != 0) {
		o.Key("next_map")
		o.B = appendOGPMap(o.B, &s.NextMap, d, s.MapFields)
	}
	if f&ogp.InfoGameType != 0 {
		o.Text("game_type", s.GameType)
	}
	if f&ogp.InfoGameMode != 0 {
		o.Text("game_mode", s.GameMode)
	}
	if f&ogp.InfoPlayerCount != 0 {
		o.Uint("players", uint64(s.PlayerCount))
	}
	if f&ogp.InfoSlotMax != 0 {
		o.Uint("max_players", uint64(s.SlotMax))
	}
	if f&ogp.InfoBotCount != 0 {
		o.Uint("bots", uint64(s.BotCount))
	}
	if f&ogp.InfoReservedSlots != 0 {
		o.Uint("reserved_slots", uint64(s.ReservedSlots))
	}
	return o.End()
}

func appendOGPTeams(b []byte, l *ogp.TeamList, colored bool) []byte {
	return jsonenc.AppendList(b, l.Count, false, func(o *jsonenc.Object, i int) {
		o.Int("index", int64(i))
		if i >= len(l.Teams) {
			return
		}
		t, f := &l.Teams[i], l.Fields
		if f&ogp.TeamName != 0 {
			o.Text("name", t.Name)
			if colored {
				colors(o, "name_colors", t.NameColor)
			}
		}
		if f&ogp.TeamScore != 0 {
			o.Int("score", int64(t.Score))
		}
		if f&ogp.TeamAveragePing != 0 {
			o.Uint("average_ping", uint64(t.AveragePing))
		}
		if f&ogp.TeamAverageLoss != 0 {
			o.Uint("average_loss", uint64(t.AverageLoss))
		}
		if f&ogp.TeamPlayerCount != 0 {
			o.Uint("players", uint64(t.PlayerCount))
		}
		if f&ogp.TeamColor != 0 {
			r, g, bl := ogp.RGB565(t.Color)
			o.Str("color", fmt.Sprintf("#%02x%02x%02x", r, g, bl))
		}
	})
}

func appendOGPPlayers(b []byte, l *ogp.PlayerList, colored bool) []byte {
	return jsonenc.AppendList(b, l.Count, false, func(o *jsonenc.Object, i int) {
		o.Int("index", int64(i))
		if i < len(l.Players) {
			p, f := &l.Players[i], l.Fields
			if f&ogp.PlayerFlags != 0 {
				flagNames(o, "flags", p.Flags)
			}
			if f&ogp.PlayerSlot != 0 {
				o.Uint("slot", uint64(p.Slot))
			}
			if f&ogp.PlayerName != 0 {
				o.Text("name", p.Name)
				if colored {
					colors(o, "name_colors", p.NameColor)
				}
			}
			if f&ogp.PlayerTeam != 0 {
				o.Int("team", int64(p.Team))
			}
			if f&ogp.PlayerClass != 0 {
				o.Text("class", p.Class)
			}
			if f&ogp.PlayerRace != 0 {
				o.Text("race", p.Race)
			}
			for _, n := range [...]struct {
				bit ogp.PlayerFields
				key string
				v   int64
			}{
				{ogp.PlayerScore, "score", int64(p.Score)}, {ogp.PlayerFrags, "frags", int64(p.Frags)},
				{ogp.PlayerKills, "kills", int64(p.Kills)}, {ogp.PlayerDeaths, "deaths", int64(p.Deaths)},
				{ogp.PlayerSuicides, "suicides", int64(p.Suicides)}, {ogp.PlayerTeamKills, "team_kills", int64(p.TeamKills)},
				{ogp.PlayerID, "id", int64(p.ID)},
			} {
				if f&n.bit != 0 {
					o.Int(n.key, n.v)
				}
			}
			if f&ogp.PlayerGlobalID != 0 {
				o.Text("global_id", p.GlobalID)
			}
			if f&ogp.PlayerPing != 0 {
				o.Uint("ping", uint64(p.Ping))
			}
			if f&ogp.PlayerLoss != 0 {
				o.Uint("loss", uint64(p.Loss))
			}
			if f&ogp.PlayerModel != 0 {
				o.Text("model", p.Model)
			}
			if f&ogp.PlayerTime != 0 {
				o.Uint("time", uint64(p.Time))
			}
			if f&ogp.PlayerAddress != 0 {
				if ap, ok := p.Addr(); ok {
					o.Str("address", ap.String())
				} else if p.Address != nil {
					o.Key("address_b64")
					o.B = jsonenc.AppendBase64(o.B, p.Address)
				}
			}
		}
	})
}

func appendOGPAddOns(b []byte, l *ogp.AddOnList) []byte {
	return jsonenc.AppendList(b, l.Count, false, func(o *jsonenc.Object, i int) {
		if i < len(l.AddOns) {
			x, f := &l.AddOns[i], l.Fields
			if f&ogp.AddOnFlags != 0 {
				flagNames(o, "flags", x.Flags)
			}
			if f&ogp.AddOnShortName != 0 {
				o.Text("short_name", x.ShortName)
			}
			if f&ogp.AddOnLongName != 0 {
				o.Text("long_name", x.LongName)
			}
			if f&ogp.AddOnVersion != 0 {
				o.Text("version", x.Version)
			}
		}
	})
}
