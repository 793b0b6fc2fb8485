package cli

// `gsq query --protocol ogp`: the Open Game Protocol v0.91 (and the
// server SDK's v1 layout), one query per server for every section. The
// JSON fields are in docs/json.md.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/ogp/ogpcolor"
	"github.com/gsq-project/gsq/result"
)

func init() { queryProtocols["ogp"] = newOGPQuery }

// ogpQuery is `gsq query --protocol ogp`: one client shared by every
// server asked.
type ogpQuery struct {
	client *ogp.Client
	query  ogp.Query
	color  bool
}

func newOGPQuery(env *Env, o *queryOptions) (queryProtocol, error) {
	dialect, err := ogp.ParseDialect(o.dialect)
	if err != nil {
		return nil, usageError("--dialect: %q is neither v0.91 nor v1", o.dialect)
	}
	q, err := ogpRequest(o, dialect)
	if err != nil {
		return nil, err
	}
	c := &ogp.Client{Dialect: dialect, Timeout: o.timeout, Retries: zeroIsNone(o.retries)}
	if o.debug {
		c.Debug = hexDumper(env.Stderr, describeOGP)
	}
	return &ogpQuery{client: c, query: q, color: o.color}, nil
}

func (*ogpQuery) name() result.Protocol { return result.OGPProtocol }
func (*ogpQuery) defaultPort() uint16   { return 0 } // OGP has no standard port
func (q *ogpQuery) close()              { q.client.Close() }

// ask sends the one query that asks for every section.
func (q *ogpQuery) ask(ctx context.Context, addr netip.AddrPort, updates chan<- update) {
	resp, err := q.client.Query(ctx, addr, &q.query)
	d, asked := q.client.Dialect, q.query.Request
	updates <- update{sectionAll, func(r *result.Result) { r.SetOGP(d, asked, resp, err) }}
}

func (q *ogpQuery) hint(r *result.Result) string {
	if r.Err == nil || len(r.Errors) == 0 || r.Err.Kind != result.KindTimeout {
		return ""
	}
	if errors.Is(r.Err.Err, ogp.ErrIncomplete) {
		return lostFragments(r.Addr, "answer")
	}
	return fmt.Sprintf("no answer from %s: OGP servers answer on their query port "+
		"(Onset: game port - 1; Warband WSE: 22222 by default), and deployed servers speak --dialect v1", r.Addr)
}

// ogpFieldNames are the --fields names of OGP, and ogpSections their
// request flags.
var (
	ogpFieldNames = []string{"info", "teams", "players", "rules", "addons", "limits", "colors"}
	ogpSections   = map[string]ogp.RequestFlags{
		"info": ogp.RequestServerInfo, "teams": ogp.RequestTeams, "players": ogp.RequestPlayers,
		"rules": ogp.RequestRules, "addons": ogp.RequestAddOns, "limits": ogp.RequestLimits,
		"colors": ogp.RequestColoredNames,
	}
)

// ogpRequest builds the query from --fields, --info, --players and
// --rules; with none of them, it asks for everything.
func ogpRequest(o *queryOptions, d ogp.Dialect) (ogp.Query, error) {
	q := ogp.QueryAll(d)
	names, err := querySections(o, "OGP", ogpFieldNames, nil)
	if err != nil || names == nil {
		return q, err
	}
	q.Request = ogp.RequestColoredNames
	if o.fields != "" {
		q.Request = 0 // --fields names colors when it wants them
	}
	for _, n := range names {
		q.Request |= ogpSections[n]
	}
	return q, nil
}

// render prints r as a table (OGP answers every section at once, so s
// does not matter). On a terminal coloured names are drawn with ANSI
// escapes.
func (q *ogpQuery) render(w io.Writer, r *result.Result, _ result.Section) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	var a *ogp.Answer
	if r.OGP != nil {
		a = r.OGP.Answer
	}
	if a == nil {
		if r.Err != nil {
			fmt.Fprintf(tw, "  error\t%s\n", r.Err)
		}
		return
	}
	color := q.color
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
