package monitor

import (
	"maps"
	"slices"
)

// Changes are what a config reload changes, for the poller to apply: it
// starts polling the added servers, stops the removed ones (their history
// stays in the store), and applies the changed settings of the others.
// Servers not listed are unchanged: their state and data are kept as
// they are.
type Changes struct {
	Added   []string       // names of new servers
	Removed []string       // names of servers no longer configured
	Changed []ServerChange // servers whose settings changed
	// Settings are the global settings that changed, by config key. Those
	// that servers inherit show up in Changed as well.
	Settings []string
}

// ServerChange is a server whose settings changed.
type ServerChange struct {
	Name string
	// Fields are the changed settings, by config key: "address",
	// "protocol", "interval", "down_after", "failures", "labels", "query",
	// "player_data", "alerts".
	Fields []string
}

// Retargeted reports whether the server now points elsewhere (its address
// or protocol changed): what the monitor knew of its health no longer
// holds, though its history, under the same name, stays.
func (c ServerChange) Retargeted() bool {
	return slices.Contains(c.Fields, "address") || slices.Contains(c.Fields, "protocol")
}

// restartSettings take effect only when the monitor starts: the HTTP
// listener and the database are opened once.
var restartSettings = []string{"listen", "db"}

// NeedRestart lists the changed settings that a reload cannot apply; the
// CLI says they wait for a restart.
func (c Changes) NeedRestart() []string {
	var out []string
	for _, s := range c.Settings {
		if slices.Contains(restartSettings, s) {
			out = append(out, s)
		}
	}
	return out
}

// Empty reports whether nothing changed.
func (c Changes) Empty() bool {
	return len(c.Added) == 0 && len(c.Removed) == 0 && len(c.Changed) == 0 && len(c.Settings) == 0
}

// Diff compares two configs, old the running one.
func Diff(old, next *Config) Changes {
	var ch Changes
	settings := []struct {
		key   string
		equal bool
	}{
		{"interval", old.Interval == next.Interval},
		{"down_after", old.DownAfter == next.DownAfter},
		{"failures", old.Failures == next.Failures},
		{"grace", old.Grace == next.Grace},
		{"protocol", old.Protocol == next.Protocol},
		{"query", old.Query == next.Query},
		{"player_data", old.PlayerData == next.PlayerData},
		{"listen", old.Listen == next.Listen},
		{"db", old.DB == next.DB},
		{"token", old.Token == next.Token},
		{"player_metrics", old.PlayerMetrics == next.PlayerMetrics},
		{"guard_badges", old.GuardBadges == next.GuardBadges},
		{"retention", old.Retention == next.Retention},
		{"alert_cooldown", old.AlertCooldown == next.AlertCooldown},
		{"webhooks", slices.EqualFunc(old.Webhooks, next.Webhooks, sameWebhook)},
		{"alerts", slices.EqualFunc(old.Alerts, next.Alerts, sameRule)},
	}
	for _, s := range settings {
		if !s.equal {
			ch.Settings = append(ch.Settings, s.key)
		}
	}
	oldByName := make(map[string]*Server, len(old.Servers))
	for i := range old.Servers {
		oldByName[old.Servers[i].Name] = &old.Servers[i]
	}
	seen := make(map[string]bool, len(next.Servers))
	for i := range next.Servers {
		s := &next.Servers[i]
		seen[s.Name] = true
		o := oldByName[s.Name]
		if o == nil {
			ch.Added = append(ch.Added, s.Name)
			continue
		}
		if f := serverFields(o, s); len(f) > 0 {
			ch.Changed = append(ch.Changed, ServerChange{Name: s.Name, Fields: f})
		}
	}
	for i := range old.Servers {
		if !seen[old.Servers[i].Name] {
			ch.Removed = append(ch.Removed, old.Servers[i].Name)
		}
	}
	return ch
}

// serverFields lists the settings of a server that differ.
func serverFields(a, b *Server) []string {
	var out []string
	for _, f := range []struct {
		key   string
		equal bool
	}{
		{"address", a.Address == b.Address && a.NoPort == b.NoPort},
		{"protocol", a.Protocol == b.Protocol},
		{"interval", a.Interval == b.Interval},
		{"down_after", a.DownAfter == b.DownAfter},
		{"failures", a.Failures == b.Failures},
		{"labels", maps.Equal(a.Labels, b.Labels)},
		{"query", a.Query == b.Query},
		{"player_data", a.PlayerData == b.PlayerData},
		{"alerts", slices.EqualFunc(a.Alerts, b.Alerts, sameRule)},
		{"vantages", slices.Equal(a.Vantages, b.Vantages)},
		{"quorum", a.Quorum == b.Quorum},
	} {
		if !f.equal {
			out = append(out, f.key)
		}
	}
	return out
}

func sameRule(a, b Rule) bool { return a.String() == b.String() }

func sameWebhook(a, b Webhook) bool {
	return a.Name == b.Name && a.URL == b.URL && a.Format == b.Format && maps.Equal(a.Headers, b.Headers)
}
