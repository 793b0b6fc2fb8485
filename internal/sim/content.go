// Package sim simulates game servers for `gsq serve`, `gsq demo`, `gsq
// monitor --demo`, the benchmarks and the tests. Content describes what a
// server serves (its name, map, players and rules) and turns it into the
// replies of each protocol gsq speaks: A2S, OGP v0.91 and RCON. Mux shares
// one UDP port between A2S and OGP; Server runs one simulated server, A2S
// and OGP on UDP and RCON on TCP; Fleet runs thousands, one UDP socket
// each, served by epoll loops on Linux, with replies that never change;
// LiveFleet runs a few whose players come and go, and that a test can
// change, stop and start again. The replies come from the a2s, ogp and
// rcon packages' own servers and encoders: nothing here speaks a protocol
// by hand.
package sim

import (
	"fmt"
	"time"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/ogp"
)

// Player is a simulated player.
type Player struct {
	Name     string        `yaml:"name"`
	Score    int32         `yaml:"score"`
	Duration time.Duration `yaml:"duration"` // time connected
}

// Rule is a simulated server variable (cvar).
type Rule struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
}

// Team is a simulated team, which OGP reports.
type Team struct {
	Name    string `yaml:"name"`
	Score   int32  `yaml:"score"`
	Players uint32 `yaml:"players"` // players in the team
}

// AddOn is a simulated add-on (a plugin, a mutator), which OGP reports.
type AddOn struct {
	ShortName string `yaml:"short_name"`
	LongName  string `yaml:"long_name"`
	Version   string `yaml:"version"`
	Active    bool   `yaml:"active"`
}

// Limit is a simulated limit of the match, which OGP reports: Type is
// time (seconds), player-score, rounds or team-score; Left, when set, is
// what is left of it.
type Limit struct {
	Type  string  `yaml:"type"`
	Limit uint32  `yaml:"limit"`
	Left  *uint32 `yaml:"left"`
}

// limitTypes are the names of Limit.Type.
var limitTypes = map[string]ogp.LimitType{
	ogp.LimitTime.String(): ogp.LimitTime, ogp.LimitPlayerScore.String(): ogp.LimitPlayerScore,
	ogp.LimitRounds.String(): ogp.LimitRounds, ogp.LimitTeamScore.String(): ogp.LimitTeamScore,
}

// Content is what one simulated server reports. The zero value is an
// empty but valid server; Default returns a populated one.
type Content struct {
	Name       string   `yaml:"name"`
	Map        string   `yaml:"map"`
	Folder     string   `yaml:"folder"`
	Game       string   `yaml:"game"`
	AppID      uint32   `yaml:"app_id"`
	MaxPlayers int      `yaml:"max_players"`
	Bots       int      `yaml:"bots"`
	Version    string   `yaml:"version"`
	Keywords   string   `yaml:"keywords"`
	Password   bool     `yaml:"password"` // visibility: private
	VAC        bool     `yaml:"vac"`
	Players    []Player `yaml:"players"`
	Rules      []Rule   `yaml:"rules"`
	// What OGP reports beyond A2S; an OGP query asking for these gets them
	// empty when they are (none, rather than "not supported").
	NextMap       string  `yaml:"next_map"`
	GameType      string  `yaml:"game_type"`
	GameMode      string  `yaml:"game_mode"`
	ReservedSlots uint32  `yaml:"reserved_slots"`
	Teams         []Team  `yaml:"teams"`
	AddOns        []AddOn `yaml:"addons"`
	Limits        []Limit `yaml:"limits"`
}

// Default is the server `gsq serve` and `gsq demo` simulate when nothing
// else is configured.
func Default() Content {
	return Content{
		Name:       "gsq simulated server",
		Map:        "de_dust2",
		Folder:     "cstrike",
		Game:       "Counter-Strike: Source",
		AppID:      240,
		MaxPlayers: 24,
		Version:    "1.0.0.0",
		Keywords:   "gsq,simulated",
		VAC:        true,
		Players: []Player{
			{Name: "Alice", Score: 21, Duration: 42*time.Minute + 7*time.Second},
			{Name: "Bob", Score: 12, Duration: 17*time.Minute + 30*time.Second},
			{Name: "Zoë", Score: -1, Duration: 95 * time.Second},
		},
		Rules: []Rule{
			{Name: "mp_friendlyfire", Value: "0"},
			{Name: "mp_timelimit", Value: "30"},
			{Name: "sv_gravity", Value: "800"},
		},
	}
}

// Validate reports content that no protocol can carry.
func (c *Content) Validate() error {
	switch {
	case c.MaxPlayers < 0 || c.MaxPlayers > 65535:
		return fmt.Errorf("max_players %d out of range 0-65535", c.MaxPlayers)
	case c.Bots < 0 || c.Bots > 255:
		return fmt.Errorf("bots %d out of range 0-255", c.Bots)
	case len(c.Players) > 65535:
		return fmt.Errorf("%d players is more than any protocol carries", len(c.Players))
	case len(c.Teams) > 65535 || len(c.AddOns) > 65535 || len(c.Limits) > 65535:
		return fmt.Errorf("more than 65535 teams, add-ons or limits")
	}
	for _, l := range c.Limits {
		if _, ok := limitTypes[l.Type]; !ok {
			return fmt.Errorf("limit type %q is not one of time, player-score, rounds, team-score", l.Type)
		}
	}
	return nil
}

// A2S builds the A2S replies for c, served on port.
func (c *Content) A2S(port uint16) (*a2s.Info, *a2s.Players, *a2s.Rules) {
	info := &a2s.Info{
		Format:      a2s.TypeInfoReply,
		Protocol:    17,
		Name:        a2s.Text(c.Name),
		Map:         a2s.Text(c.Map),
		Folder:      a2s.Text(c.Folder),
		Game:        a2s.Text(c.Game),
		Players:     countByte(len(c.Players)),
		MaxPlayers:  countByte(c.MaxPlayers),
		Bots:        countByte(c.Bots),
		ServerType:  a2s.ServerType('d'),
		Environment: a2s.Environment('l'),
		Version:     a2s.Text(c.Version),
		EDF:         a2s.EDFPort | a2s.EDFKeywords | a2s.EDFGameID,
		Port:        port,
		Keywords:    a2s.Text(c.Keywords),
		GameID:      uint64(c.AppID),
	}
	if c.AppID <= 0xFFFF {
		info.ShortAppID = uint16(c.AppID)
	}
	if len(c.Players) > 255 || c.MaxPlayers > 255 {
		// As Rust does: the bytes wrap, the real counts go in the keywords.
		info.Keywords = a2s.Text(fmt.Sprintf("%s,cp%d,mp%d", c.Keywords, len(c.Players), c.MaxPlayers))
	}
	if c.Password {
		info.Visibility = 1
	}
	if c.VAC {
		info.VAC = 1
	}
	players := &a2s.Players{Count: countByte(len(c.Players))}
	for i, p := range c.Players {
		players.List = append(players.List, a2s.Player{
			Index:    uint8(i),
			Name:     a2s.Text(p.Name),
			Score:    p.Score,
			Duration: float32(p.Duration.Seconds()),
		})
	}
	rules := &a2s.Rules{Count: uint16(min(len(c.Rules), 0xFFFF))}
	for _, r := range c.Rules {
		rules.List = append(rules.List, a2s.Rule{Name: a2s.Text(r.Name), Value: a2s.Text(r.Value)})
	}
	return info, players, rules
}

// countByte is n as an A2S count byte. Above 255 it wraps, as real
// servers' bytes do; A2S then puts the real counts in the keywords.
func countByte(n int) uint8 {
	return uint8(max(n, 0))
}
