package monitor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/store"
)

// knownProtocols is how a config error lists the registry's protocols:
// "a2s, fivem or ogp".
var knownProtocols = func() string {
	names := protocol.Names()
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}()

// exampleConfig returns the commented example of docs/monitor-config.md,
// so that the documentation is tested.
func exampleConfig(t *testing.T) []byte { return docExample(t, "# monitor.yaml") }

// docExample is the YAML block of docs/monitor-config.md that starts with
// first.
func docExample(t *testing.T, first string) []byte {
	t.Helper()
	doc, err := os.ReadFile("../docs/monitor-config.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(" + regexp.QuoteMeta(first) + ".*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatalf("no example starting %q in docs/monitor-config.md", first)
	}
	return m[1]
}

func TestParseExampleFromDocs(t *testing.T) {
	t.Parallel()
	c, err := Parse(exampleConfig(t), "monitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def := Default()
	if c.Interval != def.Interval || c.DownAfter != def.DownAfter || c.Failures != def.Failures ||
		c.Grace != def.Grace || c.Listen != def.Listen || c.Query != def.Query || !c.PlayerData ||
		c.Retention != store.DefaultRetention || c.AlertCooldown != def.AlertCooldown || c.GroupWindow != def.GroupWindow {
		t.Errorf("the example says it shows the defaults, but differs: %+v", c)
	}
	if len(c.Webhooks) != 3 || c.Webhooks[0].Format != FormatDiscord || c.Webhooks[1].Format != FormatJSON ||
		c.Webhooks[1].Headers["Authorization"] == "" || c.Webhooks[2].Format != FormatShoutrrr {
		t.Errorf("webhooks = %v", c.Webhooks)
	}
	if len(c.Servers) != 5 {
		t.Fatalf("servers = %d, want 5", len(c.Servers))
	}
	eu1, eu2, priv, wb := c.Server("eu-1"), c.Server("eu-2"), c.Server("private"), c.Server("warband")
	if eu1 == nil || eu2 == nil || priv == nil || wb == nil {
		t.Fatalf("servers missing: %v", c.Servers)
	}
	if eu1.Address != "203.0.113.10:27015" || eu1.Labels["region"] != "eu" || len(eu1.Alerts) != 5 {
		t.Errorf("eu-1 = %+v", eu1)
	}
	if r := eu1.Alerts[2]; r.On != AlertPlayers || r.Threshold != 20 || r.Hysteresis != 2 || r.Direction != Rising || r.Cooldown != 5*time.Minute {
		t.Errorf("eu-1 players rule = %+v", r)
	}
	if r := eu1.Alerts[4]; r.On != AlertJoin || !r.Player.MatchString("Alice") || r.Player.MatchString("Alicia") || r.Cooldown != 30*time.Minute {
		t.Errorf("eu-1 join rule = %+v", r)
	}
	if eu2.Address != "203.0.113.11:27015" || eu2.Interval != 15*time.Second || eu2.Query != QueryRules || len(eu2.Alerts) != 2 {
		t.Errorf("eu-2 = %+v", eu2)
	}
	if priv.PlayerData || !eu2.PlayerData {
		t.Errorf("player_data: private %v, eu-2 %v", priv.PlayerData, eu2.PlayerData)
	}
	if wb.Protocol != "ogp" || wb.Port != 7240 || wb.DownAfter != 5*time.Minute || wb.Failures != 5 || wb.Interval != 30*time.Second {
		t.Errorf("warband = %+v", wb)
	}
	if mc := c.Server("survival"); mc == nil || mc.Protocol != "minecraft" || mc.Address != "mc.example.com:25565" {
		t.Errorf("survival = %+v", mc)
	}
	if eu1.Origin != "monitor.yaml:47" {
		t.Errorf("eu-1 origin = %q", eu1.Origin)
	}
}

func TestParseEmptyIsDefault(t *testing.T) {
	t.Parallel()
	for _, in := range []string{"", "# nothing\n", "---\n", "~\n"} {
		c, err := Parse([]byte(in), "m.yaml")
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if c.Interval != DefaultInterval || len(c.Servers) != 0 || len(c.Alerts) != 2 {
			t.Errorf("%q: %+v", in, c)
		}
	}
}

// TestParseProblems checks that each mistake is reported at its line and
// column, in the config's words.
func TestParseProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string // each a substring of the error
	}{
		{"unknown top-level key", "interval: 30s\nintervall: 5s\n",
			[]string{`m.yaml:2:1: unknown key "intervall" (did you mean "interval"?)`}},
		{"typo of a server key it does not set", "servers:\n  - {name: a, address: 1.2.3.4, intervall: 5s}\n",
			[]string{`m.yaml:2:33: servers[0] (a): unknown key "intervall" (did you mean "interval"?)`}},
		{"typo of a rule key", "alerts:\n  - {on: players, treshold: 20}\n",
			[]string{`alerts[0]: unknown key "treshold" (did you mean "threshold"?)`, `a players alert needs a threshold`}},
		{"unknown server key", "servers:\n  - name: a\n    adress: 1.2.3.4\n",
			[]string{`m.yaml:3:5: servers[0] (a): unknown key "adress" (did you mean "address"?)`, `needs an address`}},
		{"yaml syntax", "interval: 30s\nservers: [\n", []string{`m.yaml:2: YAML: did not find expected node content`}},
		{"yaml tab", "servers:\n\t- name: a\n", []string{`m.yaml:2:1: YAML: a tab in the indentation; indent with spaces`}},
		{"bad duration", "interval: 30x\n", []string{`m.yaml:1:11: interval: "30x" is not a duration: use a number and a unit`}},
		{"no unit", "down_after: 30\n", []string{`m.yaml:1:13: down_after: 30 has no unit: write 30s for seconds, 30m for minutes`}},
		{"negative duration", "grace: -5s\n", []string{`m.yaml:1:8: grace: must not be negative, not -5s`}},
		{"interval too short", "interval: 10ms\n", []string{`interval: must be from 1s to 1d, not 10ms`}},
		{"not a mapping", "- a\n- b\n", []string{`m.yaml:1:1: must be a mapping of keys to values, not a list`}},
		{"servers not a list", "servers: {name: a}\n", []string{`m.yaml:1:10: servers: must be a list, not a mapping`}},
		{"duplicate key", "interval: 30s\ninterval: 40s\n", []string{`m.yaml:2:1: key "interval" given twice (first at line 1)`}},
		{"two documents", "interval: 30s\n---\ninterval: 40s\n", []string{`more than one YAML document`}},
		{"bool", "player_data: yes\n", []string{`m.yaml:1:14: player_data: must be true or false, not "yes"`}},
		{"int", "failures: three\n", []string{`failures: must be a whole number, not "three"`}},
		{"int range", "failures: 0\n", []string{`failures: must be from 1 to 1000, not 0`}},
		{"time zone", "time_zone: Mars/Olympus\n", []string{`m.yaml:1:12: time_zone: "Mars/Olympus" is not a time zone`}},
		{"time zone local", "time_zone: Local\n", []string{`time_zone: "Local" is not a time zone`}},
		{"protocol", "protocol: quake3\n", []string{`m.yaml:1:11: protocol: must be ` + knownProtocols + `, not "quake3"`}},
		{"query", "query: everything\n", []string{`query: must be info, players or rules, not "everything"`}},
		{"listen", "listen: localhost\n", []string{`listen: "localhost" is not HOST:PORT`}},
		{"listen port", "listen: 127.0.0.1:99999\n", []string{`the port must be a number up to 65535`}},
		{"duplicate names", "servers:\n  - {name: a, address: 1.2.3.4}\n  - {name: a, address: 1.2.3.5}\n",
			[]string{`m.yaml:3:12: servers[1] (a).name: the name "a" is taken by the server at m.yaml:2`}},
		{"duplicate address", "servers:\n  - {name: a, address: 1.2.3.4}\n  - {name: b, address: '1.2.3.4:27015'}\n",
			[]string{`servers[1] (b).address: 1.2.3.4:27015 over a2s is already monitored as "a" (m.yaml:2)`}},
		{"bad address", "servers:\n  - {name: a, address: '1.2.3.4:99999'}\n",
			[]string{`m.yaml:2:24: servers[0] (a).address: invalid port "99999"`}},
		{"ogp needs a port", "servers:\n  - {name: a, address: 1.2.3.4, protocol: ogp}\n",
			[]string{`has no port (OGP has no conventional port: give the game's query port)`}},
		{"bad name", "servers:\n  - {name: 'a/b', address: 1.2.3.4}\n", []string{`contains a /`}},
		// issue 19, attacker row 9: a server named .. that the page could
		// reach only as %2e%2e.
		{"name ..", "servers:\n  - {name: '..', address: 1.2.3.4}\n  - {name: ., address: 1.2.3.5}\n", []string{
			`m.yaml:2:12: servers[0] (..).name: the name ".." is a path step, which the web page's URLs cannot take: a browser resolves /s/.. to /s/ or /`,
			`servers[1] (.).name: the name "." is a path step`}},
		{"no name", "servers:\n  - {address: 1.2.3.4}\n", []string{`m.yaml:2:5: servers[0]: needs a name`}},
		{"bad label", "servers:\n  - {name: a, address: 1.2.3.4, labels: {1x: y, __a: b}}\n",
			[]string{`"1x" is not a label name`, `"__a" is not a label name`}},
		{"bad regex", "servers:\n  - name: a\n    address: 1.2.3.4\n    alerts:\n      - {on: join, player: '(Alice'}\n",
			[]string{`m.yaml:5:28: servers[0] (a).alerts[0].player: bad regular expression: missing closing ): ` + "`(Alice`"}},
		{"join without a pattern", "alerts: [join]\n", []string{`a join alert needs a player pattern`}},
		{"unknown alert", "alerts: [crash]\n", []string{`"crash" is not an alert: use down, up, players, map, join or leave`}},
		{"players without threshold", "alerts:\n  - on: players\n", []string{`a players alert needs a threshold`}},
		{"hysteresis above threshold", "alerts:\n  - {on: players, threshold: 5, hysteresis: 6}\n",
			[]string{`alerts[0].hysteresis: must be from 1 to 5, not 6`}},
		{"direction", "alerts:\n  - {on: players, threshold: 5, direction: up}\n",
			[]string{`direction: must be rising, falling or both, not "up"`}},
		{"key of another kind", "alerts:\n  - {on: down, threshold: 5}\n",
			[]string{`m.yaml:2:27: alerts[0].threshold: applies to players alerts, not down`}},
		{"same rule twice", "alerts: [down, down]\n", []string{`the same alert as alerts[0]`}},
		{"unknown webhook", "alerts:\n  - {on: down, webhooks: [ops]}\n",
			[]string{`m.yaml:2:5: alerts[0].webhooks: names the webhook "ops", which is not in webhooks`}},
		{"join needs player data", "servers:\n  - name: a\n    address: 1.2.3.4\n    player_data: false\n    alerts:\n      - {on: join, player: x}\n",
			[]string{`m.yaml:6:9: servers[0] (a).alerts[0]: a join alert needs player names, and this server's player_data is false`}},
		{"join needs players", "servers:\n  - name: a\n    address: 1.2.3.4\n    query: info\n    alerts:\n      - {on: leave, player: x}\n",
			[]string{`a leave alert needs the player list: set query to players or rules`}},
		{"webhook scheme", "webhooks:\n  - ftp://example.com/secret-token\n",
			[]string{`m.yaml:2:5: webhooks[0].url: must be an http:// or https:// URL, or a shoutrrr service's (bark, discord, generic, googlechat, gotify, hangouts, ifttt, join, lark, logger, matrix, mattermost, notifiarr, ntfy, opsgenie, pagerduty, pushbullet, pushover, rocketchat, signal, slack, smtp, teams, telegram, wecom, zulip), not ftp://example.com/...`}},
		{"shoutrrr settings", "webhooks:\n  - telegram://123456:secret-token@telegram\n",
			[]string{`webhooks[0].url: is not a telegram URL shoutrrr takes: `}},
		{"shoutrrr with a format", "webhooks:\n  - {url: 'ntfy://ntfy.sh/topic', format: json}\n",
			[]string{`webhooks[0].format: a ntfy URL takes format shoutrrr, or none`}},
		{"webhook no host", "webhooks:\n  - url: 'https:///x'\n", []string{`webhooks[0].url: has no host`}},
		{"webhook format", "webhooks:\n  - {url: 'https://example.com/', format: teams}\n", []string{`must be discord, json, shoutrrr, slack or auto, not "teams"`}},
		{"webhook header", "webhooks:\n  - {url: 'https://example.com/', headers: {'a b': c}}\n", []string{`"a b" is not an HTTP header name`}},
		{"webhook twice", "webhooks: ['https://example.com/a', 'https://example.com/a']\n", []string{`the same URL as the webhook "webhooks[0]"`}},
		{"retention forever raw", "retention: {raw: forever}\n", []string{`retention.raw: raw samples cannot be kept forever`}},
		{"retention too short", "retention: {hour: 5m}\n", []string{`retention.hour: must be at least 1h, or forever`}},
		{"retention unknown level", "retention: {second: 1h}\n", []string{`retention: unknown key "second"`}},
		{"token short", "token: abc\n", []string{`m.yaml:1:8: token: too short (3 characters)`}},
		{"token twice", "token: 0123456789abcdef0\ntoken_file: /x\n", []string{`token_file: give token or token_file, not both`}},
		{"token file missing", "token_file: /nonexistent/gsq-token\n", []string{`token_file: open /nonexistent/gsq-token: no such file or directory`}},
		{"merge of a list", "servers:\n  - {<<: [a], name: x, address: 1.2.3.4}\n", []string{`a merge (<<) takes a mapping or a list of mappings, not "a"`}},
		{"null value", "servers:\n  - name:\n    address: 1.2.3.4\n", []string{`m.yaml:2:10: servers[0].name: needs a value`}},
	}
	goWords := regexp.MustCompile(`time\.Duration|monitor\.|\bint\b|struct|unmarshal|!!`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tt.in), "m.yaml")
			if err == nil {
				t.Fatalf("no error for:\n%s", tt.in)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %T, want *ConfigError: %v", err, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error:\n%v\nwant it to contain:\n%s", err, w)
				}
			}
			if len(ce.Problems) != len(tt.want) {
				t.Errorf("%d problems, want %d:\n%v", len(ce.Problems), len(tt.want), err)
			}
			if m := goWords.FindString(err.Error()); m != "" {
				t.Errorf("error speaks Go (%q): %v", m, err)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Errorf("error repeats a webhook's secret: %v", err)
			}
		})
	}
}

func TestParseReportsEveryProblem(t *testing.T) {
	t.Parallel()
	in := "interval: 30x\nfoo: 1\nservers:\n  - {name: a, address: 1.2.3.4, bar: 2}\n"
	_, err := Parse([]byte(in), "m.yaml")
	var ce *ConfigError
	if !errors.As(err, &ce) || len(ce.Problems) != 3 {
		t.Fatalf("want 3 problems, got %v", err)
	}
	if !strings.HasPrefix(err.Error(), "monitor: config: 3 problems:\n  m.yaml:1:11: ") {
		t.Errorf("error = %q", err)
	}
}

func TestParseMergeKeysAndExtensions(t *testing.T) {
	t.Parallel()
	in := `
x-eu: &eu {interval: 15s, labels: {region: eu}}
servers:
  - {<<: *eu, name: eu-1, address: 203.0.113.10}
  - {<<: *eu, name: eu-2, address: 203.0.113.11, interval: 1m}
`
	c, err := Parse([]byte(in), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s := c.Server("eu-1"); s.Interval != 15*time.Second || s.Labels["region"] != "eu" {
		t.Errorf("eu-1 = %+v", s)
	}
	if s := c.Server("eu-2"); s.Interval != time.Minute || s.Labels["region"] != "eu" {
		t.Errorf("eu-2 = %+v", s)
	}
}

// TestParseMergeBomb checks that merges of merges, which double the work
// at each level, are bounded.
func TestParseMergeBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("x-0: &a0 {interval: 1s}\n")
	for i := 1; i <= 30; i++ {
		b.WriteString("x-" + itoa(i) + ": &a" + itoa(i) + " {<<: [*a" + itoa(i-1) + ", *a" + itoa(i-1) + "]}\n")
	}
	b.WriteString("servers:\n")
	for range 100 {
		b.WriteString("  - {<<: *a30, name: x, address: 1.2.3.4}\n")
	}
	_, err := Parse([]byte(b.String()), "m.yaml")
	if err == nil || !strings.Contains(err.Error(), "merges (<<) nested deeper than") {
		t.Fatalf("err = %v", err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestParseDefaultsInherited(t *testing.T) {
	t.Parallel()
	in := `
interval: 10s
query: info
player_data: false
protocol: ogp
alert_cooldown: 1m
alerts: [down, {on: join, player: x}, {on: map, cooldown: 2m}]
servers:
  - {name: a, address: '1.2.3.4:7000'}
  - {name: b, address: '1.2.3.4:7001', query: players, player_data: true, protocol: a2s}
  - {name: c, address: '1.2.3.4:7002', alerts: []}
`
	c, err := Parse([]byte(in), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b, cc := c.Server("a"), c.Server("b"), c.Server("c")
	if a.Interval != 10*time.Second || a.Query != QueryInfo || a.PlayerData || a.Protocol != "ogp" {
		t.Errorf("a = %+v", a)
	}
	// a keeps no player names: the global join rule skips it.
	if got := rulesString(a.Alerts); got != "down every 1m at most; map every 2m at most" {
		t.Errorf("a's rules = %s", got)
	}
	if got := rulesString(b.Alerts); got != `down every 1m at most; join "x" every 1m at most; map every 2m at most` {
		t.Errorf("b's rules = %s", got)
	}
	if b.Protocol != "a2s" || !b.PlayerData {
		t.Errorf("b = %+v", b)
	}
	if cc.Alerts == nil || len(cc.Alerts) != 0 {
		t.Errorf("c's alerts = %#v, want none", cc.Alerts)
	}
}

func rulesString(rules []Rule) string {
	var s []string
	for _, r := range rules {
		s = append(s, r.String())
	}
	return strings.Join(s, "; ")
}

func TestTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testutil.WriteFile(t, filepath.Join(dir, "tok"), "0123456789abcdef01\n")
	cfgPath := testutil.WriteFile(t, filepath.Join(dir, "monitor.yaml"), "token_file: tok\n")
	c, err := (&Loader{Path: cfgPath}).Load()
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Token) != "0123456789abcdef01" {
		t.Errorf("token = %q", string(c.Token))
	}
	if s := fmt.Sprintf("%v %s %#v %+v", c.Token, c.Token, c.Token, c); strings.Contains(s, "0123") {
		t.Errorf("the token shows in print: %s", s)
	}
}

func TestWebhookFormatGuess(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]Format{
		"https://discord.com/api/webhooks/1/abc":        FormatDiscord,
		"https://ptb.discord.com/api/webhooks/1/abc":    FormatDiscord,
		"https://discordapp.com/api/webhooks/1/abc":     FormatDiscord,
		"https://discord.com/not/a/webhook":             FormatJSON,
		"https://hooks.slack.com/services/T/B/X":        FormatSlack,
		"http://127.0.0.1:8080/hook":                    FormatJSON,
		"https://evil.example/discord.com/api/webhooks": FormatJSON,
	} {
		c, err := Parse([]byte("webhooks: ['"+url+"']\n"), "m.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Webhooks[0].Format; got != want {
			t.Errorf("%s: format %s, want %s", url, got, want)
		}
		if s := c.Webhooks[0].String(); strings.Contains(s, "abc") || strings.Contains(s, "/X") {
			t.Errorf("String shows the secret: %s", s)
		}
	}
}

func TestDefaultHysteresis(t *testing.T) {
	t.Parallel()
	for threshold, want := range map[int]int{1: 1, 2: 2, 5: 2, 20: 2, 25: 3, 100: 10} {
		if got := DefaultHysteresis(threshold); got != want {
			t.Errorf("DefaultHysteresis(%d) = %d, want %d", threshold, got, want)
		}
	}
}

func TestHealthPolicyFromConfig(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("grace: 0\nservers:\n  - {name: a, address: 1.2.3.4, down_after: 0, failures: 4}\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := c.HealthPolicy(c.Server("a"))
	// An explicit 0 in the config means none, which a HealthPolicy says
	// with a negative value (its zero means the default).
	if p.Failures != 4 || p.DownAfter >= 0 || p.Grace >= 0 {
		t.Errorf("policy = %+v", p)
	}
}

// TestTimeZone: time_zone names the zone of the page's heatmap; none is
// the host's.
func TestTimeZone(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte("time_zone: Asia/Tokyo\n"), "m.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.TimeZone == nil || c.TimeZone.String() != "Asia/Tokyo" {
		t.Errorf("time_zone: Asia/Tokyo gave %v", c.TimeZone)
	}
	if c, err = Parse([]byte("interval: 30s\n"), "m.yaml"); err != nil || c.TimeZone != nil {
		t.Errorf("no time_zone: %v, %v", c.TimeZone, err)
	}
}
