package cli

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// renderSection prints section s of r (sectionAll: every section) as a
// table: with the table of r's protocol when gsq has one (A2S, OGP), else
// the summary and the player list any protocol gives.
func renderSection(w io.Writer, r *result.Result, q protocol.Query, s result.Section, color bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	if r.Err != nil && len(r.Errors) == 0 {
		switch {
		case s != sectionAll:
		case r.Err.Kind == result.KindCanceled:
			fmt.Fprintf(tw, "  canceled\tinterrupted before the server answered\n")
		default:
			fmt.Fprintf(tw, "  error\t%s\n", r.Err)
		}
		return
	}
	// Sections that Ctrl-C canceled take one line in all, after the
	// others (or with the last of them, section by section), rather than
	// an error line each that says "context canceled".
	var canceled []string
	var rest []result.SectionError
	for _, e := range r.Errors {
		if e.Err.Kind == result.KindCanceled {
			canceled = append(canceled, string(e.Section))
		} else {
			rest = append(rest, e)
		}
	}
	if len(canceled) > 0 {
		cp := *r
		cp.Errors, r = rest, &cp
		defer func() {
			if s == sectionAll || string(s) == canceled[len(canceled)-1] {
				fmt.Fprintf(tw, "\n%s\tcanceled: interrupted before the server answered\n", strings.Join(canceled, ", "))
			}
		}()
		if slices.Contains(canceled, string(s)) {
			return
		}
	}
	switch d := r.Detail.(type) {
	case *result.A2S:
		renderA2S(tw, r, d, q.Sections(), s)
	case *result.OGP:
		if s == sectionAll || s == q.Sections()[len(q.Sections())-1] {
			renderOGP(tw, r, d, color) // every section at once
		}
	case *result.Minecraft:
		renderMinecraft(tw, r, d, color)
	default:
		renderNeutral(tw, r, q.Sections(), s)
	}
}

// queryHint explains a server of protocol p that answered nothing: its
// split reply came in part, or it is silent or closed on this port.
func queryHint(p *protocol.Protocol, r *result.Result) string {
	if r.Err == nil || len(r.Errors) == 0 || !r.Addr.IsValid() { // answered, never asked, or no address found
		return ""
	}
	switch r.Err.Kind {
	case result.KindTimeout:
		if p.ErrIncomplete != nil && errors.Is(r.Err.Err, p.ErrIncomplete) {
			return fmt.Sprintf("%s answered, but fragments of its split reply were lost on the way: "+
				"try again, or give it more --retries or a longer --deadline", r.Addr)
		}
		if p.PortHint != "" {
			return fmt.Sprintf("no answer from %s: %s", r.Addr, p.PortHint)
		}
	case result.KindUnreachable:
		if p.PortHint != "" {
			return fmt.Sprintf("nothing listens on %s/%s: %s", r.Addr, p.Transport, p.PortHint)
		}
	}
	return ""
}

// renderNeutral prints section s (sectionAll: every section) of a
// protocol gsq has no table for: the summary with the info, the player
// list with the players, the error of a section that failed.
func renderNeutral(tw *tabwriter.Writer, r *result.Result, sections []result.Section, s result.Section) {
	if s == sectionAll {
		for _, s := range sections {
			renderNeutral(tw, r, sections, s)
			tw.Flush()
		}
		return
	}
	if err := r.SectionErr(s); err != nil {
		fmt.Fprintf(tw, "\n%s\terror: %s\n", s, err)
		return
	}
	switch s {
	case result.SectionInfo:
		renderSummary(tw, &r.Summary)
	case result.SectionPlayers:
		if list := r.PlayerList(); list != nil {
			fmt.Fprintf(tw, "\nplayers (%d)\n", len(list))
			// Names alone when the protocol reports no score or time.
			namesOnly := !slices.ContainsFunc(list, func(p result.Player) bool { return p.Score != 0 || p.Duration != 0 })
			for _, p := range list {
				if namesOnly {
					fmt.Fprintf(tw, "  %s\n", printable(p.Name))
					continue
				}
				fmt.Fprintf(tw, "  %s\t%d\t%s\n", printable(p.Name), p.Score, p.Duration.Round(time.Second))
			}
		}
	}
}

// renderSummary prints what every protocol can say about a server.
func renderSummary(w io.Writer, s *result.Summary) {
	str := func(k string, v *string) {
		if v != nil && *v != "" {
			fmt.Fprintf(w, "  %s\t%s\n", k, printable(*v))
		}
	}
	str("name", s.Name)
	str("map", s.Map)
	str("game", s.Game)
	if s.Players != nil && s.MaxPlayers != nil {
		fmt.Fprintf(w, "  players\t%d/%d\n", *s.Players, *s.MaxPlayers)
	}
	str("version", s.Version)
	str("connect", s.Connect)
}

// renderA2S prints section s of r, asked sections (sectionAll: every
// one), as a table.
func renderA2S(tw *tabwriter.Writer, r *result.Result, a *result.A2S, sections []result.Section, s result.Section) {
	if s == sectionAll {
		for _, s := range sections {
			renderA2S(tw, r, a, sections, s)
			tw.Flush()
		}
		return
	}
	err := r.SectionErr(s)
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

// printQuery asks addr for what q says with c, as `gsq query` does, and
// prints the table on w. The error, when a section failed, carries the
// exit code. gsq demo uses it.
func printQuery(ctx context.Context, w io.Writer, c *protocol.Client, q protocol.Query, addr netip.AddrPort) error {
	r := c.Ask(ctx, q, addr.String(), addr, protocol.Waits{Timeout: time.Second}, nil)
	renderHeader(w, r)
	renderSection(w, r, q, sectionAll, false)
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

// hexDumper returns a client debug hook (protocol.Client.Debug) that
// writes each datagram to w as a hex dump headed by its direction, peer,
// size and what describe (the protocol's, nil for none) makes of it.
// Queries run concurrently, so writes are serialised.
func hexDumper(w io.Writer, describe func([]byte) string) func(dir string, addr netip.AddrPort, b []byte) {
	var mu sync.Mutex
	return func(dir string, addr netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		arrow := "->"
		if dir == "recv" {
			arrow = "<-"
		}
		desc := ""
		if describe != nil {
			desc = describe(b)
		}
		fmt.Fprintf(w, "%s %s %s %d bytes: %s\n%s", dir, arrow, addr, len(b), desc, hex.Dump(b))
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
