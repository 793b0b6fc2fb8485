package cli

import (
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/gsq-project/gsq/rcon"
)

// rconDumper returns an rcon.Options.Debug hook that writes each packet to
// w as a hex dump headed by its direction, size, id, type and body. The
// body of a login packet is the password: it is shown as asterisks, in
// the header and in the dump.
func rconDumper(w io.Writer, addr string) func(dir string, b []byte) {
	var mu sync.Mutex
	return func(dir string, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		arrow := "->"
		if dir == "recv" {
			arrow = "<-"
		}
		p, _, err := rcon.ParsePacket(b, len(b))
		desc := "malformed packet"
		if err == nil {
			if dir == "send" && p.Type == rcon.TypeAuth {
				b = redactBody(b)
				p.Body = []byte(strings.Repeat("*", len(p.Body)))
			}
			desc = fmt.Sprintf("id %d %s, body %d bytes %q", p.ID, describeRconType(dir, p.Type), len(p.Body), abbreviate(rcon.DecodeText(p.Body), 60))
		}
		fmt.Fprintf(w, "%s %s %s %d bytes: %s\n%s", dir, arrow, addr, len(b), desc, hex.Dump(b))
	}
}

// redactBody returns a copy of the packet b with its body bytes (between
// the 12-byte header and the two NULs) replaced by '*'.
func redactBody(b []byte) []byte {
	b = slices.Clone(b)
	for i := 12; i < len(b)-2; i++ {
		b[i] = '*'
	}
	return b
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

// completer completes the first word of a line from the dialect's common
// commands and from the first words of history; later words are left
// alone. Candidates are sorted and unique.
func completer(d rcon.Dialect, history func() []string) func(line string) []string {
	base := sourceCommands
	if d == rcon.DialectMinecraft {
		base = minecraftCommands
	}
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
	fmt.Fprintf(w, "address:   %s\ndialect:   %v\nprofile:   %s\ntimeout:   %v\npassword:  %s\n",
		t.addr, t.opts.Dialect, profile, t.opts.Timeout, password)
	if t.opts.KeepAlive > 0 {
		fmt.Fprintf(w, "keepalive: %v\n", t.opts.KeepAlive)
	}
	if t.opts.LooseIDs {
		fmt.Fprintln(w, "loose-ids: true")
	}
}
