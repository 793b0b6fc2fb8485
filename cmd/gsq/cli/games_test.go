package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gsq-project/gsq/catalog"
)

func TestGamesList(t *testing.T) {
	t.Parallel()
	all := catalog.All()
	code, stdout, stderr := runGSQ(t, nil, nil, nil, "games")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	// A header, a line a game, a blank line and the count.
	if len(lines) != len(all)+3 || !strings.HasPrefix(lines[0], "GAME") {
		t.Fatalf("%d lines for %d games:\n%s", len(lines), len(all), stdout)
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "valheim ") && (!strings.Contains(l, "a2s:+1") || !strings.Contains(l, "2456") || !strings.Contains(l, "892970")) {
			t.Errorf("valheim's line: %q", l)
		}
		if strings.HasPrefix(l, "asa ") && !strings.Contains(l, "cannot be queried") {
			t.Errorf("asa's line: %q", l)
		}
	}

	code, stdout, _ = runGSQ(t, nil, nil, nil, "games", "--json")
	objs := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != ExitOK || len(objs) != len(all) {
		t.Fatalf("--json: exit %d, %d lines for %d games", code, len(objs), len(all))
	}
	for i, l := range objs {
		var g struct {
			ID        string
			Protocols []string
			Query     []struct {
				Protocol    string
				DefaultPort int `json:"default_port"`
			}
		}
		if err := json.Unmarshal([]byte(l), &g); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		if g.ID != all[i].ID || len(g.Protocols) != len(all[i].Query) {
			t.Errorf("line %d: %s, want %s", i, l, all[i].ID)
		}
	}
}

func TestGamesDescribe(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		want []string
	}{
		{"VALHEIM", []string{"Valheim (valheim)", "a2s on the game port + 1 (2457 by default)", `\appid\892970`, "crossplay-zero-players", "try: gsq query --game valheim HOST"}},
		{"rust", []string{"counts-in-keywords", "fake server profile rust", "webrcon"}},
		{"onset", []string{"then", "ogp on the game port - 1", "tries them in this order and says which answered"}},
		{"asa", []string{"query         none: ", "Epic Online Services", "rcon (source, profile ark) on port 27020"}},
	} {
		code, stdout, stderr := runGSQ(t, nil, nil, nil, "games", c.name)
		if code != ExitOK {
			t.Errorf("%s: exit %d, %s", c.name, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout, w) {
				t.Errorf("gsq games %s lacks %q:\n%s", c.name, w, stdout)
			}
		}
	}
	code, stdout, _ := runGSQ(t, nil, nil, nil, "games", "sdtd", "--json")
	var g map[string]any
	if err := json.Unmarshal([]byte(stdout), &g); code != ExitOK || err != nil || g["id"] != "sdtd" || len(g["quirks"].([]any)) == 0 || g["source"] == "" {
		t.Errorf("games sdtd --json: exit %d, %v: %s", code, err, stdout)
	}
	code, _, stderr := runGSQ(t, nil, nil, nil, "games", "conan")
	if code != ExitUsage || !strings.Contains(stderr, "did you mean conanexiles?") {
		t.Errorf("unknown game: exit %d, %s", code, stderr)
	}
}
