package cli

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/result"
)

func init() { queryProtocols["a2s"] = newA2SQuery }

// defaultA2SPort is the usual Source query port.
const defaultA2SPort = 27015

// a2sQuery is `gsq query --protocol a2s`: one client shared by every
// server asked.
type a2sQuery struct {
	client   *a2s.Client
	sections []result.Section // in the order they print
	want     a2s.Sections
}

// a2sSections maps the sections of a result to those of a conversation.
var a2sSections = map[result.Section]a2s.Sections{
	result.SectionInfo:    a2s.SectionInfo,
	result.SectionPlayers: a2s.SectionPlayers,
	result.SectionRules:   a2s.SectionRules,
}

func newA2SQuery(env *Env, o *queryOptions) (queryProtocol, error) {
	names, err := querySections(o, "A2S", []string{"info", "players", "rules"}, []string{"info", "players", "rules"})
	if err != nil {
		return nil, err
	}
	// The query's context bounds it by --deadline (with the name's
	// resolution): no deadline of the client's own.
	c := &a2s.Client{Timeout: o.timeout, Retries: zeroIsNone(o.retries), Deadline: -1, PadInfo: o.padInfo}
	if o.debug {
		c.Debug = hexDumper(env.Stderr, a2s.Describe)
	}
	return newA2SSections(c, names), nil
}

// newA2SSections is the query of the named sections with c.
func newA2SSections(c *a2s.Client, names []string) *a2sQuery {
	q := &a2sQuery{client: c}
	for _, n := range names {
		s := result.Section(n)
		q.sections = append(q.sections, s)
		q.want |= a2sSections[s]
	}
	return q
}

func (*a2sQuery) name() result.Protocol { return result.A2SProtocol }
func (*a2sQuery) defaultPort() uint16   { return defaultA2SPort }
func (q *a2sQuery) close()              { q.client.Close() }

// ask asks the sections in one conversation (a2s.Client.Query): the first
// alone, as it earns the server's challenge, then the others together.
// A server that answers nothing is asked nothing more. Each section is
// sent to updates as soon as it ends.
func (q *a2sQuery) ask(ctx context.Context, addr netip.AddrPort, updates chan<- update) {
	q.client.QueryFunc(ctx, addr, q.want, func(ended a2s.Sections, r *a2s.Result) {
		for _, s := range q.sections {
			if ended&a2sSections[s] == 0 {
				continue
			}
			part := a2s.Result{RTT: r.RTT} // one section, copied: r is the client's
			switch s {
			case result.SectionInfo:
				part.Info, part.GoldSource, part.InfoErr = r.Info, r.GoldSource, r.InfoErr
			case result.SectionPlayers:
				part.Players, part.PlayersErr = r.Players, r.PlayersErr
			case result.SectionRules:
				part.Rules, part.RulesErr = r.Rules, r.RulesErr
			}
			updates <- update{s, func(res *result.Result) { res.SetA2S(&part) }}
		}
	})
}

// hint explains a server that answered nothing.
func (q *a2sQuery) hint(r *result.Result) string {
	if r.Err == nil || len(r.Errors) == 0 { // answered, or never asked
		return ""
	}
	switch r.Err.Kind {
	case result.KindTimeout:
		if errors.Is(r.Err.Err, a2s.ErrIncomplete) {
			return lostFragments(r.Addr, "reply")
		}
		return fmt.Sprintf("no answer from %s: the query port often differs from the game port "+
			"(try the server's query port, commonly 27015 or game port + 1)", r.Addr)
	case result.KindUnreachable:
		return fmt.Sprintf("nothing listens on %s/udp: the query port often differs from the game port "+
			"(try the server's query port, commonly 27015 or game port + 1)", r.Addr)
	}
	return ""
}

// lostFragments is the hint for a server at addr whose split reply (the
// protocol's word for it) came only in part.
func lostFragments(addr netip.AddrPort, reply string) string {
	return fmt.Sprintf("%s answered, but fragments of its split %s were lost on the way: "+
		"try again, or give it more --retries or a longer --deadline", addr, reply)
}

// render prints section s of r (sectionAll: every section) as a table.
func (q *a2sQuery) render(w io.Writer, r *result.Result, s result.Section) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	if s == sectionAll {
		if r.Err != nil && len(r.Errors) == 0 {
			fmt.Fprintf(tw, "  error\t%s\n", r.Err)
			return
		}
		for _, s := range q.sections {
			q.render(tw, r, s)
			tw.Flush()
		}
		return
	}
	a, err := r.A2S, r.SectionErr(s)
	switch {
	case s == result.SectionInfo && a.Info != nil:
		renderInfo(tw, a.Info)
	case s == result.SectionPlayers && a.Players != nil:
		fmt.Fprintf(tw, "\nplayers (%d)\n", len(a.Players.List))
		if len(a.Players.List) > 0 {
			fmt.Fprintln(tw, "  #\tname\tscore\ttime")
		}
		for _, p := range a.Players.List {
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%s\n", p.Index, printable(p.Name.UTF8()), p.Score, formatDuration(p.Duration))
		}
	case s == result.SectionRules && a.Rules != nil:
		renderRules(tw, a, r.SectionErr(result.SectionMods))
	case err != nil && s == result.SectionInfo:
		fmt.Fprintf(tw, "  info\terror: %s\n", err)
	case err != nil:
		fmt.Fprintf(tw, "\n%s\terror: %s\n", s, err)
	}
}

// printA2SQuery asks addr for info, players and rules with c, as
// `gsq query` does, and prints the table on w. The error, when a section
// failed, carries the exit code. gsq demo uses it.
func printA2SQuery(ctx context.Context, w io.Writer, c *a2s.Client, addr netip.AddrPort) error {
	q := newA2SSections(c, []string{"info", "players", "rules"})
	updates := make(chan update, 8)
	go func() {
		defer close(updates)
		q.ask(ctx, addr, updates)
	}()
	r := result.New(addr.String(), addr, result.A2SProtocol)
	for u := range updates {
		u.apply(r)
	}
	renderHeader(w, r)
	q.render(w, r, sectionAll)
	if code := resultExitCode(r); code != ExitOK {
		return withCode(code, fmt.Errorf("query %s: %v", addr, r.Errors[0].Err))
	}
	return nil
}

func renderInfo(w io.Writer, in *a2s.Info) {
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(w, "  %s\t%s\n", k, printable(v))
		}
	}
	row("name", in.Name.UTF8())
	row("map", in.Map.UTF8())
	game := in.Game.UTF8() + " (" + in.Folder.UTF8()
	if id := in.AppID(); id != 0 {
		game += fmt.Sprintf(", app %d", id)
	}
	row("game", game+")")
	players, maxPlayers := in.PlayerCounts()
	if in.NoBots {
		row("players", fmt.Sprintf("%d/%d", players, maxPlayers))
	} else {
		row("players", fmt.Sprintf("%d/%d (%s)", players, maxPlayers, plural(int(in.Bots), "bot")))
	}
	flags := []string{in.ServerType.String(), in.Environment.String()}
	if in.Visibility != 0 {
		flags = append(flags, "password")
	}
	if in.VAC == 1 {
		flags = append(flags, "VAC")
	}
	row("server", strings.Join(flags, ", "))
	row("version", in.Version.UTF8())
	if in.EDF&a2s.EDFPort != 0 {
		row("game port", fmt.Sprint(in.Port))
	}
	if in.EDF&a2s.EDFKeywords != 0 {
		row("keywords", in.Keywords.UTF8())
	}
	if in.EDF&a2s.EDFSpectator != 0 {
		row("spectator", fmt.Sprintf("%s on port %d", in.SpectatorName.UTF8(), in.SpectatorPort))
	}
	if in.Ship != nil {
		row("the ship", fmt.Sprintf("mode %d, %s, %d min", in.Ship.Mode, plural(int(in.Ship.Witnesses), "witness"), in.Ship.Duration))
	}
	if in.Mod != nil {
		row("mod", fmt.Sprintf("%s (version %d)", in.Mod.Link.UTF8(), in.Mod.Version))
	}
}

// plural is "1 bot", "2 bots", "0 bots": English plurals for the words
// gsq counts ("retry" makes "retries", "witness" "witnesses").
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	switch {
	case strings.HasSuffix(word, "s"), strings.HasSuffix(word, "x"), strings.HasSuffix(word, "ch"), strings.HasSuffix(word, "sh"):
		word += "es"
	case strings.HasSuffix(word, "y") && !strings.ContainsAny(word[len(word)-2:len(word)-1], "aeiou"):
		word = word[:len(word)-1] + "ies"
	default:
		word += "s"
	}
	return fmt.Sprintf("%d %s", n, word)
}

// printable replaces control characters (some servers prefix names with
// 0x01 bytes to sort first) so they cannot move the terminal's cursor.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '·'
		}
		return r
	}, s)
}

func formatDuration(seconds float32) string {
	if seconds < 0 {
		return "-"
	}
	return (time.Duration(seconds) * time.Second).Round(time.Second).String()
}

// hexDumper returns a client debug hook (a2s.Client.Debug, ogp.Client.Debug)
// that writes each datagram to w as a hex dump headed by its direction,
// peer, size and what describe makes of it. Queries run concurrently, so
// writes are serialised.
func hexDumper(w io.Writer, describe func([]byte) string) func(dir string, addr netip.AddrPort, b []byte) {
	var mu sync.Mutex
	return func(dir string, addr netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		arrow := "->"
		if dir == "recv" {
			arrow = "<-"
		}
		fmt.Fprintf(w, "%s %s %s %d bytes: %s\n%s", dir, arrow, addr, len(b), describe(b), hex.Dump(b))
	}
}

// zeroIsNone maps a flag's 0 ("none") to the -1 the library settings take
// for none, as they read 0 as "the default".
func zeroIsNone(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
