package catalog

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gsq-project/gsq/internal/textdist"
)

// Game is one game gsq knows: how to query it, how to administer it,
// what is odd about it, and where each fact comes from.
type Game struct {
	// ID is what --game takes: gamedig's id, where gamedig has the game.
	ID string
	// Aliases are other names --game takes (gamedig's old ids).
	Aliases []string
	// Name is the game's name.
	Name string
	// GamePort is the port players connect to by default; 0 when the
	// game has no usual one.
	GamePort uint16
	// Query are the ways to query a server, in the order to try them.
	// Empty when gsq cannot query the game (see Unqueryable).
	Query []Endpoint
	// Consoles are the remote consoles a server may offer.
	Consoles []Console
	// AppIDs are the Steam app ids its servers list under (what `gsq
	// discover --game` filters by, \appid\N), the first the main one;
	// empty when unknown or not on Steam.
	AppIDs []uint32
	// AppIDSource says where AppIDs come from.
	AppIDSource string
	// Quirks are what the game does that a client must know.
	Quirks []Quirk
	// Unqueryable, when set, says why gsq does not query the game: what
	// it needs that gsq does not ship.
	Unqueryable string
	// Source says where the ports and the protocols come from.
	Source string
}

// Endpoint is one way to query a game's servers: a protocol, and the
// port it answers on, either a fixed port or the game port moved by an
// offset.
type Endpoint struct {
	// Protocol is a query protocol's name in package protocol's registry
	// ("a2s").
	Protocol string
	// Port is the query port when it does not follow the game port; 0
	// when it does (see Offset).
	Port uint16
	// Offset is the query port's distance from the game port, when Port
	// is 0: Valheim answers A2S on the game port plus 1.
	Offset int
	// Source says where this endpoint comes from, when it is not the
	// game's Source.
	Source string
}

// QueryPort returns the port the endpoint answers on for a server whose
// game port is gamePort (the game's default when 0); ok is false when
// there is none (an offset and no game port, or a port out of range).
func (e Endpoint) QueryPort(g *Game, gamePort uint16) (port uint16, ok bool) {
	if e.Port != 0 {
		return e.Port, true
	}
	if gamePort == 0 {
		gamePort = g.GamePort
	}
	p := int(gamePort) + e.Offset
	if gamePort == 0 || p <= 0 || p > 65535 {
		return 0, false
	}
	return uint16(p), true
}

// Console is a remote console a game's servers offer.
type Console struct {
	// Protocol is one of Consoles: "rcon", "webrcon", "battleye",
	// "palworld", "telnet".
	Protocol string
	// Dialect is the RCON dialect ("source", "minecraft"), for rcon.
	Dialect string
	// Profile is package rcon's game profile ("srcds", "ark"...), for
	// rcon, when one fits.
	Profile string
	// Port is the console's default port; 0 when the game has none.
	Port uint16
	// Source says where this comes from.
	Source string
}

// Quirk is something a game does that a client must know.
type Quirk struct {
	// ID names the quirk ("counts-in-keywords").
	ID string
	// Protocol is the protocol it concerns.
	Protocol string
	// Text says what it is, and what gsq does about it.
	Text string
	// Fake is the fake server's profile that plays it (a2s/a2stest's,
	// for a2s), or NotModelled.
	Fake string
	// Source says where it comes from.
	Source string
}

// NotModelled is a Quirk's Fake when no fake server plays it yet.
const NotModelled = "not yet modelled"

// Consoles are the console protocols a Console may name: package rcon
// (the Source and Minecraft dialects), webrcon (Rust), battleye (DayZ,
// Arma), palworld (Palworld's REST API) and telnet (package sdtd, 7 Days
// to Die). They are not query protocols: `gsq rcon` speaks them.
var Consoles = []string{"rcon", "webrcon", "battleye", "palworld", "telnet"}

// clone returns a copy of g that shares nothing with it.
func (g *Game) clone() Game {
	c := *g
	c.Aliases, c.Query, c.Consoles = slices.Clone(g.Aliases), slices.Clone(g.Query), slices.Clone(g.Consoles)
	c.AppIDs, c.Quirks = slices.Clone(g.AppIDs), slices.Clone(g.Quirks)
	return c
}

// All returns every game, sorted by ID. The Games are copies.
func All() []Game {
	out := make([]Game, len(games))
	for i := range games {
		out[i] = games[i].clone()
	}
	slices.SortFunc(out, func(a, b Game) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// ErrUnknownGame is the error of Lookup for a name no game has.
var ErrUnknownGame = errors.New("catalog: unknown game")

// Lookup returns the game called name: its ID or an alias, in any case.
// An unknown name is an error matching ErrUnknownGame that suggests the
// nearest names: the IDs and aliases within two edits of it (a typo), then
// the games whose ID or name holds it, eight at most.
func Lookup(name string) (*Game, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	for i := range games {
		g := &games[i]
		if g.ID == n || slices.Contains(g.Aliases, n) {
			c := g.clone()
			return &c, nil
		}
	}
	const most = 8
	all := All()
	var names []string
	owner := map[string]string{} // an alias's game ID
	for _, g := range all {
		names = append(names, g.ID)
		for _, a := range g.Aliases {
			names = append(names, a)
			owner[a] = g.ID
		}
	}
	var near []string
	add := func(id string) {
		if o, ok := owner[id]; ok {
			id = o
		}
		if len(near) < most && !slices.Contains(near, id) {
			near = append(near, id)
		}
	}
	if n != "" {
		for _, id := range textdist.Nearest(n, names, min(2, (len(n)-1)/2), most) {
			add(id)
		}
		for _, g := range all {
			if strings.Contains(g.ID, n) || strings.Contains(strings.ToLower(g.Name), n) {
				add(g.ID)
			}
		}
	}
	if len(near) > 0 {
		return nil, fmt.Errorf("%w %q (did you mean %s?)", ErrUnknownGame, name, strings.Join(near, ", "))
	}
	return nil, fmt.Errorf("%w %q (`gsq games` lists the %d games gsq knows)", ErrUnknownGame, name, len(games))
}

// ByAppID returns the games whose servers list under the Steam app id.
func ByAppID(id uint32) []Game {
	var out []Game
	for _, g := range All() {
		if slices.Contains(g.AppIDs, id) {
			out = append(out, g)
		}
	}
	return out
}
