package protocol

import (
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/satisfactory"
)

// Satisfactory is Satisfactory's Lightweight Query over UDP (package
// satisfactory): the server's state, build and name, on the game port.
var Satisfactory = &Protocol{
	Name:            "satisfactory",
	Title:           "Satisfactory's Lightweight Query API",
	DefaultPort:     satisfactory.DefaultPort,
	Transport:       UDP,
	Sections:        []result.Section{result.SectionInfo},
	DefaultSections: []result.Section{result.SectionInfo},
	Describe:        satisfactory.Describe,
	PortHint:        "Satisfactory answers its Lightweight Query on the game port (7777 by default), over UDP",
	prepare: udpPrepare[satisfactory.Conversation](func() result.Detail { return new(result.Satisfactory) },
		func(w Waits) satisfactory.Options {
			return satisfactory.Options{Timeout: w.Timeout, MaxTimeout: w.MaxTimeout, Retries: w.Retries, Deadline: w.Deadline}
		},
		(*result.Result).SetSatisfactory),
}
