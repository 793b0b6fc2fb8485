package cli

// The table of `gsq query --protocol ogp`: the Open Game Protocol v0.91
// (and the server SDK's v1 layout) answers every section at once. The
// JSON fields are in docs/json.md.

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogpcolor"
	"github.com/gsq-project/gsq/result"
)

// renderOGP prints r, whose detail is o, as a table (OGP answers every
// section at once). With color (a terminal), coloured names are drawn
// with ANSI escapes.
func renderOGP(tw *tabwriter.Writer, r *result.Result, o *result.OGP, color bool) {
	a := o.Answer
	if a == nil {
		if r.Err != nil {
			fmt.Fprintf(tw, "  error\t%s\n", r.Err)
		}
		return
	}
	name := func(t ogp.Text, ci ogp.ColorInfo) string {
		if color && a.Request&ogp.RequestColoredNames != 0 {
			return ogpcolor.ANSI(t, ci)
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
		row(ogp.InfoPlayerCount|ogp.InfoSlotMax, "players", fmt.Sprintf("%d/%d (%s, %d reserved)", s.PlayerCount, s.SlotMax, plural(int(s.BotCount), "bot"), s.ReservedSlots))
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
	for _, e := range r.Errors {
		fmt.Fprintf(tw, "\n%s\terror: %s\n", e.Section, e.Err)
	}
}
