package monitor

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/gsq-project/gsq/result"
)

// FuzzParse feeds the config reader arbitrary files: it must never panic,
// and what it accepts must be a resolved config.
func FuzzParse(f *testing.F) {
	if doc, err := os.ReadFile("../docs/monitor-config.md"); err == nil {
		f.Add(doc) // not YAML: a problem, not a panic
	}
	for _, s := range []string{
		"",
		"interval: 30s\nservers:\n  - {name: a, address: 1.2.3.4}\n",
		"x-a: &a {interval: 5s}\nservers:\n  - {<<: *a, name: b, address: '[::1]:27015', alerts: [down, {on: players, threshold: 3}]}\n",
		"webhooks: ['https://discord.com/api/webhooks/1/x']\nalerts: [{on: join, player: '^A'}]\n",
		"retention: {raw: 1d, day: forever}\ntoken: 0123456789abcdef\n",
		"a: &a [*a]\n",
		"servers: [*x]\n",
		"\t- a\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "f.yaml")
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || len(ce.Problems) == 0 {
				t.Fatalf("error %T without problems: %v", err, err)
			}
			return
		}
		names := map[string]bool{}
		for _, s := range c.Servers {
			if s.Name == "" || s.Address == "" || s.Port == 0 || s.Interval < MinInterval || s.Failures < 1 || s.Query == "" || s.Alerts == nil {
				t.Fatalf("unresolved server %+v", s)
			}
			if names[s.Name] {
				t.Fatalf("duplicate name %q", s.Name)
			}
			names[s.Name] = true
			for _, r := range s.Alerts {
				if r.needsPlayers() && (r.Player == nil || !s.PlayerData) {
					t.Fatalf("join or leave rule without players: %+v", r)
				}
			}
		}
	})
}

// FuzzAlertBody feeds the webhook formats server-supplied text: every
// body must be JSON within the receiver's limits, with the text intact in
// gsq's own format.
func FuzzAlertBody(f *testing.F) {
	f.Add(hostileName, "de_dust2", "Alice", "timeout")
	f.Add("", "", "", "")
	f.Add("\xff\xfe", "<!here>", "@here", "\u202e")
	f.Fuzz(func(t *testing.T, name, mapName, player, msg string) {
		players := 3
		a := &Alert{
			Version: 1, Kind: AlertJoin, Server: "s", Target: "127.0.0.1:27015", Protocol: "a2s", Time: t0,
			Summary: &result.Summary{Name: &name, Map: &mapName, Players: &players},
			Player:  player, Map: mapName, PreviousMap: name,
			Error: &result.Error{Kind: result.KindProtocol, Message: msg},
		}
		for _, kind := range []AlertKind{AlertJoin, AlertDown, AlertMap} {
			a.Kind = kind
			checkDiscord(t, mustBody(t, FormatDiscord, a))
			checkSlack(t, mustBody(t, FormatSlack, a))
			var back Alert
			if err := json.Unmarshal(mustBody(t, FormatJSON, a), &back); err != nil {
				t.Fatal(err)
			}
			if back.Player != toValidUTF8(player) || *back.Summary.Name != toValidUTF8(name) {
				t.Fatalf("json changed the text: %q, %q", back.Player, *back.Summary.Name)
			}
		}
	})
}

func mustBody(t *testing.T, f Format, a *Alert) []byte {
	t.Helper()
	b, err := body(f, a)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// toValidUTF8 is what encoding/json makes of a string: invalid bytes
// become U+FFFD.
func toValidUTF8(s string) string {
	b, _ := json.Marshal(s)
	var out string
	json.Unmarshal(b, &out)
	return out
}

// FuzzParseDuration: no input panics, and what FormatDuration writes
// reads back.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"30s", "1h30m", "1.5h", "14d", "0", "30", "-1s", "9999999999y", "1e3s", ".s", "1..2m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v", s, d)
		}
		if _, err := ParseDuration(FormatDuration(d)); err != nil {
			t.Fatalf("FormatDuration(%v) = %q does not read back: %v", d, FormatDuration(d), err)
		}
	})
}
