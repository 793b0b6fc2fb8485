package cli

// `gsq query --protocol ogp` (Open Game Protocol v0.91, specs/ogp-0.91.txt).
//
// OGP JSON fields (one object per server; fields a server did not send are
// left out; a string that is not valid UTF-8 is decoded as Latin-1 and its
// exact bytes are kept in a base64 twin, e.g. "host_name_b64"):
//
//	address, protocol ("ogp"), dialect ("v0.91" or "v1"), ping_ms,
//	info: game_id, game_name, dedicated, proxy, password (v1), os
//	      ("unknown", "windows", "linux", "mac" or "unknown(N)"),
//	      mod {name, dir (v0.91), identifier, size, version, url, author (v1)},
//	      connect_port, host_name, host_name_colors, map and next_map
//	      {name, file, file_size, file_md5, version, url, author (v1 for the
//	      last five)}, game_type, game_mode, players, max_players, bots,
//	      reserved_slots
//	teams:   [{index, name, name_colors, score, average_ping, average_loss,
//	          players, color ("#rrggbb")}]
//	players: [{index, flags (["alive","dead","bot","bomb","vip"]), slot,
//	          name, name_colors, team (-1 none, -2 spectator), class, race,
//	          score, frags, kills, deaths, suicides, team_kills, id,
//	          global_id, ping, loss, model, time (seconds), address}]
//	rules:   [{name, value}]
//	addons:  [{flags (["active","anti-cheat","mutator","admin-tool"]),
//	          short_name, long_name, version}]
//	limits:  [{type ("time","player-score","rounds","team-score"), limit, left}]
//	error:   null, or {kind, message}
//
// *_colors are the StringColorInfo entries: [{delta, code, rgb565}], delta
// in characters from the previous entry, rgb565 only for codes 0x90-0x9F.
// An answer that stops at a field this version does not know keeps the
// sections before it and also sets error.

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/netip"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogpcolor"
)

func init() { queryProtocols["ogp"] = queryOGP }

func queryOGP(ctx context.Context, env *Env, o *queryOptions, target string) queryOutcome {
	dialect, err := ogp.ParseDialect(o.dialect)
	if err != nil {
		return queryOutcome{usage: usageError("--dialect: %v", err)}
	}
	q, err := ogpQuery(o, dialect)
	if err != nil {
		return queryOutcome{usage: err}
	}
	addr, err := resolve(ctx, target, 0)
	if err != nil {
		if exitCodeOf(err) == ExitUsage {
			return queryOutcome{usage: err}
		}
		return ogpOutcome(&OGPResult{Address: target, Dialect: dialect, Err: err}, target, o.color)
	}
	c := &ogp.Client{Dialect: dialect, Timeout: o.timeout, Retries: zeroIsNone(o.retries)}
	defer c.Close()
	if o.debug {
		c.Debug = hexDumper(env.Stderr, describeOGP)
	}
	return ogpOutcome(QueryOGP(ctx, c, addr, &q), target, o.color)
}

// ogpSections maps --fields names to request flags.
var ogpSections = map[string]ogp.RequestFlags{
	"info": ogp.RequestServerInfo, "teams": ogp.RequestTeams, "players": ogp.RequestPlayers,
	"rules": ogp.RequestRules, "addons": ogp.RequestAddOns, "limits": ogp.RequestLimits,
	"colors": ogp.RequestColoredNames,
}

// ogpQuery builds the query from --fields, or else from --info, --players
// and --rules (all of them, the default, means every section).
func ogpQuery(o *queryOptions, d ogp.Dialect) (ogp.Query, error) {
	q := ogp.QueryAll(d)
	if o.fields == "" {
		if !(o.info && o.players && o.rules) {
			q.Request = ogp.RequestColoredNames
			if o.info {
				q.Request |= ogp.RequestServerInfo
			}
			if o.players {
				q.Request |= ogp.RequestPlayers
			}
			if o.rules {
				q.Request |= ogp.RequestRules
			}
		}
		return q, nil
	}
	q.Request = 0
	for _, name := range strings.Split(o.fields, ",") {
		bit, ok := ogpSections[strings.TrimSpace(name)]
		if !ok {
			return q, usageError("--fields: unknown field %q (known: info, teams, players, rules, addons, limits, colors)", name)
		}
		q.Request |= bit
	}
	return q, nil
}

// OGPResult is what one OGP query of a server produced.
type OGPResult struct {
	Address string
	Dialect ogp.Dialect
	Ping    time.Duration
	Answer  *ogp.Answer // nil when the query failed
	Err     error       // with an Answer: the parse stopped at an unknown field
}

// QueryOGP sends q to addr and collects the result.
func QueryOGP(ctx context.Context, c *ogp.Client, addr netip.AddrPort, q *ogp.Query) *OGPResult {
	r := &OGPResult{Address: addr.String(), Dialect: c.Dialect}
	resp, err := c.Query(ctx, addr, q)
	r.Err = err
	if resp != nil {
		r.Answer, r.Ping = resp.Answer, resp.RTT
	}
	return r
}

// ExitCode is 0 on success, 3 for a timeout or an unreachable server and
// 1 when the server answered badly (including an error answer).
func (r *OGPResult) ExitCode() int {
	if r.Err == nil {
		return ExitOK
	}
	return exitCodeFor(errorKind(r.Err))
}

func ogpOutcome(r *OGPResult, target string, color bool) queryOutcome {
	out := queryOutcome{json: r.JSON(), code: r.ExitCode(), render: func(w io.Writer) { renderOGP(w, r, color) }}
	if r.Answer == nil && r.Err != nil && errorKind(r.Err) == kindTimeout {
		out.hint = fmt.Sprintf("no answer from %s: OGP servers answer on their query port "+
			"(Onset: game port - 1; Warband WSE: 22222 by default), and deployed servers speak --dialect v1", target)
	}
	return out
}

// ogpText adds an OGP string: valid UTF-8 as is, anything else decoded as
// Latin-1 plus a base64 twin holding the exact bytes.
func ogpText(o *object, key string, t ogp.Text) {
	if utf8.Valid(t) {
		o.set(key, string(t))
		return
	}
	o.set(key, t.UTF8())
	o.set(key+"_b64", b64(t))
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// JSON builds the documented envelope for r.
func (r *OGPResult) JSON() object {
	var o object
	o.set("address", r.Address)
	o.set("protocol", "ogp")
	o.set("dialect", r.Dialect.String())
	if r.Ping > 0 {
		o.set("ping_ms", math.Round(float64(r.Ping)/float64(time.Millisecond)*100)/100)
	}
	if a := r.Answer; a != nil {
		colored := a.Request&ogp.RequestColoredNames != 0
		if a.Request&ogp.RequestServerInfo != 0 {
			o.set("info", ogpInfoJSON(a, r.Dialect, colored))
		}
		if a.Request&ogp.RequestTeams != 0 {
			o.set("teams", ogpTeamsJSON(&a.Teams, colored))
		}
		if a.Request&ogp.RequestPlayers != 0 {
			o.set("players", ogpPlayersJSON(&a.Players, colored))
		}
		if a.Request&ogp.RequestRules != 0 {
			list := make([]object, 0, len(a.Rules))
			for _, rule := range a.Rules {
				var e object
				ogpText(&e, "name", rule.Key)
				ogpText(&e, "value", rule.Value)
				list = append(list, e)
			}
			o.set("rules", list)
		}
		if a.Request&ogp.RequestAddOns != 0 {
			o.set("addons", ogpAddOnsJSON(&a.AddOns))
		}
		if a.Request&ogp.RequestLimits != 0 {
			list := make([]object, 0, len(a.Limits))
			for _, l := range a.Limits {
				var e object
				e.set("type", l.Type.String())
				e.set("limit", l.Limit)
				if l.HasLeft {
					e.set("left", l.Left)
				}
				list = append(list, e)
			}
			o.set("limits", list)
		}
	}
	if r.Err != nil {
		o.set("error", errorObject(r.Err))
	} else {
		o.set("error", nil)
	}
	return o
}

func ogpColorsJSON(ci ogp.ColorInfo) []object {
	list := make([]object, 0, len(ci))
	for _, c := range ci {
		var e object
		e.set("delta", c.Delta)
		e.set("code", c.Value)
		if c.Value >= 0x90 && c.Value <= 0x9F {
			e.set("rgb565", c.RGB565)
		}
		list = append(list, e)
	}
	return list
}

func ogpMapJSON(m *ogp.MapInfo, d ogp.Dialect, f ogp.MapFields) object {
	var o object
	ogpText(&o, "name", m.Name)
	if d == ogp.V091 {
		ogpText(&o, "file", m.File)
		return o
	}
	if f&ogp.MapFileName != 0 {
		ogpText(&o, "file", m.File)
	}
	if f&ogp.MapFileSize != 0 {
		o.set("file_size", m.FileSize)
	}
	if f&ogp.MapFileMD5 != 0 {
		o.set("file_md5", hex.EncodeToString(m.FileMD5[:]))
	}
	if f&ogp.MapVersion != 0 {
		ogpText(&o, "version", m.Version)
	}
	if f&ogp.MapURL != 0 {
		ogpText(&o, "url", m.URL)
	}
	if f&ogp.MapAuthor != 0 {
		ogpText(&o, "author", m.Author)
	}
	return o
}

func ogpInfoJSON(a *ogp.Answer, d ogp.Dialect, colored bool) object {
	s, f := &a.Info, a.Info.Fields
	var o object
	o.set("game_id", a.GameID)
	if f&ogp.InfoGameName != 0 {
		ogpText(&o, "game_name", s.GameName)
	}
	if f&ogp.InfoServerFlags != 0 {
		o.set("dedicated", s.Flags.Dedicated)
		o.set("proxy", s.Flags.Proxy)
		if d == ogp.V1 {
			o.set("password", s.Flags.Password)
		}
		o.set("os", s.Flags.OS.String())
	}
	if f&ogp.InfoMod != 0 {
		var m object
		ogpText(&m, "name", s.Mod.Name)
		if d == ogp.V091 {
			ogpText(&m, "dir", s.Mod.Dir)
		} else {
			mf := s.ModFields
			if mf&ogp.ModIdentifier != 0 {
				ogpText(&m, "identifier", s.Mod.Identifier)
			}
			if mf&ogp.ModSize != 0 {
				m.set("size", s.Mod.Size)
			}
			if mf&ogp.ModVersion != 0 {
				ogpText(&m, "version", s.Mod.Version)
			}
			if mf&ogp.ModURL != 0 {
				ogpText(&m, "url", s.Mod.URL)
			}
			if mf&ogp.ModAuthor != 0 {
				ogpText(&m, "author", s.Mod.Author)
			}
		}
		o.set("mod", m)
	}
	if f&ogp.InfoConnectPort != 0 {
		o.set("connect_port", s.ConnectPort)
	}
	if f&ogp.InfoHostName != 0 {
		ogpText(&o, "host_name", s.HostName)
		if colored {
			o.set("host_name_colors", ogpColorsJSON(s.HostNameColor))
		}
	}
	if f&ogp.InfoMap != 0 {
		o.set("map", ogpMapJSON(&s.Map, d, s.MapFields))
	}
	if f&ogp.InfoNextMap != 0 && (d == ogp.V091 || f&ogp.InfoMap != 0) {
		o.set("next_map", ogpMapJSON(&s.NextMap, d, s.MapFields))
	}
	if f&ogp.InfoGameType != 0 {
		ogpText(&o, "game_type", s.GameType)
	}
	if f&ogp.InfoGameMode != 0 {
		ogpText(&o, "game_mode", s.GameMode)
	}
	if f&ogp.InfoPlayerCount != 0 {
		o.set("players", s.PlayerCount)
	}
	if f&ogp.InfoSlotMax != 0 {
		o.set("max_players", s.SlotMax)
	}
	if f&ogp.InfoBotCount != 0 {
		o.set("bots", s.BotCount)
	}
	if f&ogp.InfoReservedSlots != 0 {
		o.set("reserved_slots", s.ReservedSlots)
	}
	return o
}

// flagNames lists the names of a VarBitArray value's bits ("alive|bot"
// becomes ["alive","bot"]).
func flagNames(s fmt.Stringer) []string {
	if str := s.String(); str != "0" {
		return strings.Split(str, "|")
	}
	return []string{}
}

func ogpTeamsJSON(l *ogp.TeamList, colored bool) []object {
	list := make([]object, 0, l.Count)
	for i := range l.Count {
		var o object
		o.set("index", i)
		if i < len(l.Teams) {
			t, f := &l.Teams[i], l.Fields
			if f&ogp.TeamName != 0 {
				ogpText(&o, "name", t.Name)
				if colored {
					o.set("name_colors", ogpColorsJSON(t.NameColor))
				}
			}
			if f&ogp.TeamScore != 0 {
				o.set("score", t.Score)
			}
			if f&ogp.TeamAveragePing != 0 {
				o.set("average_ping", t.AveragePing)
			}
			if f&ogp.TeamAverageLoss != 0 {
				o.set("average_loss", t.AverageLoss)
			}
			if f&ogp.TeamPlayerCount != 0 {
				o.set("players", t.PlayerCount)
			}
			if f&ogp.TeamColor != 0 {
				r, g, b := ogp.RGB565(t.Color)
				o.set("color", fmt.Sprintf("#%02x%02x%02x", r, g, b))
			}
		}
		list = append(list, o)
	}
	return list
}

func ogpPlayersJSON(l *ogp.PlayerList, colored bool) []object {
	list := make([]object, 0, l.Count)
	for i := range l.Count {
		var o object
		o.set("index", i)
		if i < len(l.Players) {
			p, f := &l.Players[i], l.Fields
			if f&ogp.PlayerFlags != 0 {
				o.set("flags", flagNames(p.Flags))
			}
			if f&ogp.PlayerSlot != 0 {
				o.set("slot", p.Slot)
			}
			if f&ogp.PlayerName != 0 {
				ogpText(&o, "name", p.Name)
				if colored {
					o.set("name_colors", ogpColorsJSON(p.NameColor))
				}
			}
			if f&ogp.PlayerTeam != 0 {
				o.set("team", p.Team)
			}
			if f&ogp.PlayerClass != 0 {
				ogpText(&o, "class", p.Class)
			}
			if f&ogp.PlayerRace != 0 {
				ogpText(&o, "race", p.Race)
			}
			for _, n := range []struct {
				bit ogp.PlayerFields
				key string
				v   any
			}{
				{ogp.PlayerScore, "score", p.Score}, {ogp.PlayerFrags, "frags", p.Frags},
				{ogp.PlayerKills, "kills", p.Kills}, {ogp.PlayerDeaths, "deaths", p.Deaths},
				{ogp.PlayerSuicides, "suicides", p.Suicides}, {ogp.PlayerTeamKills, "team_kills", p.TeamKills},
				{ogp.PlayerID, "id", p.ID},
			} {
				if f&n.bit != 0 {
					o.set(n.key, n.v)
				}
			}
			if f&ogp.PlayerGlobalID != 0 {
				ogpText(&o, "global_id", p.GlobalID)
			}
			if f&ogp.PlayerPing != 0 {
				o.set("ping", p.Ping)
			}
			if f&ogp.PlayerLoss != 0 {
				o.set("loss", p.Loss)
			}
			if f&ogp.PlayerModel != 0 {
				ogpText(&o, "model", p.Model)
			}
			if f&ogp.PlayerTime != 0 {
				o.set("time", p.Time)
			}
			if f&ogp.PlayerAddress != 0 {
				if a, ok := p.Addr(); ok {
					o.set("address", a.String())
				} else if p.Address != nil {
					o.set("address_b64", b64(p.Address))
				}
			}
		}
		list = append(list, o)
	}
	return list
}

func ogpAddOnsJSON(l *ogp.AddOnList) []object {
	list := make([]object, 0, l.Count)
	for i := range l.Count {
		var o object
		if i < len(l.AddOns) {
			x, f := &l.AddOns[i], l.Fields
			if f&ogp.AddOnFlags != 0 {
				o.set("flags", flagNames(x.Flags))
			}
			if f&ogp.AddOnShortName != 0 {
				ogpText(&o, "short_name", x.ShortName)
			}
			if f&ogp.AddOnLongName != 0 {
				ogpText(&o, "long_name", x.LongName)
			}
			if f&ogp.AddOnVersion != 0 {
				ogpText(&o, "version", x.Version)
			}
		}
		list = append(list, o)
	}
	return list
}

// renderOGP prints r as the human-readable table of `gsq query`. With
// color (stdout is a terminal) coloured names are drawn with ANSI escapes.
func renderOGP(w io.Writer, r *OGPResult, color bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "%s\togp %s", r.Address, r.Dialect)
	if r.Ping > 0 {
		fmt.Fprintf(tw, ", %.2f ms", float64(r.Ping)/float64(time.Millisecond))
	}
	fmt.Fprintln(tw)
	a := r.Answer
	if a == nil {
		fmt.Fprintf(tw, "  error\t%s\n", r.Err)
		return
	}
	name := func(t ogp.Text, ci ogp.ColorInfo) string {
		if color && a.Request&ogp.RequestColoredNames != 0 {
			return ansiName(t, ci)
		}
		return printable(t.UTF8())
	}
	if a.Request&ogp.RequestServerInfo != 0 {
		s, f := &a.Info, a.Info.Fields
		row := func(bit ogp.InfoFields, k, v string) {
			if f&bit != 0 {
				fmt.Fprintf(tw, "  %s\t%s\n", k, v)
			}
		}
		row(ogp.InfoHostName, "name", name(s.HostName, s.HostNameColor))
		row(ogp.InfoGameName, "game", printable(s.GameName.UTF8())+fmt.Sprintf(" (game id %d)", a.GameID))
		row(ogp.InfoMod, "mod", printable(strings.TrimSpace(s.Mod.Name.UTF8()+" "+s.Mod.Dir.UTF8()+" "+s.Mod.Version.UTF8())))
		row(ogp.InfoMap, "map", printable(s.Map.Name.UTF8()))
		row(ogp.InfoNextMap, "next map", printable(s.NextMap.Name.UTF8()))
		row(ogp.InfoGameType, "type", printable(s.GameType.UTF8()+" "+s.GameMode.UTF8()))
		row(ogp.InfoPlayerCount|ogp.InfoSlotMax, "players", fmt.Sprintf("%d/%d (%d bots, %d reserved)", s.PlayerCount, s.SlotMax, s.BotCount, s.ReservedSlots))
		if f&ogp.InfoServerFlags != 0 {
			kind := "listen"
			if s.Flags.Dedicated {
				kind = "dedicated"
			}
			flags := []string{kind, s.Flags.OS.String()}
			if s.Flags.Proxy {
				flags = append(flags, "proxy")
			}
			if s.Flags.Password {
				flags = append(flags, "password")
			}
			fmt.Fprintf(tw, "  server\t%s\n", strings.Join(flags, ", "))
		}
		row(ogp.InfoConnectPort, "game port", fmt.Sprint(s.ConnectPort))
	}
	tw.Flush()
	if a.Request&ogp.RequestTeams != 0 {
		fmt.Fprintf(tw, "\nteams (%d)\n", a.Teams.Count)
		for i, t := range a.Teams.Teams {
			fmt.Fprintf(tw, "  %d\t%s\tscore %d\t%d players\n", i, name(t.Name, t.NameColor), t.Score, t.PlayerCount)
		}
	}
	tw.Flush()
	if a.Request&ogp.RequestPlayers != 0 {
		fmt.Fprintf(tw, "\nplayers (%d)\n", a.Players.Count)
		if len(a.Players.Players) > 0 {
			fmt.Fprintln(tw, "  #\tname\tteam\tscore\tping\ttime")
		}
		for i, p := range a.Players.Players {
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%d\t%d\t%s\n", i, name(p.Name, p.NameColor), p.Team, p.Score, p.Ping,
				(time.Duration(p.Time) * time.Second).String())
		}
	}
	tw.Flush()
	if a.Request&ogp.RequestRules != 0 {
		fmt.Fprintf(tw, "\nrules (%d)\n", len(a.Rules))
		for _, rule := range a.Rules {
			fmt.Fprintf(tw, "  %s\t%s\n", printable(rule.Key.UTF8()), printable(rule.Value.UTF8()))
		}
	}
	tw.Flush()
	if a.Request&ogp.RequestAddOns != 0 {
		fmt.Fprintf(tw, "\naddons (%d)\n", a.AddOns.Count)
		for _, x := range a.AddOns.AddOns {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", printable(x.ShortName.UTF8()), printable(x.LongName.UTF8()), printable(x.Version.UTF8()), x.Flags)
		}
	}
	tw.Flush()
	if a.Request&ogp.RequestLimits != 0 {
		fmt.Fprintf(tw, "\nlimits (%d)\n", len(a.Limits))
		for _, l := range a.Limits {
			left := ""
			if l.HasLeft {
				left = fmt.Sprintf("%d left", l.Left)
			}
			fmt.Fprintf(tw, "  %s\t%d\t%s\n", l.Type, l.Limit, left)
		}
	}
	if r.Err != nil {
		fmt.Fprintf(tw, "\n  error\t%s\n", r.Err)
	}
}

// ansiName draws t with its StringColorInfo as 24-bit ANSI escapes.
// Control characters in the name are replaced first, so a name cannot
// carry escapes of its own.
func ansiName(t ogp.Text, ci ogp.ColorInfo) string {
	runes := []rune(printable(t.UTF8()))
	codes := make(map[int][]string)
	pos := 0
	var bold, underline, italic bool
	toggle := func(on *bool, set, reset string) string {
		*on = !*on
		if *on {
			return set
		}
		return reset
	}
	rgb := func(layer int, r, g, b uint8) string { return fmt.Sprintf("\x1b[%d;2;%d;%d;%dm", layer, r, g, b) }
	vga := func(layer int, i uint8) string {
		c := ogpcolor.VGA(i)
		return rgb(layer, c.R, c.G, c.B)
	}
	for _, c := range ci {
		pos = min(pos+int(min(c.Delta, uint32(len(runes)))), len(runes))
		var seq string
		switch v := c.Value; {
		case v <= 0x0F:
			seq = vga(38, v)
		case v == ogp.ColorResetText:
			seq = "\x1b[39m"
		case v >= 0x20 && v <= 0x2F:
			seq = vga(48, v)
		case v == ogp.ColorResetBackground:
			seq = "\x1b[49m"
		case v == ogp.ColorBold:
			seq = toggle(&bold, "\x1b[1m", "\x1b[22m")
		case v == ogp.ColorUnderline:
			seq = toggle(&underline, "\x1b[4m", "\x1b[24m")
		case v == ogp.ColorItalic:
			seq = toggle(&italic, "\x1b[3m", "\x1b[23m")
		case v == ogp.ColorText16:
			r, g, b := ogp.RGB565(c.RGB565)
			seq = rgb(38, r, g, b)
		case v == ogp.ColorBackground16:
			r, g, b := ogp.RGB565(c.RGB565)
			seq = rgb(48, r, g, b)
		}
		codes[pos] = append(codes[pos], seq)
	}
	if len(codes) == 0 {
		return string(runes)
	}
	var sb strings.Builder
	for i := 0; i <= len(runes); i++ {
		for _, s := range codes[i] {
			sb.WriteString(s)
		}
		if i < len(runes) {
			sb.WriteRune(runes[i])
		}
	}
	sb.WriteString("\x1b[0m")
	return sb.String()
}

// describeOGP names an OGP datagram from its header, for --debug.
func describeOGP(b []byte) string {
	h, body, err := ogp.ParseHeader(b)
	if err != nil {
		return err.Error()
	}
	desc := fmt.Sprintf("OGP %s, flags %s, challenge %#x, request id %#x, body %d bytes", h.Type, h.Flags, h.Challenge, h.RequestID, len(body))
	if h.Flags&ogp.FlagSplit != 0 && h.Flags&ogp.FlagAnswer != 0 {
		desc += fmt.Sprintf(", fragment %d of %d", int(h.SplitNo)+1, h.SplitCount)
	}
	return desc
}
