//go:build interop

package catalog_test

import (
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"github.com/gsq-project/gsq/catalog"
	"github.com/gsq-project/gsq/internal/peertest"
)

// gamesScript prints gamedig's games list (argv[1] is its folder) as JSON.
const gamesScript = `
const { games } = await import(process.argv[1] + '/lib/games.js');
console.log(JSON.stringify(games));
`

type gamedigGame struct {
	Name    string `json:"name"`
	Options struct {
		Port        *int            `json:"port"`
		PortQuery   *int            `json:"port_query"`
		QueryOffset json.RawMessage `json:"port_query_offset"`
		Protocol    string          `json:"protocol"`
	} `json:"options"`
	Extra struct {
		OldID string `json:"old_id"`
	} `json:"extra"`
}

// The catalogue's A2S games are gamedig 5.3.3's, the list .ci/install-peers
// installs: every "valve", "dayz", "goldsrc" and "sdtd" entry is in it,
// with gamedig's id, name, old id, game port and query ports. DayZ's
// query port is the one exception, written down: gamedig's list says the
// game port + 24714, its dayz.js queries 27016 whatever the game port,
// and so does the catalogue.
func TestInteropGamedigGames(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	out := peertest.Run(t, node, "--input-type=module", "-e", gamesScript, peertest.Module(t, "gamedig"))
	var games map[string]gamedigGame
	if err := json.Unmarshal(out, &games); err != nil {
		t.Fatal(err)
	}
	n := 0
	for id, gd := range games {
		if !slices.Contains([]string{"valve", "dayz", "goldsrc", "sdtd"}, gd.Options.Protocol) {
			continue
		}
		n++
		g, err := catalog.Lookup(id)
		if err != nil || g.ID != id {
			t.Errorf("gamedig's %s (%s) is not in the catalogue: %v", id, gd.Name, err)
			continue
		}
		if g.Name != gd.Name || gd.Extra.OldID != "" && !slices.Contains(g.Aliases, gd.Extra.OldID) {
			t.Errorf("%s: name %q aliases %v; gamedig %q, old id %q", id, g.Name, g.Aliases, gd.Name, gd.Extra.OldID)
		}
		if gd.Options.Port != nil && int(g.GamePort) != *gd.Options.Port || gd.Options.Port == nil && g.GamePort != 0 {
			t.Errorf("%s: game port %d, gamedig %v", id, g.GamePort, gd.Options.Port)
		}
		var want []catalog.Endpoint
		var offsets []int
		switch {
		case gd.Options.PortQuery != nil:
			want = append(want, catalog.Endpoint{Protocol: "a2s", Port: uint16(*gd.Options.PortQuery)})
		case gd.Options.QueryOffset == nil:
			want = append(want, catalog.Endpoint{Protocol: "a2s"})
		case json.Unmarshal(gd.Options.QueryOffset, &offsets) == nil:
			for _, o := range offsets {
				want = append(want, catalog.Endpoint{Protocol: "a2s", Offset: o})
			}
		default:
			var o int
			if err := json.Unmarshal(gd.Options.QueryOffset, &o); err != nil {
				t.Fatalf("%s: port_query_offset %s", id, gd.Options.QueryOffset)
			}
			want = append(want, catalog.Endpoint{Protocol: "a2s", Offset: o})
		}
		if id == "dayz" {
			want = []catalog.Endpoint{{Protocol: "a2s", Port: 27016}} // the exception above
		}
		var got []catalog.Endpoint
		for _, e := range g.Query {
			if e.Protocol == "a2s" {
				got = append(got, catalog.Endpoint{Protocol: e.Protocol, Port: e.Port, Offset: e.Offset})
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: A2S endpoints %+v, gamedig %+v", id, got, want)
		}
	}
	if n != 137 {
		t.Errorf("gamedig lists %d games a query reaches; the catalogue was built from 137", n)
	}
}
