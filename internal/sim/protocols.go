package sim

import (
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// OGP builds the OGP Default Query answer for c, served on port. It holds
// every section and every field this package knows, those the content
// does not model empty or zero (no teams, no add-ons, no reserved
// slots...), so that a client that asks for them can tell "none" from
// "not supported"; the ogp.Server keeps only what a query asks for.
func (c *Content) OGP(port uint16) *ogp.Answer {
	a := &ogp.Answer{
		Request: ogp.RequestAll,
		Info: ogp.ServerInfo{
			Fields:        ogp.InfoAll,
			ModFields:     ogp.ModAll,
			MapFields:     ogp.MapAll,
			GameName:      ogp.Text(c.Game),
			Flags:         ogp.ServerFlags{Dedicated: true, Password: c.Password, OS: ogp.OSLinux},
			ConnectPort:   port,
			HostName:      ogp.Text(c.Name),
			Map:           ogp.MapInfo{Name: ogp.Text(c.Map)},
			NextMap:       ogp.MapInfo{Name: ogp.Text(c.NextMap)},
			GameType:      ogp.Text(c.GameType),
			GameMode:      ogp.Text(c.GameMode),
			PlayerCount:   uint32(len(c.Players)),
			SlotMax:       uint32(max(c.MaxPlayers, 0)),
			BotCount:      uint32(max(c.Bots, 0)),
			ReservedSlots: c.ReservedSlots,
		},
		Teams:   ogp.TeamList{Count: len(c.Teams), Fields: ogp.TeamAll},
		Players: ogp.PlayerList{Count: len(c.Players), Fields: ogp.PlayerAll},
		Rules:   []ogp.Rule{},
		AddOns:  ogp.AddOnList{Count: len(c.AddOns), Fields: ogp.AddOnAll},
		Limits:  []ogp.Limit{},
	}
	for _, t := range c.Teams {
		a.Teams.Teams = append(a.Teams.Teams, ogp.Team{Name: ogp.Text(t.Name), Score: t.Score, PlayerCount: t.Players})
	}
	for i, p := range c.Players {
		a.Players.Players = append(a.Players.Players, ogp.Player{
			Slot:  uint32(i),
			Name:  ogp.Text(p.Name),
			Team:  -1, // not assigned: the content puts no player in a team
			Score: p.Score,
			Time:  uint16(min(p.Duration.Seconds(), 65535)),
		})
	}
	for _, r := range c.Rules {
		a.Rules = append(a.Rules, ogp.Rule{Key: ogp.Text(r.Name), Value: ogp.Text(r.Value)})
	}
	for _, x := range c.AddOns {
		var flags ogp.AddOnState
		if x.Active {
			flags = ogp.AddOnActive
		}
		a.AddOns.AddOns = append(a.AddOns.AddOns, ogp.AddOn{Flags: flags, ShortName: ogp.Text(x.ShortName),
			LongName: ogp.Text(x.LongName), Version: ogp.Text(x.Version)})
	}
	for _, l := range c.Limits {
		lim := ogp.Limit{Type: limitTypes[l.Type], Limit: l.Limit}
		if l.Left != nil {
			lim.HasLeft, lim.Left = true, *l.Left
		}
		a.Limits = append(a.Limits, lim)
	}
	return a
}

// RCON returns the RCON command handler for c: status, players, echo, say
// and big N (see rcontest.SimHandler).
func (c *Content) RCON() *rcontest.SimHandler {
	h := &rcontest.SimHandler{Hostname: c.Name, Map: c.Map, MaxPlayers: c.MaxPlayers}
	for _, p := range c.Players {
		h.Players = append(h.Players, rcontest.SimPlayer{Name: p.Name, Score: p.Score, Duration: p.Duration})
	}
	return h
}
