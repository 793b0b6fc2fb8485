package monitor

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

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
		"discover:\n  - {name: d, master: 127.0.0.1:27011, game: css, filter: '\\map\\x', region: eu, every: 1s}\nservers:\n  - {name: v, address: 1.2.3.4, game: valheim}\n",
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
		// A group of two holds them both, within each format's limits.
		b := *a
		b.Kind, b.Target = AlertUp, name+":27015"
		checkDiscord(t, mustBody(t, FormatDiscord, a, &b))
		checkSlack(t, mustBody(t, FormatSlack, a, &b))
		var g AlertGroup
		if err := json.Unmarshal(mustBody(t, FormatJSON, a, &b), &g); err != nil || g.Count != 2 || len(g.Alerts) != 2 {
			t.Fatalf("json group: %v, %+v", err, g)
		}
	})
}

// mustBody is the body a provider of format f would send for alerts,
// which must all fit in one message.
func mustBody(t *testing.T, f Format, alerts ...*Alert) []byte {
	t.Helper()
	b, n, err := providerKinds[f].new(Webhook{}, nil).(*jsonWebhook).encode(alerts)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(alerts) {
		t.Fatalf("%s: a message of %d alerts, want %d", f, n, len(alerts))
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

// FuzzParseRate: a webhook's rate either parses within its bounds and
// prints back to itself, or is an error; never a panic.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"5/2s", "1/s", "30/m", "0/s", "1001/s", "5/", "/s", "5/1.5h", "9999999999999999999/s", "5/-1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRate(s)
		if err != nil {
			return
		}
		if r.N < 1 || r.N > maxRateN || r.Per < minRatePer || r.Per > maxRatePer {
			t.Fatalf("ParseRate(%q) = %+v: out of bounds", s, r)
		}
		if back, err := ParseRate(r.String()); err != nil || back != r {
			t.Fatalf("ParseRate(%q) = %v, and its String %q reads back as %v, %v", s, r, r.String(), back, err)
		}
	})
}

// FuzzAlertStateRestore: whatever the journal hands back (a damaged or
// foreign row), restoring it never panics, and what is restored is a
// state the engine can be in: what it snapshots reads back the same.
func FuzzAlertStateRestore(f *testing.F) {
	cfg, err := Parse([]byte("alerts: [down, up, map, {on: players, threshold: 10}]\nservers:\n  - {name: s, address: '127.0.0.1:27015'}\n"), "f.yaml")
	if err != nil {
		f.Fatal(err)
	}
	e := newRuleEngine(cfg)
	f.Add(e.snapshot("s"))
	f.Add([]byte(`{"address":"127.0.0.1:27015","protocol":"a2s","status":{"announced":"down","last_down":"2026-11-25T21:00:00Z"},"rules":[{"rule":"map","announced":"de_dust2"}]}`))
	f.Add([]byte(`{"address":"127.0.0.1:27015","protocol":"a2s","status":{"announced":"sideways"}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, state []byte) {
		e := newRuleEngine(cfg)
		if !e.restore("s", state) {
			return
		}
		snap := e.snapshot("s")
		e2 := newRuleEngine(cfg)
		if !e2.restore("s", snap) || string(e2.snapshot("s")) != string(snap) {
			t.Fatalf("a restored state does not read back: %s", snap)
		}
	})
}

// FuzzWindow feeds the maintenance window reader (the API's JSON and the
// schedule grammar) arbitrary input: it must never panic, and a window
// it accepts answers Active and Next without panicking, and Next gives a
// stretch that contains the time it says is active.
func FuzzWindow(f *testing.F) {
	for _, s := range []string{
		`{"servers":["a"],"every":"every day 04:00-04:15 UTC"}`,
		`{"labels":{"region":"eu"},"every":"sat,sun 23:30-00:30 Europe/Berlin"}`,
		`{"servers":["a"],"from":"2026-12-01T10:00:00Z","to":"2026-12-01T12:00:00Z"}`,
		`{"servers":["a"],"every":"weekday 24:00-00:00"}`,
		`{"servers":[],"every":""}`,
	} {
		f.Add([]byte(s), int64(1764300000))
	}
	f.Fuzz(func(t *testing.T, data []byte, unix int64) {
		var w Window
		if json.Unmarshal(data, &w) != nil || w.Check() != nil {
			return
		}
		at := time.Unix(unix%(1<<34), 0)
		if w.Active(at) {
			from, to, ok := w.Next(at)
			if !ok || at.Before(from) || !at.Before(to) {
				t.Fatalf("%s: active at %v, but the next stretch is %v-%v (%v)", data, at, from, to, ok)
			}
		}
	})
}
