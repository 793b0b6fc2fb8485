package monitor

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/internal/yamlconf"
)

// AlertKind is what an alert rule watches for.
type AlertKind string

// The kinds of alert rules.
const (
	AlertDown    AlertKind = "down"    // the server went down
	AlertUp      AlertKind = "up"      // the server came back after a down alert
	AlertPlayers AlertKind = "players" // the player count crossed a threshold
	AlertMap     AlertKind = "map"     // the map changed
	AlertJoin    AlertKind = "join"    // a player whose name matches joined
	AlertLeave   AlertKind = "leave"   // a player whose name matches left
)

// Direction is which crossings of a threshold a players rule alerts on.
type Direction string

// The directions of a players rule.
const (
	Rising  Direction = "rising"  // the count reached the threshold
	Falling Direction = "falling" // the count fell back (threshold - hysteresis or fewer)
	Both    Direction = "both"
)

// Rule is one alert rule.
type Rule struct {
	On AlertKind
	// Threshold, Hysteresis and Direction are a players rule's: the count
	// is high at Threshold or more and low again at Threshold-Hysteresis
	// or fewer; the rule alerts when the count goes from one to the other
	// in Direction. Between the two, nothing changes, so a count hovering
	// at the threshold does not alert again and again.
	Threshold  int
	Hysteresis int
	Direction  Direction
	// Player is a join or leave rule's pattern, matched against player
	// names (RE2 syntax, unanchored: use ^...$ for a whole name).
	Player *regexp.Regexp
	// Webhooks are the names of the webhooks this rule sends to; empty
	// means all of them.
	Webhooks []string
	// Cooldown is the least time between two alerts of this rule for one
	// server (for join and leave: for one player). What changes within it
	// is reported when it ends, if still true. An up alert that answers a
	// down alert is never held back.
	Cooldown time.Duration

	setCooldown bool
	node        *yaml.Node // where the rule is, for messages: a position only
	path        string
}

// String describes the rule, in the config's words. Two rules with the
// same String alert on the same things.
func (r Rule) String() string {
	var b strings.Builder
	b.WriteString(string(r.On))
	switch r.On {
	case AlertPlayers:
		fmt.Fprintf(&b, " %s %d (hysteresis %d)", r.Direction, r.Threshold, r.Hysteresis)
	case AlertJoin, AlertLeave:
		if r.Player != nil {
			fmt.Fprintf(&b, " %q", r.Player.String())
		}
	}
	if len(r.Webhooks) > 0 {
		fmt.Fprintf(&b, " to %s", strings.Join(r.Webhooks, ", "))
	}
	if r.Cooldown > 0 {
		fmt.Fprintf(&b, " every %s at most", duration.Format(r.Cooldown))
	}
	return b.String()
}

// key identifies what the rule watches, whatever its webhooks and
// cooldown: a reload that changes only those keeps what it announced.
func (r Rule) key() string {
	k := r
	k.Webhooks, k.Cooldown = nil, 0
	return k.String()
}

// resolveCooldown gives a rule that sets no cooldown the config's.
func (r *Rule) resolveCooldown(d time.Duration) {
	if !r.setCooldown {
		r.Cooldown = d
	}
}

// needsPlayers reports whether the rule needs player names.
func (r Rule) needsPlayers() bool { return r.On == AlertJoin || r.On == AlertLeave }

// sendsTo reports whether the rule sends to the webhook named name.
func (r Rule) sendsTo(name string) bool {
	return len(r.Webhooks) == 0 || slices.Contains(r.Webhooks, name)
}

// DefaultHysteresis is the hysteresis of a players rule that sets none:
// a tenth of the threshold, at least 2, and at most the threshold (so
// that a threshold of 1 means "someone is on" and "nobody is").
func DefaultHysteresis(threshold int) int {
	return min(threshold, max(2, (threshold+9)/10))
}

// ruleKeys are the keys each kind of rule takes, besides on, webhooks and
// cooldown.
var ruleKeys = map[AlertKind][]string{
	AlertPlayers: {"threshold", "direction", "hysteresis"},
	AlertJoin:    {"player"},
	AlertLeave:   {"player"},
}

// rules reads a list of alert rules.
func (d *draft) rules(m *yamlconf.Mapping, key string) []Rule {
	out := []Rule{}
	seen := map[string]string{}
	m.List(key, func(path string, item *yaml.Node) {
		r, ok := d.rule(path, item)
		if !ok {
			return
		}
		if prev, dup := seen[r.String()]; dup {
			d.p.At(item, path, "the same alert as %s", prev)
			return
		}
		seen[r.String()] = path
		out = append(out, r)
	})
	return out
}

// rule reads one alert rule: a mapping with "on", or for the rules that
// take no settings, the kind alone ("- down").
func (d *draft) rule(path string, n *yaml.Node) (Rule, bool) {
	r := Rule{node: &yaml.Node{Line: n.Line, Column: n.Column}, path: path}
	if s := yamlconf.Resolve(n); s != nil && s.Kind == yaml.ScalarNode && !yamlconf.IsNull(s) {
		switch k := AlertKind(strings.ToLower(s.Value)); k {
		case AlertDown, AlertUp, AlertMap:
			r.On = k
			return r, true
		case AlertPlayers:
			d.p.At(n, path, "a players alert needs a threshold: write it as {on: players, threshold: 20}")
		case AlertJoin, AlertLeave:
			d.p.At(n, path, "a %s alert needs a player pattern: write it as {on: %s, player: '^Alice$'}", k, k)
		default:
			d.p.At(n, path, "%q is not an alert: use down, up, players, map, join or leave", s.Value)
		}
		return r, false
	}
	m := yamlconf.NewMapping(&d.p, path, n)
	if m == nil {
		return r, false
	}
	var on string
	if !m.Str("on", &on) {
		return r, false
	}
	ok := true
	switch r.On = AlertKind(strings.ToLower(on)); r.On {
	case AlertDown, AlertUp, AlertMap:
	case AlertPlayers:
		ok = d.playersRule(m, &r)
	case AlertJoin, AlertLeave:
		if ok = m.Regexp("player", &r.Player); ok && r.Player == nil {
			d.p.At(n, path, "a %s alert needs player: a regular expression on the player's name, such as '^Alice$'", r.On)
			ok = false
		}
	case "":
		d.p.At(n, path, "needs on: down, up, players, map, join or leave")
		return r, false
	default:
		d.p.At(m.Get("on"), m.Sub("on"), "%q is not an alert: use down, up, players, map, join or leave", on)
		return r, false
	}
	if m.Has("webhooks") {
		ok = m.StringList("webhooks", &r.Webhooks) && ok
	}
	if m.Has("cooldown") {
		r.setCooldown = m.Duration("cooldown", &r.Cooldown, 0, 7*24*time.Hour)
		ok = ok && r.setCooldown
	}
	// Keys of other kinds of rule get a better word than "unknown".
	for kind, keys := range ruleKeys {
		for _, k := range keys {
			if kind != r.On && m.Has(k) && !slices.Contains(ruleKeys[r.On], k) && !slices.Contains(m.Asked, k) {
				d.p.At(m.Get(k), m.Sub(k), "applies to %s alerts, not %s", kind, r.On)
				ok = false
			}
		}
	}
	m.Done()
	return r, ok
}

func (d *draft) playersRule(m *yamlconf.Mapping, r *Rule) bool {
	if !m.Has("threshold") {
		d.p.At(m.Node, m.Path, "a players alert needs a threshold: the player count it watches for")
		return false
	}
	if !m.Int("threshold", &r.Threshold, 1, 1_000_000) {
		return false
	}
	r.Direction = Both
	if m.Has("direction") {
		var s string
		m.Str("direction", &s)
		switch dir := Direction(strings.ToLower(s)); dir {
		case Rising, Falling, Both:
			r.Direction = dir
		default:
			d.p.At(m.Get("direction"), m.Sub("direction"), "must be rising, falling or both, not %q", s)
			return false
		}
	}
	r.Hysteresis = DefaultHysteresis(r.Threshold)
	return m.Int("hysteresis", &r.Hysteresis, 1, r.Threshold)
}

// Format is the shape of a webhook's requests: the name of the
// [Provider] that sends them (FormatJSON, FormatDiscord, FormatSlack).
type Format string

// Webhook is where alerts are sent.
type Webhook struct {
	// Name is what rules call the webhook by.
	Name string
	// URL receives a POST per alert. It is a secret (Discord's and Slack's
	// carry their token): logs show only its scheme and host.
	URL    string
	Format Format
	// Headers are added to every request (an Authorization for a generic
	// receiver, say); their values are secrets too.
	Headers map[string]string
	// Rate is the most messages sent to the webhook per period; zero
	// means its format's default (Discord 5/2s, Slack 1/s, ...).
	Rate Rate
}

// rate is the webhook's rate, or its format's.
func (w Webhook) rate() Rate {
	if w.Rate.N > 0 {
		return w.Rate
	}
	if r := providerKinds[w.Format].rate; r.N > 0 {
		return r
	}
	return jsonRate
}

// String names the webhook without its secrets.
func (w Webhook) String() string {
	return fmt.Sprintf("%s (%s, %s)", w.Name, w.Format, redactURL(w.URL))
}

// redactURL keeps a URL's scheme and host, enough to tell webhooks apart
// in a log without giving their tokens away.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(bad URL)"
	}
	if u.Path == "" || u.Path == "/" {
		return u.Scheme + "://" + u.Host
	}
	return u.Scheme + "://" + u.Host + "/..."
}

// checkWebhookURL parses a webhook's URL, or says what is wrong with it
// (without repeating its secret path): an http:// or https:// URL, or a
// shoutrrr service's (telegram://..., ntfy://..., smtp://...).
func checkWebhookURL(raw string) (*url.URL, string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, "is not a URL"
	case u.Scheme == "":
		return nil, "must be an http:// or https:// URL, or a shoutrrr service's, starting with its scheme"
	case strings.ContainsAny(raw, " \t\r\n"):
		return nil, "contains spaces"
	case isShoutrrrURL(u):
		if msg := checkShoutrrrURL(raw, u); msg != "" {
			return nil, msg
		}
		return u, ""
	case u.Host == "" || u.Hostname() == "":
		return nil, "has no host"
	}
	return u, ""
}

var headerName = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// webhook reads one entry of webhooks: a mapping, or a URL alone.
func (d *draft) webhook(path string, n *yaml.Node) (Webhook, bool) {
	w := Webhook{Name: path} // "webhooks[2]" unless it has a name
	var format string
	var m *yamlconf.Mapping
	if s := yamlconf.Resolve(n); s != nil && s.Kind == yaml.ScalarNode && !yamlconf.IsNull(s) {
		w.URL = s.Value
	} else {
		if m = yamlconf.NewMapping(&d.p, path, n); m == nil {
			return w, false
		}
		m.Str("name", &w.Name)
		if !m.Str("url", &w.URL) {
			return w, false
		}
		if !m.Has("url") {
			d.p.At(n, path, "needs a url")
			return w, false
		}
		m.Str("format", &format)
		d.webhookRate(m, &w)
		if m.StringMap("headers", &w.Headers) {
			for k, v := range w.Headers {
				if !headerName.MatchString(k) {
					d.p.At(m.Get("headers"), m.Sub("headers"), "%q is not an HTTP header name", k)
				}
				if strings.ContainsAny(v, "\r\n\x00") {
					d.p.At(m.Get("headers"), m.Sub("headers."+k), "a header value cannot span lines")
				}
			}
		}
		m.Done()
	}
	ok := d.addWebhook(&w, format, n, path)
	return w, ok
}

// addWebhook checks a webhook (from the file, or --webhook when n is nil)
// and fills in its format.
func (d *draft) addWebhook(w *Webhook, format string, n *yaml.Node, path string) bool {
	u, msg := checkWebhookURL(w.URL)
	if msg != "" {
		d.p.At(n, yamlconf.JoinPath(path, "url"), "%s", msg)
		return false
	}
	switch f := Format(strings.ToLower(format)); {
	case f == "" || f == "auto":
		w.Format = guessFormat(u)
	case (f == FormatShoutrrr) != isShoutrrrURL(u):
		d.p.At(n, yamlconf.JoinPath(path, "format"), "a %s URL takes format %s, or none", u.Scheme, guessFormat(u))
		return false
	case providerKinds[f].new != nil:
		w.Format = f
	default:
		d.p.At(n, yamlconf.JoinPath(path, "format"), "must be %s or auto, not %q", strings.Join(formatNames(), ", "), format)
		return false
	}
	for _, prev := range d.cfg.Webhooks {
		switch {
		case prev.Name == w.Name:
			d.p.At(n, yamlconf.JoinPath(path, "name"), "the name %q is taken by another webhook", w.Name)
			return false
		case prev.URL == w.URL && prev.Format == w.Format:
			d.p.At(n, yamlconf.JoinPath(path, "url"), "the same URL as the webhook %q", prev.Name)
			return false
		}
	}
	if msg := nameProblem(w.Name); msg != "" {
		d.p.At(n, yamlconf.JoinPath(path, "name"), "%s", msg)
		return false
	}
	return true
}

// DefaultGroupWindow is how long the monitor waits after an alert
// for others to send with it, when the config sets no
// alert_group_window.
const DefaultGroupWindow = 3 * time.Second

// maxGroupWindow bounds alert_group_window: alerts are late by it.
const maxGroupWindow = 10 * time.Minute

// alertDelivery reads the top-level keys of how alerts are sent.
func (d *draft) alertDelivery(m *yamlconf.Mapping) {
	m.Duration("alert_group_window", &d.cfg.GroupWindow, 0, maxGroupWindow)
}

// webhookRate reads a webhook's rate: "5/2s".
func (d *draft) webhookRate(m *yamlconf.Mapping, w *Webhook) {
	var s string
	if !m.Has("rate") || !m.Str("rate", &s) {
		return
	}
	r, err := ParseRate(s)
	if err != nil {
		d.p.At(m.Get("rate"), m.Sub("rate"), "%v", err)
		return
	}
	w.Rate = r
}
