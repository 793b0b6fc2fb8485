package scan

import (
	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/result"
)

// a2sQuery asks A2S servers sections, with the protocol's options opts
// (name, value, name, value...).
func a2sQuery(sections []result.Section, opts ...string) protocol.Query {
	s := protocol.Settings{Sections: sections, Options: map[string]string{}}
	for i := 0; i+1 < len(opts); i += 2 {
		s.Options[opts[i]] = opts[i+1]
	}
	return protocol.A2S.MustPrepare(s)
}

// ogpQuery asks OGP servers of dialect d everything.
func ogpQuery(d ogp.Dialect) protocol.Query {
	return protocol.OGP.MustPrepare(protocol.Settings{Options: map[string]string{"dialect": d.String()}})
}

var (
	infoOnly = []result.Section{result.SectionInfo}
	a2sInfo  = a2sQuery(infoOnly)
)

// a2sOf is r's A2S detail.
func a2sOf(r *Outcome) *result.A2S {
	a, _ := r.Result.Detail.(*result.A2S)
	return a
}

// ogpOf is r's OGP detail.
func ogpOf(r *Outcome) *result.OGP {
	o, _ := r.Result.Detail.(*result.OGP)
	return o
}
