package protocol

import (
	"context"
	"net/netip"
	"slices"

	"github.com/gsq-project/gsq/fivem"
	"github.com/gsq-project/gsq/result"
)

// FiveM is FiveM's (and RedM's) HTTP endpoints on the game port (package
// fivem): /info.json, /dynamic.json and /players.json.
var FiveM = &Protocol{
	Name:            "fivem",
	Title:           "FiveM and RedM (FXServer's info.json, dynamic.json and players.json over HTTP)",
	DefaultPort:     fivem.DefaultPort,
	Transport:       HTTP,
	Sections:        []result.Section{result.SectionInfo, result.SectionDynamic, result.SectionPlayers},
	DefaultSections: []result.Section{result.SectionInfo, result.SectionDynamic, result.SectionPlayers},
	PortHint:        "FXServer serves its HTTP endpoints on the game port (30120 by default), over TCP; players.json is often disabled",
	prepare: func(p *Protocol, sections []result.Section, _ Settings) (Query, error) {
		return &fivemQuery{asking: asking{p: p, sections: p.inOrder(sections), detail: func() result.Detail { return new(result.FiveM) }},
			client: new(fivem.Client)}, nil
	},
}

// fivemQuery reads FiveM servers' endpoints, one request each, at once.
type fivemQuery struct {
	asking
	client *fivem.Client // shared by every Do: safe for concurrent use
}

// Do reads the endpoints asked, at once, within w's Deadline (and each
// within the package's timeout), and records them in r.
func (q *fivemQuery) Do(ctx context.Context, addr netip.AddrPort, w Waits, r *result.Result) {
	ctx, cancel := w.bound(ctx)
	defer cancel()
	res := q.client.Query(ctx, addr, slices.Contains(q.sections, result.SectionInfo),
		slices.Contains(q.sections, result.SectionPlayers), slices.Contains(q.sections, result.SectionDynamic))
	r.SetFiveM(res, q.sections)
}
