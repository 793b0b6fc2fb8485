package rcontest

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/rcon"
)

// MaxBig is the largest output the "big" command produces.
const MaxBig = 64 << 20

// SimPlayer is a player of a [SimHandler].
type SimPlayer struct {
	Name     string
	Score    int32
	Duration time.Duration // time connected
}

// SimHandler is an [rcon.Handler] with a few built-in commands, for
// simulated servers (`gsq serve`, `gsq demo`) and tests. Command names
// are case-insensitive; output lines end in "\n":
//
//	status      SRCDS-style status: hostname, map, player counts, one row per player
//	players     "Players (N/MAX):" then "NAME SCORE DURATION" per player
//	list        Minecraft's "There are N of a max of MAX players online: A, B"
//	echo ARGS   ARGS
//	say ARGS    "Console: ARGS"
//	big N       exactly N bytes (0 <= N <= MaxBig) of BigOutput(N), streamed
//	help        the command list
//
// Anything else answers `Unknown command "NAME"`; an empty command
// answers nothing. The zero value works, with an empty player list. The
// fields must not change while the handler is serving.
type SimHandler struct {
	Hostname   string // "" means "gsq simulated server"
	Map        string // "" means "de_dust2"
	MaxPlayers int
	Players    []SimPlayer
}

// ServeRCON runs cmd.
func (h *SimHandler) ServeRCON(_ context.Context, w rcon.ResponseWriter, cmd string) {
	name, args, _ := strings.Cut(strings.TrimSpace(cmd), " ")
	args = strings.TrimSpace(args)
	switch strings.ToLower(name) {
	case "":
	case "status":
		h.status(w)
	case "players":
		fmt.Fprintf(w, "Players (%d/%d):\n", len(h.Players), h.MaxPlayers)
		for _, p := range h.Players {
			fmt.Fprintf(w, "%s %d %s\n", p.Name, p.Score, p.Duration.Round(time.Second))
		}
	case "list":
		names := make([]string, len(h.Players))
		for i, p := range h.Players {
			names[i] = p.Name
		}
		fmt.Fprintf(w, "There are %d of a max of %d players online: %s\n", len(h.Players), h.MaxPlayers, strings.Join(names, ", "))
	case "echo":
		io.WriteString(w, args+"\n")
	case "say":
		io.WriteString(w, "Console: "+args+"\n")
	case "big":
		n, err := strconv.Atoi(args)
		if err != nil || n < 0 || n > MaxBig {
			fmt.Fprintf(w, "big: want a byte count from 0 to %d, got %q\n", MaxBig, args)
			return
		}
		_ = WriteBig(w, n)
	case "help":
		io.WriteString(w, "commands: status, players, list, echo ARGS, say ARGS, big N, help\n")
	default:
		fmt.Fprintf(w, "Unknown command %q\n", name)
	}
}

func (h *SimHandler) status(w io.Writer) {
	hostname, mapName := h.Hostname, h.Map
	if hostname == "" {
		hostname = "gsq simulated server"
	}
	if mapName == "" {
		mapName = "de_dust2"
	}
	fmt.Fprintf(w, "hostname: %s\nversion : gsq simulated\nmap     : %s\n", hostname, mapName)
	fmt.Fprintf(w, "players : %d humans, 0 bots (%d max)\n\n", len(h.Players), h.MaxPlayers)
	io.WriteString(w, "# userid name score connected\n")
	for i, p := range h.Players {
		fmt.Fprintf(w, "# %d %q %d %s\n", i+1, p.Name, p.Score, p.Duration.Round(time.Second))
	}
}

// bigLine is the repeated line of BigOutput: 1-, 2-, 3- and 4-byte
// runes, so that cuts at any byte count can land inside a rune.
const bigLine = "0000000 grüße € 😀 ok\n"

// WriteBig writes exactly n bytes of BigOutput(n) to w in chunks, and
// returns the first write error.
func WriteBig(w io.Writer, n int) error {
	var chunk []byte
	line := 0
	for n > 0 {
		chunk = chunk[:0]
		for len(chunk) < 32<<10 && n-len(chunk) >= len(bigLine) {
			chunk = fmt.Appendf(chunk, "%07d", line%10000000)
			chunk = append(chunk, bigLine[7:]...)
			line++
		}
		if len(chunk) == 0 { // the tail: ASCII, so it can end anywhere
			chunk = append(chunk, strings.Repeat(".", n-1)...)
			chunk = append(chunk, '\n')
		}
		if _, err := w.Write(chunk); err != nil {
			return err
		}
		n -= len(chunk)
	}
	return nil
}

// BigOutput returns the output of the "big N" command: numbered lines
// of mixed-width UTF-8, padded with dots and a newline to exactly n
// bytes. It is valid UTF-8.
func BigOutput(n int) string {
	var b strings.Builder
	b.Grow(n)
	_ = WriteBig(&b, n)
	return b.String()
}
