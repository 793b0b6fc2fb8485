package cli

import (
	"github.com/gsq-project/gsq/scan"
)

// appendScanResult appends r as the JSON line `gsq scan` prints: the
// object of `gsq query --json`, from the same builder and encoder.
func appendScanResult(b []byte, r *scan.Result) []byte {
	return appendJSON(b, a2sResultOf(r).JSON())
}

// a2sResultOf is r as the result builder's input.
func a2sResultOf(r *scan.Result) *A2SResult {
	res := &A2SResult{Address: r.Target.String(), Err: r.Err}
	if r.Addr.IsValid() {
		res.Address = r.Addr.String()
	}
	if a := r.A2S; a != nil {
		res.Ping, res.Info, res.GoldSource, res.InfoErr = a.Ping, a.Info, a.GoldSource, a.InfoErr
		res.Players, res.PlayersErr, res.Rules, res.RulesErr = a.Players, a.PlayersErr, a.Rules, a.RulesErr
	}
	return res
}
