package protocol

import (
	"slices"

	"github.com/gsq-project/gsq/ogp"
	"github.com/gsq-project/gsq/result"
)

// sectionColors is the name OGP's --fields takes for coloured names: not
// a section of the answer, but what the query asks of its strings.
const sectionColors result.Section = "colors"

// OGP is the Open Game Protocol v0.91 over UDP (package ogp), in either
// dialect; it has no conventional port.
var OGP = &Protocol{
	Name:      "ogp",
	Title:     "the Open Game Protocol v0.91 (OGP)",
	Transport: UDP,
	Sections: []result.Section{result.SectionInfo, result.SectionTeams, result.SectionPlayers, result.SectionRules,
		result.SectionAddOns, result.SectionLimits, sectionColors},
	DefaultSections: []result.Section{result.SectionInfo, result.SectionTeams, result.SectionPlayers, result.SectionRules,
		result.SectionAddOns, result.SectionLimits, sectionColors},
	Options: []Option{
		{Name: "dialect", Values: []string{"v0.91", "v1"},
			Usage: "the wire layout: v0.91, the specification, or v1, the later SDK's that deployed servers speak"},
	},
	Describe: ogp.Describe,
	PortHint: "OGP servers answer on their query port (Onset: game port - 1; Warband WSE: 22222 by default), " +
		"and deployed servers speak --dialect v1",
	ErrIncomplete: ogp.ErrIncomplete,
	prepare:       prepareOGP,
}

// ogpRequests maps the sections of a result to the request flags.
var ogpRequests = map[result.Section]ogp.RequestFlags{
	result.SectionInfo: ogp.RequestServerInfo, result.SectionTeams: ogp.RequestTeams,
	result.SectionPlayers: ogp.RequestPlayers, result.SectionRules: ogp.RequestRules,
	result.SectionAddOns: ogp.RequestAddOns, result.SectionLimits: ogp.RequestLimits,
	sectionColors: ogp.RequestColoredNames,
}

// prepareOGP makes a query that asks a Default Query, every field of the
// sections asked: OGP answers every section at once.
func prepareOGP(p *Protocol, sections []result.Section, s Settings) (Query, error) {
	v, err := p.option(s, "dialect")
	if err != nil {
		return nil, err
	}
	d, _ := ogp.ParseDialect(v) // one of the option's values, or "": v0.91
	query := ogp.QueryAll(d)    // read by every conversation, changed by none
	query.Request = 0
	var asked []result.Section
	for _, sec := range p.Sections {
		if slices.Contains(sections, sec) {
			query.Request |= ogpRequests[sec]
			if sec != sectionColors {
				asked = append(asked, sec)
			}
		}
	}
	return newUDPQuery[ogp.Conversation](p, asked,
		func() result.Detail { return &result.OGP{Dialect: d} },
		func(w Waits) ogp.Options {
			return ogp.Options{Dialect: d, Query: &query, Timeout: w.Timeout, MaxTimeout: w.MaxTimeout, Retries: w.Retries, Deadline: w.Deadline}
		},
		func(r *result.Result, res *ogp.Result) { r.SetOGP(d, query.Request, res, res.Err) }), nil
}
