package cli

// The table of `gsq query --protocol minecraft`: Server List Ping's
// status (or a legacy ping's reply) in one section. The JSON fields are
// in docs/json.md.

import (
	"fmt"
	"text/tabwriter"

	"github.com/gsq-project/gsq/minecraft/slp"
	"github.com/gsq-project/gsq/rcon/mctext"
	"github.com/gsq-project/gsq/result"
)

// renderMinecraft prints r, whose detail is m, as a table: the MOTD (in
// colour on a terminal), version, counts, favicon, chat flags, mods, and
// the player sample with the made-up entries marked. A server that is up
// but does not answer status says so.
func renderMinecraft(tw *tabwriter.Writer, r *result.Result, m *result.Minecraft, color bool) {
	motd := func(legacy string) string {
		if color {
			return mctext.ToANSI(printable(legacy))
		}
		return printable(mctext.Strip(legacy))
	}
	switch {
	case m.NoStatus:
		fmt.Fprintf(tw, "  status\tup, not answering status (it closed the connection after the handshake: enable-status=false, or still starting)\n")
		return
	case m.Status != nil:
		renderSLPStatus(tw, m.Status, motd)
	case m.Legacy != nil:
		l := m.Legacy
		fmt.Fprintf(tw, "  motd\t%s\n", motd(l.MOTD))
		v := printable(l.Version)
		switch {
		case l.Modern():
			v += " (a 1.7+ server: legacy replies name protocol 127, not its own)"
		case l.Protocol != nil:
			v += fmt.Sprintf(" (protocol %d)", *l.Protocol)
		}
		fmt.Fprintf(tw, "  version\t%s\n", v)
		fmt.Fprintf(tw, "  players\t%d/%d\n", l.Online, l.Max)
		fmt.Fprintf(tw, "  answered\tthe legacy ping\n")
	default:
		if err := r.SectionErr(result.SectionInfo); err != nil {
			fmt.Fprintf(tw, "  info\terror: %s\n", err)
		}
		return
	}
	if t := m.Target; t.SRV {
		fmt.Fprintf(tw, "  target\t%s (from the SRV record)\n", t)
	}
	if m.Trailer != nil {
		fmt.Fprintf(tw, "  trailer\t%d bytes after the JSON (Better Compatibility Checker)\n", len(m.Trailer))
	}
	if m.Status != nil && !m.Pong {
		fmt.Fprintf(tw, "  ping\tof the status: the server closed before the ping\n")
	}
	if m.Status != nil && m.Status.Players != nil && m.Status.Players.Sample != nil {
		sample := m.Status.Players.Sample
		fmt.Fprintf(tw, "\nplayers (sample of %d)\n", len(sample))
		for _, p := range sample {
			mark := ""
			if p.Fake {
				mark = "\tnot a player (a line of text)"
			}
			fmt.Fprintf(tw, "  %s\t%s%s\n", motd(p.Name), printable(p.ID), mark)
		}
	} else if m.PlayersHidden() {
		fmt.Fprintf(tw, "\nplayers\thidden by the server\n")
	}
}

// renderSLPStatus prints the rows of a status JSON.
func renderSLPStatus(tw *tabwriter.Writer, s *slp.Status, motd func(string) string) {
	if s.Description.Raw != nil {
		fmt.Fprintf(tw, "  motd\t%s\n", motd(s.Description.Legacy()))
	}
	if v := s.Version; v != nil {
		name := printable(v.Name)
		if v.Protocol != nil {
			name += fmt.Sprintf(" (protocol %d)", *v.Protocol)
		}
		fmt.Fprintf(tw, "  version\t%s\n", name)
	}
	if p := s.Players; p != nil {
		count := func(n *int32) string {
			if n == nil {
				return "?"
			}
			return fmt.Sprint(*n)
		}
		fmt.Fprintf(tw, "  players\t%s/%s\n", count(p.Online), count(p.Max))
	}
	if f := s.Favicon; f != nil {
		if f.Malformed {
			fmt.Fprintf(tw, "  favicon\tnot a base64 data URL (%d bytes), sha256 %s\n", f.Size, f.SHA256)
		} else {
			fmt.Fprintf(tw, "  favicon\t%s, %d bytes, sha256 %s\n", printable(f.MIME), f.Size, f.SHA256)
		}
	}
	flag := func(k string, v *bool) {
		if v != nil {
			fmt.Fprintf(tw, "  %s\t%v\n", k, *v)
		}
	}
	flag("secure chat", s.EnforcesSecureChat)
	flag("previews chat", s.PreviewsChat)
	flag("no chat reports", s.PreventsChatReports)
	flag("modded", s.IsModded)
	if m := s.Mods; m != nil {
		line := fmt.Sprintf("%d mods, %d channels (%s", len(m.Mods), len(m.Channels), m.Kind)
		if m.Compressed {
			line += ", compressed"
		}
		if m.Truncated {
			line += ", truncated by the server"
		}
		line += ")"
		if m.Err != nil {
			line += "; " + m.Err.Error()
		}
		fmt.Fprintf(tw, "  mods\t%s\n", line)
	}
}
