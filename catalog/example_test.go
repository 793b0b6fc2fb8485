package catalog_test

import (
	"fmt"

	"github.com/gsq-project/gsq/catalog"
)

// gsq query --game valheim HOST asks A2S on the game port plus one.
func ExampleLookup() {
	g, err := catalog.Lookup("valheim")
	if err != nil {
		fmt.Println(err)
		return
	}
	e := g.Query[0]
	port, _ := e.QueryPort(g, 0)
	fmt.Println(g.Name, e.Protocol, port, g.AppIDs)
	for _, q := range g.Quirks {
		fmt.Println("-", q.ID, "("+q.Fake+")")
	}
	// Output:
	// Valheim a2s 2457 [892970]
	// - public-only (not yet modelled)
	// - crossplay-zero-players (not yet modelled)
	// - empty-player-names (not yet modelled)
	// - appid-in-gameid (dayz)
}

// A game gsq cannot query says why, instead of timing out.
func ExampleGame_unqueryable() {
	g, _ := catalog.Lookup("asa")
	fmt.Println(len(g.Query), g.Consoles[0].Protocol, g.Consoles[0].Port)
	fmt.Println(g.Unqueryable)
	// Output:
	// 0 rcon 27020
	// ARK: Survival Ascended has no A2S; its servers are listed by Epic Online Services, which answers only clients holding credentials extracted from the game (gamedig ships them in asa.js). gsq does not ship them: gsq rcon reaches the server's RCON
}
