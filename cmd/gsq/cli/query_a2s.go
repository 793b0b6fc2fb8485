package cli

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/gsq-project/gsq/a2s"
)

func init() { queryProtocols["a2s"] = queryA2S }

// defaultA2SPort is the usual Source query port.
const defaultA2SPort = 27015

func queryA2S(ctx context.Context, env *Env, o *queryOptions, target string) queryOutcome {
	addr, err := resolve(ctx, target, defaultA2SPort)
	if err != nil {
		if exitCodeOf(err) == ExitUsage {
			return queryOutcome{usage: err}
		}
		r := &A2SResult{Address: target, Err: err}
		return a2sOutcome(r, target)
	}
	o.a2sOnce.Do(func() {
		o.a2sClient = &a2s.Client{Timeout: o.timeout, Retries: zeroIsNone(o.retries), PadInfo: o.padInfo}
		if o.debug {
			o.a2sClient.Debug = hexDumper(env.Stderr, describeA2S)
		}
	})
	r := QueryA2S(ctx, o.a2sClient, addr, o.info, o.players, o.rules)
	return a2sOutcome(r, target)
}

// QueryA2S asks addr for the sections wanted, one after the other (so the
// challenge the first one earns serves the others), and keeps each
// section's error apart.
func QueryA2S(ctx context.Context, c *a2s.Client, addr netip.AddrPort, info, players, rules bool) *A2SResult {
	r := &A2SResult{Address: addr.String()}
	if info {
		res, err := c.Info(ctx, addr)
		if err != nil {
			r.InfoErr = err
		} else {
			r.Info, r.GoldSource, r.Ping = res.Info, res.GoldSource, res.Ping
		}
	}
	if players {
		r.Players, r.PlayersErr = c.Players(ctx, addr)
	}
	if rules {
		r.Rules, r.RulesErr = c.Rules(ctx, addr)
	}
	return r
}

func a2sOutcome(r *A2SResult, target string) queryOutcome {
	out := queryOutcome{json: r.JSON(), code: r.ExitCode(), render: func(w io.Writer) { renderA2S(w, r) }}
	if r.Info == nil && r.Players == nil && r.Rules == nil && errorKind(r.firstError()) == kindTimeout {
		out.hint = fmt.Sprintf("no answer from %s: the query port often differs from the game port "+
			"(try the server's query port, commonly 27015 or game port + 1)", target)
	}
	return out
}

// renderA2S prints r as the human-readable table of `gsq query`.
func renderA2S(w io.Writer, r *A2SResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	defer tw.Flush()
	fmt.Fprintf(tw, "%s\ta2s", r.Address)
	if r.Ping > 0 {
		fmt.Fprintf(tw, ", %.2f ms", float64(r.Ping)/float64(time.Millisecond))
	}
	fmt.Fprintln(tw)
	if r.Err != nil {
		fmt.Fprintf(tw, "  error\t%s\n", r.Err)
		return
	}
	switch {
	case r.Info != nil:
		renderInfo(tw, r.Info)
	case r.InfoErr != nil:
		fmt.Fprintf(tw, "  info\terror: %s\n", r.InfoErr)
	}
	tw.Flush()
	switch {
	case r.Players != nil:
		fmt.Fprintf(tw, "\nplayers (%d)\n", len(r.Players.List))
		if len(r.Players.List) > 0 {
			fmt.Fprintln(tw, "  #\tname\tscore\ttime")
		}
		for _, p := range r.Players.List {
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%s\n", p.Index, printable(p.Name.UTF8()), p.Score, formatDuration(p.Duration))
		}
	case r.PlayersErr != nil:
		fmt.Fprintf(tw, "\nplayers\terror: %s\n", r.PlayersErr)
	}
	tw.Flush()
	switch {
	case r.Rules != nil:
		renderRules(tw, r.Rules)
	case r.RulesErr != nil:
		fmt.Fprintf(tw, "\nrules\terror: %s\n", r.RulesErr)
	}
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
	row("players", fmt.Sprintf("%d/%d (%d bots)", players, maxPlayers, in.Bots))
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
		row("the ship", fmt.Sprintf("mode %d, %d witnesses, %d min", in.Ship.Mode, in.Ship.Witnesses, in.Ship.Duration))
	}
	if in.Mod != nil {
		row("mod", fmt.Sprintf("%s (version %d)", in.Mod.Link.UTF8(), in.Mod.Version))
	}
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

// describeA2S names an A2S datagram from its header and type byte.
func describeA2S(b []byte) string {
	if len(b) < 4 {
		return "runt datagram"
	}
	switch {
	case b[0] == 0xFE && b[1] == 0xFF && b[2] == 0xFF && b[3] == 0xFF:
		if f, err := a2s.ParseFragment(b); err == nil {
			s := fmt.Sprintf("split %s fragment, id %#x, %d of %d", f.Format, f.ID, f.Number+1, f.Total)
			if f.Compressed {
				s += ", bzip2"
			}
			return s
		}
		return "malformed split fragment"
	case b[0] != 0xFF || b[1] != 0xFF || b[2] != 0xFF || b[3] != 0xFF:
		return "unknown header"
	case len(b) < 5:
		return "empty simple packet"
	}
	names := map[byte]string{
		a2s.TypeInfoRequest: "A2S_INFO request", a2s.TypeInfoReply: "A2S_INFO reply (Source)",
		a2s.TypeInfoReplyGoldSource: "A2S_INFO reply (GoldSource 'm')", a2s.TypePlayerRequest: "A2S_PLAYER request",
		a2s.TypePlayerReply: "A2S_PLAYER reply", a2s.TypeRulesRequest: "A2S_RULES request", a2s.TypeRulesReply: "A2S_RULES reply",
		a2s.TypePingRequest: "A2A_PING request", a2s.TypePingReply: "A2A_PING reply", a2s.TypeChallengeReply: "S2C_CHALLENGE",
		a2s.TypeChallengeRequestLegacy: "A2S_SERVERQUERY_GETCHALLENGE (legacy)",
	}
	if n, ok := names[b[4]]; ok {
		return n
	}
	return fmt.Sprintf("unknown type %#02x", b[4])
}

// zeroIsNone maps a flag's 0 ("none") to the -1 the library settings take
// for none, as they read 0 as "the default".
func zeroIsNone(n int) int {
	if n == 0 {
		return -1
	}
	return n
}
