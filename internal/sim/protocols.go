package sim

import (
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/rcon/rcontest"
)

// OGP builds the OGP Default Query answer for c, served on port. It holds
// every section the content can fill; the ogp.Server keeps only the fields
// a query asks for.
func (c *Content) OGP(port uint16) *ogp.Answer {
	a := &ogp.Answer{
		Request: ogp.RequestServerInfo | ogp.RequestPlayers | ogp.RequestRules,
		Info: ogp.ServerInfo{
			Fields: ogp.InfoGameName | ogp.InfoServerFlags | ogp.InfoConnectPort | ogp.InfoHostName | ogp.InfoMap |
				ogp.InfoPlayerCount | ogp.InfoSlotMax | ogp.InfoBotCount,
			GameName:    ogp.Text(c.Game),
			Flags:       ogp.ServerFlags{Dedicated: true, Password: c.Password, OS: ogp.OSLinux},
			ConnectPort: port,
			HostName:    ogp.Text(c.Name),
			Map:         ogp.MapInfo{Name: ogp.Text(c.Map)},
			PlayerCount: uint32(len(c.Players)),
			SlotMax:     uint32(max(c.MaxPlayers, 0)),
			BotCount:    uint32(max(c.Bots, 0)),
		},
		Players: ogp.PlayerList{
			Count:  len(c.Players),
			Fields: ogp.PlayerSlot | ogp.PlayerName | ogp.PlayerScore | ogp.PlayerTime,
		},
	}
	for i, p := range c.Players {
		a.Players.Players = append(a.Players.Players, ogp.Player{
			Slot:  uint32(i),
			Name:  ogp.Text(p.Name),
			Score: p.Score,
			Time:  uint16(min(p.Duration.Seconds(), 65535)),
		})
	}
	for _, r := range c.Rules {
		a.Rules = append(a.Rules, ogp.Rule{Key: ogp.Text(r.Name), Value: ogp.Text(r.Value)})
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
