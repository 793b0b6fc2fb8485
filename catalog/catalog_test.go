package catalog_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/a2s/a2stest"
	"github.com/gsq-project/gsq/catalog"
	"github.com/gsq-project/gsq/fivem/fivemtest"
	"github.com/gsq-project/gsq/minecraft/mctest"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/rcon"
	"github.com/gsq-project/gsq/satisfactory/satisfactorytest"
)

// fakes are the fake servers' profile lookups, by protocol: where a
// quirk's Fake must be known.
var fakes = map[string]func(string) error{
	"a2s":          func(n string) error { _, err := a2stest.LookupProfile(n); return err },
	"fivem":        func(n string) error { _, err := fivemtest.LookupProfile(n); return err },
	"minecraft":    func(n string) error { _, err := mctest.LookupProfile(n); return err },
	"mcquery":      func(n string) error { _, err := mctest.LookupProfile(n); return err },
	"bedrock":      func(n string) error { _, err := mctest.LookupProfile(n); return err },
	"satisfactory": func(n string) error { _, err := satisfactorytest.LookupProfile(n); return err },
}

// The data: every entry names a protocol gsq speaks (registered), valid ports, known consoles, and quirks
// with a fake that plays them or said not to be modelled; every fact has
// a source.
func TestData(t *testing.T) {
	t.Parallel()
	names := map[string]string{}
	a2sGames := 0
	for _, g := range catalog.All() {
		where := g.ID
		if g.ID == "" || g.ID != strings.ToLower(g.ID) || strings.ContainsAny(g.ID, " \t") || g.Name == "" || g.Source == "" {
			t.Errorf("%q: id %q, name %q, source %q", where, g.ID, g.Name, g.Source)
		}
		for _, n := range append([]string{g.ID}, g.Aliases...) {
			if other, dup := names[n]; dup {
				t.Errorf("%s: the name %q is %s's too", where, n, other)
			}
			names[n] = g.ID
		}
		if (len(g.Query) == 0) == (g.Unqueryable == "") {
			t.Errorf("%s: %d query endpoints, and Unqueryable %q: a game is queried, or says why not", where, len(g.Query), g.Unqueryable)
		}
		isA2S := false
		for _, e := range g.Query {
			if _, err := protocol.Lookup(e.Protocol); err != nil {
				t.Errorf("%s: protocol %q is not registered: %v", where, e.Protocol, err)
			}
			isA2S = isA2S || e.Protocol == "a2s"
			switch {
			case e.Port != 0 && e.Offset != 0:
				t.Errorf("%s: %s has a port and an offset", where, e.Protocol)
			case e.Port == 0 && g.GamePort != 0:
				if p, ok := e.QueryPort(&g, 0); !ok || p == 0 {
					t.Errorf("%s: %s at game port %d %+d is no port", where, e.Protocol, g.GamePort, e.Offset)
				}
			}
		}
		if isA2S {
			a2sGames++
		}
		for _, c := range g.Consoles {
			switch {
			case !slices.Contains(catalog.Consoles, c.Protocol):
				t.Errorf("%s: console %q is not one of %v", where, c.Protocol, catalog.Consoles)
			case c.Source == "":
				t.Errorf("%s: console %s has no source", where, c.Protocol)
			case c.Protocol == "rcon" && !slices.Contains([]string{"source", "cs2", "minecraft"}, c.Dialect):
				t.Errorf("%s: RCON dialect %q", where, c.Dialect)
			case c.Protocol != "rcon" && (c.Dialect != "" || c.Profile != ""):
				t.Errorf("%s: %s has an RCON dialect or profile", where, c.Protocol)
			}
			if c.Profile != "" {
				if _, err := rcon.LookupProfile(c.Profile); err != nil {
					t.Errorf("%s: %v", where, err)
				}
			}
		}
		for _, q := range g.Quirks {
			if q.ID == "" || q.Text == "" || q.Source == "" || q.Protocol == "" {
				t.Errorf("%s: quirk %+v lacks an id, a text, a source or a protocol", where, q)
			}
			switch lookup := fakes[q.Protocol]; {
			case q.Fake == "":
				t.Errorf("%s: quirk %s names no fake profile: name one, or catalog.NotModelled", where, q.ID)
			case q.Fake == catalog.NotModelled:
			case lookup == nil:
				t.Errorf("%s: quirk %s: no fake server for %s", where, q.ID, q.Protocol)
			default:
				if err := lookup(q.Fake); err != nil {
					t.Errorf("%s: quirk %s: %v", where, q.ID, err)
				}
			}
		}
		if len(g.AppIDs) > 0 && g.AppIDSource == "" || len(g.AppIDs) == 0 && g.AppIDSource != "" {
			t.Errorf("%s: app ids %v, source %q", where, g.AppIDs, g.AppIDSource)
		}
		for _, id := range g.AppIDs {
			if id == 0 || !slices.ContainsFunc(catalog.ByAppID(id), func(h catalog.Game) bool { return h.ID == g.ID }) {
				t.Errorf("%s: app id %d", where, id)
			}
		}
	}
	// Every A2S game in gamedig 5.3.3's list that a query reaches: 134
	// "valve", and dayz, goldsrc (Counter-Strike 1.5) and sdtd.
	if a2sGames < 137 {
		t.Errorf("%d A2S games, want gamedig's 137", a2sGames)
	}
}

// The facts the issue names are in the data.
func TestNamedFacts(t *testing.T) {
	t.Parallel()
	game := func(id string) *catalog.Game {
		g, err := catalog.Lookup(id)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	quirk := func(g *catalog.Game, id string) *catalog.Quirk {
		for i := range g.Quirks {
			if g.Quirks[i].ID == id {
				return &g.Quirks[i]
			}
		}
		t.Errorf("%s has no quirk %s", g.ID, id)
		return &catalog.Quirk{}
	}
	v := game("valheim")
	if p, ok := v.Query[0].QueryPort(v, 0); !ok || p != 2457 || v.Query[0].Protocol != "a2s" {
		t.Errorf("Valheim's query port: %d, %v", p, ok)
	}
	if p, _ := v.Query[0].QueryPort(v, 3000); p != 3001 {
		t.Errorf("Valheim on game port 3000 answers on %d", p)
	}
	if q := quirk(game("7d2d"), "hidden-player-names"); !strings.Contains(q.Text, "empty names") {
		t.Errorf("7 Days to Die: %+v", q)
	}
	if q := quirk(game("rust"), "counts-in-keywords"); q.Fake != "rust" {
		t.Errorf("Rust: %+v", q)
	}
	d := game("dayz")
	if q := quirk(d, "binary-rules"); q.Fake != "dayz" {
		t.Errorf("DayZ: %+v", q)
	}
	if p, _ := d.Query[0].QueryPort(d, 2402); p != 27016 {
		t.Errorf("DayZ's query port %d", p)
	}
	for _, id := range []string{"asa", "squad"} {
		if g := game(id); len(g.Query) != 0 || !strings.Contains(g.Unqueryable, "Epic Online Services") || !strings.Contains(g.Unqueryable, "does not ship") {
			t.Errorf("%s: %+v", id, g)
		}
	}
	vr := game("vrising")
	if len(vr.Query) != 2 || vr.Query[0].Offset != 1 || vr.Query[1].Offset != 15 {
		t.Errorf("V Rising's query ports: %+v", vr.Query)
	}
	if gs := catalog.ByAppID(252490); len(gs) != 1 || gs[0].ID != "rust" {
		t.Errorf("ByAppID(252490) = %v", gs)
	}
}

func TestLookup(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]string{"Valheim": "valheim", "7d2d": "sdtd", " CS2 ": "counterstrike2", "fivem": "gta5f"} {
		if g, err := catalog.Lookup(name); err != nil || g.ID != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", name, g, err, want)
		}
	}
	if _, err := catalog.Lookup("counter"); err == nil || !strings.Contains(err.Error(), "did you mean") || !strings.Contains(err.Error(), "counterstrike2") {
		t.Errorf("Lookup(counter): %v", err)
	}
	// A typo: the nearest IDs within two edits, then names holding it.
	if _, err := catalog.Lookup("valhem"); !errors.Is(err, catalog.ErrUnknownGame) || !strings.Contains(err.Error(), "did you mean valheim?") {
		t.Errorf("Lookup(valhem): %v", err)
	}
	if _, err := catalog.Lookup("zzz"); !errors.Is(err, catalog.ErrUnknownGame) || !strings.Contains(err.Error(), "gsq games") {
		t.Errorf("Lookup(zzz): %v", err)
	}
	// Lookup returns a copy: the catalogue does not change.
	g, _ := catalog.Lookup("rust")
	g.Name = "changed"
	if g2, _ := catalog.Lookup("rust"); g2.Name != "Rust" {
		t.Error("Lookup returned the catalogue's own entry")
	}
	g.Quirks[0].Text = "changed"
	if g2, _ := catalog.Lookup("rust"); g2.Quirks[0].Text == "changed" {
		t.Error("Lookup's game shares its quirks with the catalogue")
	}
}
