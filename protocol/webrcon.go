package protocol

import (
	"context"
	"net/netip"
	"time"

	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/webrcon"
)

// WebRcon is Rust's WebRCON (package webrcon) as a query: "serverinfo"
// for the info section and "playerlist" for players, over one WebSocket
// connection logged in with the password option. It gives what A2S gives
// of a Rust server and more (queued and joining players, the frame rate,
// the players' Steam IDs and health), to an admin who holds the password.
var WebRcon = &Protocol{
	Name:            "webrcon",
	Title:           "Rust's WebRCON (serverinfo and playerlist, with the RCON password)",
	DefaultPort:     webrcon.DefaultPort,
	Transport:       TCP,
	Sections:        []result.Section{result.SectionInfo, result.SectionPlayers},
	DefaultSections: []result.Section{result.SectionInfo, result.SectionPlayers},
	Options:         []Option{{Name: "password", Usage: "webrcon: the server's rcon.password"}},
	PortHint:        "Rust serves WebRCON on its rcon.port (28016 by default), over TCP, when started with +rcon.web 1",
	prepare: func(p *Protocol, sections []result.Section, s Settings) (Query, error) {
		return &webrconQuery{asking: asking{p: p, sections: p.inOrder(sections), detail: func() result.Detail { return new(result.WebRcon) }},
			password: s.Options["password"]}, nil
	},
}

// webrconQuery polls Rust servers over WebRCON, a connection each.
type webrconQuery struct {
	asking
	password string
}

// Do logs in and runs the commands of the sections asked, within w's
// Deadline (the login and each command within its Timeout), and records
// them in r. A failed login fails every section with its error.
func (q *webrconQuery) Do(ctx context.Context, addr netip.AddrPort, w Waits, r *result.Result) {
	ctx, cancel := w.bound(ctx)
	defer cancel()
	a := new(result.WebRconAnswer)
	c, err := webrcon.Dial(ctx, addr.String(), q.password, &webrcon.Options{Timeout: w.Timeout, KeepAlive: -1, NoReconnect: true})
	if err != nil {
		a.InfoErr, a.PlayersErr = err, err
		r.SetWebRcon(a, q.sections)
		return
	}
	defer c.Close()
	start := time.Now()
	for _, s := range q.sections {
		switch s {
		case result.SectionInfo:
			a.Info, a.InfoErr = c.ServerInfo(ctx)
		case result.SectionPlayers:
			a.Players, a.PlayersErr = c.Players(ctx)
		}
		if a.RTT == 0 {
			a.RTT = time.Since(start)
		}
	}
	r.SetWebRcon(a, q.sections)
}
