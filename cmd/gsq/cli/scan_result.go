package cli

import (
	"errors"

	"github.com/gsq-project/gsq/a2s"
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/scan"
)

// scanQuery is what `gsq scan` asks each server.
type scanQuery struct {
	protocol result.Protocol
	engine   scan.Protocol
	dialect  ogp.Dialect      // OGP
	asked    ogp.RequestFlags // OGP: the sections asked for
}

// result turns the scan engine's result into the result `gsq scan`
// prints, the one place that does. target is the server as the list
// wrote it.
func (q *scanQuery) result(sr *scan.Result, target string) *result.Result {
	r := result.New(target, sr.Addr, q.protocol)
	switch {
	case sr.A2S != nil:
		a := sr.A2S
		if a.Info != nil || a.InfoErr != nil {
			r.SetA2SInfo(&a2s.InfoResult{Info: a.Info, GoldSource: a.GoldSource, Ping: a.Ping}, a.InfoErr)
		}
		if a.Players != nil || a.PlayersErr != nil {
			r.SetA2SPlayers(a.Players, a.PlayersErr)
		}
		if a.Rules != nil || a.RulesErr != nil {
			r.SetA2SRules(a.Rules, a.RulesErr)
		}
	case sr.OGP != nil:
		r.SetOGP(q.dialect, q.asked, &ogp.Response{Answer: sr.OGP.Answer, RTT: sr.OGP.Ping}, sr.OGP.Err)
	case errors.Is(sr.Err, scan.ErrBadTarget):
		// Never from gsq scan, which hands the engine valid lines only.
		r.Err = &result.Error{Kind: result.KindInvalid, Message: sr.Err.Error(), Err: sr.Err}
	case sr.Err != nil:
		r.Fail(sr.Err)
	}
	return r
}
