package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/catalog"
	"github.com/gsq-project/gsq/internal/jsonenc"
	"github.com/gsq-project/gsq/protocol"
)

func init() { register(newGamesCmd) }

func newGamesCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "games [NAME]",
		Short: "List the games gsq knows, or say what gsq does for one",
		Long: `List the game catalogue: each game gsq knows, the protocols that query
its servers and the port they answer on, as --game uses them (gsq query,
gsq scan, gsq discover, and a monitor config's game: key).

With a NAME (an id of the list, an alias, in any case), say what gsq will
do for that game and why: which protocol it asks on which port (Valheim:
A2S on the game port + 1), in which order when there are several, the
Steam app id gsq discover lists it by, the consoles gsq rcon reaches, the
quirks of its servers, and where each fact comes from. A game gsq cannot
query says why (ARK: Survival Ascended and Squad need Epic Online Services
credentials gsq does not ship).

An unknown NAME is an error that suggests the nearest names (exit 2).`,
		Example: `  gsq games
  gsq games valheim
  gsq games --json | jq -r 'select(.protocols[0] == "a2s") | .id'`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return completeGames(cmd, args, toComplete)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return listGames(env.Stdout, asJSON)
			}
			g, err := catalog.Lookup(args[0])
			if err != nil {
				return usageError("%s", strings.TrimPrefix(err.Error(), "catalog: "))
			}
			if asJSON {
				_, err := env.Stdout.Write(append(appendGameJSON(nil, g, true), '\n'))
				return err
			}
			return describeGame(env.Stdout, g)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "write one JSON object a game (with NAME: every fact, with its source)")
	return cmd
}

// listGames writes the catalogue: a table, or JSON lines.
func listGames(w io.Writer, asJSON bool) error {
	games := catalog.All()
	if asJSON {
		var b []byte
		for i := range games {
			b = append(appendGameJSON(b, &games[i], false), '\n')
		}
		_, err := w.Write(b)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GAME\tNAME\tQUERY\tGAME PORT\tAPP ID")
	for i := range games {
		g := &games[i]
		query := "-"
		if len(g.Query) > 0 {
			var parts []string
			for _, ep := range g.Query {
				parts = append(parts, shortRule(g, ep))
			}
			query = strings.Join(parts, ", ")
		}
		if g.Unqueryable != "" {
			query = "cannot be queried (gsq games " + g.ID + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", g.ID, g.Name, query, portOrDash(g.GamePort), appIDs(g))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%s. gsq games NAME says more of one.\n", plural(len(games), "game"))
	return err
}

// shortRule is an endpoint in a few characters: "a2s:+1", "a2s:27020",
// "a2s".
func shortRule(g *catalog.Game, ep catalog.Endpoint) string {
	s := ep.Protocol
	switch {
	case ep.Port != 0:
		s += ":" + strconv.Itoa(int(ep.Port))
	case ep.Offset != 0:
		s += fmt.Sprintf(":%+d", ep.Offset)
	}
	if _, err := protocol.Lookup(ep.Protocol); err != nil {
		s += " (not in this build)"
	}
	return s
}

func portOrDash(p uint16) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(int(p))
}

func appIDs(g *catalog.Game) string {
	if len(g.AppIDs) == 0 {
		return "-"
	}
	ids := make([]string, len(g.AppIDs))
	for i, id := range g.AppIDs {
		ids[i] = strconv.FormatUint(uint64(id), 10)
	}
	return strings.Join(ids, ",")
}

// describeGame writes what gsq does for g, and why.
func describeGame(w io.Writer, g *catalog.Game) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s (%s)\n", g.Name, g.ID)
	if len(g.Aliases) > 0 {
		fmt.Fprintf(tw, "  also\t%s\n", strings.Join(g.Aliases, ", "))
	}
	fmt.Fprintf(tw, "  game port\t%s\n", portOrDash(g.GamePort))
	if g.Unqueryable != "" {
		fmt.Fprintf(tw, "  query\tnone: %s\n", g.Unqueryable)
	}
	for i, ep := range g.Query {
		label := "  query"
		if i > 0 {
			label = "  then"
		}
		note := ""
		if _, err := protocol.Lookup(ep.Protocol); err != nil {
			note = " (this build does not speak it yet: skipped)"
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", label, portRule(g, ep), note)
	}
	if len(g.Query) > 1 {
		fmt.Fprintf(tw, "  \tgsq query --game %s tries them in this order and says which answered\n", g.ID)
	}
	if len(g.AppIDs) > 0 {
		fmt.Fprintf(tw, "  steam app id\t%s (gsq discover --game %s lists \\appid\\%d)\n", appIDs(g), g.ID, g.AppIDs[0])
	} else {
		fmt.Fprintf(tw, "  steam app id\tunknown: gsq discover --game %s cannot list it (give --appid)\n", g.ID)
	}
	for _, c := range g.Consoles {
		what := c.Protocol
		if c.Dialect != "" {
			what += " (" + c.Dialect
			if c.Profile != "" {
				what += ", profile " + c.Profile
			}
			what += ")"
		}
		if c.Port != 0 {
			what += fmt.Sprintf(" on port %d", c.Port)
		}
		fmt.Fprintf(tw, "  console\t%s\n", what)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(g.Quirks) > 0 {
		fmt.Fprintln(w, "  quirks:")
		for _, q := range g.Quirks {
			fake := "fake server profile " + q.Fake
			if q.Fake == catalog.NotModelled {
				fake = "no fake server plays it yet"
			}
			fmt.Fprintf(w, "    %s (%s): %s\n      %s; source: %s\n", q.ID, q.Protocol, q.Text, fake, q.Source)
		}
	}
	fmt.Fprintln(w, "  sources:")
	fmt.Fprintf(w, "    ports and protocols: %s\n", g.Source)
	for _, ep := range g.Query {
		if ep.Source != "" {
			fmt.Fprintf(w, "    %s: %s\n", ep.Protocol, ep.Source)
		}
	}
	if g.AppIDSource != "" {
		fmt.Fprintf(w, "    app ids: %s\n", g.AppIDSource)
	}
	for _, c := range g.Consoles {
		if c.Source != "" {
			fmt.Fprintf(w, "    %s console: %s\n", c.Protocol, c.Source)
		}
	}
	if g.Unqueryable != "" {
		return nil
	}
	_, err := fmt.Fprintf(w, "  try: gsq query --game %s HOST%s\n", g.ID, tryPort(g))
	return err
}

// tryPort is ":PORT" for the example command when the game has no usual
// port to fall back on.
func tryPort(g *catalog.Game) string {
	for _, ep := range g.Query {
		if _, ok := ep.QueryPort(g, 0); ok {
			return ""
		}
	}
	return ":PORT"
}

// appendGameJSON appends g's JSON object to b: the summary, and with
// full every fact with its source.
func appendGameJSON(b []byte, g *catalog.Game, full bool) []byte {
	o := jsonenc.Begin(b, false)
	o.Str("id", g.ID)
	o.Str("name", g.Name)
	if len(g.Aliases) > 0 {
		o.Strings("aliases", g.Aliases)
	}
	if g.GamePort != 0 {
		o.Int("game_port", int64(g.GamePort))
	}
	protocols := make([]string, len(g.Query))
	for i, ep := range g.Query {
		protocols[i] = ep.Protocol
	}
	o.Strings("protocols", protocols)
	o.List("query", len(g.Query), func(e *jsonenc.Object, i int) {
		ep := g.Query[i]
		e.Str("protocol", ep.Protocol)
		if ep.Port != 0 {
			e.Int("port", int64(ep.Port))
		} else {
			e.Int("offset", int64(ep.Offset))
		}
		if p, ok := ep.QueryPort(g, 0); ok {
			e.Int("default_port", int64(p))
		}
		_, err := protocol.Lookup(ep.Protocol)
		e.Bool("available", err == nil)
		if full && ep.Source != "" {
			e.Str("source", ep.Source)
		}
	})
	o.Key("app_ids")
	o.B = append(o.B, '[')
	for i, id := range g.AppIDs {
		if i > 0 {
			o.B = append(o.B, ',')
		}
		o.B = strconv.AppendUint(o.B, uint64(id), 10)
	}
	o.B = append(o.B, ']')
	if g.Unqueryable != "" {
		o.Str("unqueryable", g.Unqueryable)
	}
	if !full {
		return o.End()
	}
	o.List("consoles", len(g.Consoles), func(e *jsonenc.Object, i int) {
		c := g.Consoles[i]
		e.Str("protocol", c.Protocol)
		if c.Dialect != "" {
			e.Str("dialect", c.Dialect)
		}
		if c.Profile != "" {
			e.Str("profile", c.Profile)
		}
		if c.Port != 0 {
			e.Int("port", int64(c.Port))
		}
		e.Str("source", c.Source)
	})
	o.List("quirks", len(g.Quirks), func(e *jsonenc.Object, i int) {
		q := g.Quirks[i]
		e.Str("id", q.ID)
		e.Str("protocol", q.Protocol)
		e.Str("text", q.Text)
		e.Str("fake", q.Fake)
		e.Str("source", q.Source)
	})
	o.Str("source", g.Source)
	if g.AppIDSource != "" {
		o.Str("app_id_source", g.AppIDSource)
	}
	return o.End()
}
