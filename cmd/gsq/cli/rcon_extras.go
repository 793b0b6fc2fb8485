package cli

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/gsq-project/gsq/rcon"
)

// rconDumper returns an rcon.Options.Debug hook that writes each packet to
// w as a hex dump headed by its direction, size, id, type and body. The
// client hands it the login packet with the password already masked.
func rconDumper(w io.Writer, addr string) func(dir string, peer netip.AddrPort, b []byte) {
	return dumper(w, addr, func(dir string, b []byte) string {
		p, _, err := rcon.ParsePacket(b, len(b))
		desc := "malformed packet"
		if err == nil {
			desc = fmt.Sprintf("id %d %s, body %d bytes %q", p.ID, describeRconType(dir, p.Type), len(p.Body), abbreviate(rcon.DecodeText(p.Body), 60))
		}
		return desc + "\n" + hex.Dump(b)
	})
}

// dumper returns a Debug hook that writes each message to w, headed by
// its direction and size, then as format describes it.
func dumper(w io.Writer, addr string, format func(dir string, b []byte) string) func(dir string, peer netip.AddrPort, b []byte) {
	var mu sync.Mutex
	return func(dir string, _ netip.AddrPort, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		arrow := "->"
		if dir == "recv" {
			arrow = "<-"
		}
		fmt.Fprintf(w, "%s %s %s %d bytes: %s", dir, arrow, addr, len(b), format(dir, b))
	}
}

// describeRconType names a packet type as the direction reads it: type 2
// is EXECCOMMAND going out and AUTH_RESPONSE coming back.
func describeRconType(dir string, t rcon.PacketType) string {
	switch {
	case t == rcon.TypeExecCommand && dir == "recv":
		return "SERVERDATA_AUTH_RESPONSE"
	case t == rcon.TypeExecCommand:
		return "SERVERDATA_EXECCOMMAND"
	case t == rcon.TypeAuth:
		return "SERVERDATA_AUTH"
	case t == rcon.TypeResponseValue:
		return "SERVERDATA_RESPONSE_VALUE"
	}
	return t.String()
}

// abbreviate cuts s to n runes, marking the cut.
func abbreviate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// Common console commands, offered by the shell's Tab completion along
// with the first words of the history.
var (
	sourceCommands = []string{"status", "say", "users", "maps", "map", "changelevel", "kick", "kickid", "banid", "banip",
		"removeid", "removeip", "listid", "listip", "writeid", "writeip", "exec", "cvarlist", "find", "stats", "echo",
		"version", "bot_add", "bot_kick", "mp_restartgame", "mp_timelimit", "sv_password", "quit"}
	minecraftCommands = []string{"help", "list", "say", "tell", "msg", "me", "kick", "ban", "ban-ip", "pardon", "pardon-ip",
		"banlist", "op", "deop", "whitelist", "time", "weather", "gamemode", "defaultgamemode", "difficulty", "tp", "give",
		"kill", "seed", "save-all", "save-on", "save-off", "gamerule", "effect", "xp", "experience", "clear",
		"setworldspawn", "spawnpoint", "summon", "stop"}
)

// completer completes the first word of a line from base, the console's
// common commands, and from the first words of history; later words are
// left alone. Candidates are sorted and unique.
func completer(base []string, history func() []string) func(line string) []string {
	return func(line string) []string {
		if strings.ContainsAny(line, " \t") {
			return nil
		}
		var out []string
		add := func(w string) {
			if strings.HasPrefix(w, line) && w != line {
				out = append(out, w)
			}
		}
		for _, w := range base {
			add(w)
		}
		for _, h := range history() {
			if first, _, _ := strings.Cut(strings.TrimSpace(h), " "); first != "" && !strings.HasPrefix(first, ":") {
				add(first)
			}
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
}

// printRconConfig prints the settings a run would use, for --print-config.
// The password is never printed: only whether one was found.
func printRconConfig(w io.Writer, t *rconTarget) {
	profile := t.opts.Profile
	if profile == "" {
		profile = "(none)"
	}
	password := "(none)"
	if t.password != "" {
		password = "(set, not shown)"
	}
	if isRconProtocol(t.protocol) {
		fmt.Fprintf(w, "address:   %s\ndialect:   %v\nprofile:   %s\ntimeout:   %v\npassword:  %s\n",
			t.addr, t.opts.Dialect, profile, t.opts.Timeout, password)
	} else {
		fmt.Fprintf(w, "address:   %s\nprotocol:  %s\ntimeout:   %v\npassword:  %s\n", t.addr, t.protocol, t.opts.Timeout, password)
	}
	if t.opts.KeepAlive > 0 {
		fmt.Fprintf(w, "keepalive: %v\n", t.opts.KeepAlive)
	}
	if t.opts.LooseIDs {
		fmt.Fprintln(w, "loose-ids: true")
	}
}

// registerRconCompletions completes rcon's enumerated flags and, as the
// first argument, the names of the configured servers.
func registerRconCompletions(env *Env, cmd *cobra.Command, o *rconOptions) {
	fixed := func(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return values, cobra.ShellCompDirectiveNoFileComp
		}
	}
	_ = cmd.RegisterFlagCompletionFunc("profile", fixed(rcon.ProfileNames()...))
	_ = cmd.RegisterFlagCompletionFunc("dialect", fixed(rconDialects...))
	_ = cmd.RegisterFlagCompletionFunc("protocol", fixed(consoleProtocols...))
	_ = cmd.RegisterFlagCompletionFunc("encoding", fixed("auto", "utf8", "latin1"))
	serverNames := func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		path := o.config
		if path == "" {
			path = rconConfigPath(env)
		}
		cfg, err := loadRconConfig(path, o.config != "")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		names := make([]string, 0, len(cfg.servers))
		for name := range cfg.servers {
			names = append(names, name)
		}
		slices.Sort(names)
		return names, cobra.ShellCompDirectiveNoFileComp
	}
	_ = cmd.RegisterFlagCompletionFunc("host", serverNames)
	cmd.ValidArgsFunction = func(c *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 || o.host != "" {
			return nil, cobra.ShellCompDirectiveNoFileComp // commands
		}
		return serverNames(c, args, toComplete)
	}
}
