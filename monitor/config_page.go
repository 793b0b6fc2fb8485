package monitor

import (
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/gsq-project/gsq/internal/yamlconf"
)

// StatusPage is the public status page: a read-only page, with no
// token, of the servers it names and those whose labels match all of
// Labels.
type StatusPage struct {
	// Path is where it is served (default "/status").
	Path string
	// Title and Text head the page.
	Title, Text string
	Servers     []string
	Labels      map[string]string
}

// DefaultStatusPath is where the status page is served by default.
const DefaultStatusPath = "/status"

// Shows reports whether the page shows the named server, with its
// labels.
func (p *StatusPage) Shows(server string, labels map[string]string) bool {
	w := Window{Servers: p.Servers, Labels: p.Labels}
	return w.Applies(server, labels)
}

// reservedPaths are the paths the monitor serves itself, which a status
// page may not take.
var reservedPaths = []string{"/api", "/assets", "/s", "/p", "/badge", "/banner", "/login", "/logout", "/metrics", "/probe", "/incidents"}

// pageSettings reads maintenance and status_page.
func (d *draft) pageSettings(m *yamlconf.Mapping) {
	m.List("maintenance", func(path string, item *yaml.Node) {
		if w, ok := d.window(path, item); ok {
			d.cfg.Maintenance = append(d.cfg.Maintenance, w)
		}
	})
	n := m.Get("status_page")
	if n == nil || yamlconf.IsNull(n) {
		return
	}
	sm := yamlconf.NewMapping(&d.p, "status_page", n)
	if sm == nil {
		return
	}
	p := &StatusPage{Path: DefaultStatusPath, Title: "Status"}
	if sm.Str("path", &p.Path) && sm.Has("path") {
		if msg := statusPathProblem(p.Path); msg != "" {
			d.p.At(sm.Get("path"), sm.Sub("path"), "%s", msg)
		}
	}
	sm.Str("title", &p.Title)
	sm.Str("text", &p.Text)
	sm.StringList("servers", &p.Servers)
	if sm.StringMap("labels", &p.Labels) {
		d.checkLabels(sm, p.Labels)
	}
	if len(p.Servers) == 0 && len(p.Labels) == 0 {
		d.p.At(n, "status_page", "name the servers (servers) or labels (labels) the public page shows")
	}
	if len(p.Title) > 200 || len(p.Text) > 4000 {
		d.p.At(n, "status_page", "title (200 bytes) or text (4000 bytes) too long")
	}
	sm.Done()
	d.cfg.StatusPage = p
}

// statusPathProblem says what is wrong with a status page's path, or "".
func statusPathProblem(p string) string {
	if !strings.HasPrefix(p, "/") || p == "/" || strings.HasSuffix(p, "/") || strings.ContainsAny(p, "{}?#% \t\\") || strings.Contains(p, "//") {
		return "must be a path such as /status: a / and letters, without {}, ?, # or a trailing /"
	}
	for _, r := range reservedPaths {
		if p == r || strings.HasPrefix(p, r+"/") {
			return "the monitor serves " + r + " itself; choose another path"
		}
	}
	return ""
}

// window reads one maintenance window.
func (d *draft) window(path string, n *yaml.Node) (Window, bool) {
	m := yamlconf.NewMapping(&d.p, path, n)
	if m == nil {
		return Window{}, false
	}
	var w Window
	m.StringList("servers", &w.Servers)
	if m.StringMap("labels", &w.Labels) {
		d.checkLabels(m, w.Labels)
	}
	ok := true
	for _, t := range []struct {
		key string
		dst *time.Time
	}{{"from", &w.From}, {"to", &w.To}} {
		var s string
		if !m.Str(t.key, &s) || s == "" {
			continue
		}
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			d.p.At(m.Get(t.key), m.Sub(t.key), "%q is not an RFC 3339 time (2026-12-01T04:00:00Z)", s)
			ok = false
			continue
		}
		*t.dst = v
	}
	m.Str("every", &w.Every)
	m.Str("reason", &w.Reason)
	m.Done()
	if !ok {
		return w, false
	}
	if err := w.Check(); err != nil {
		d.p.At(n, path, "%v", err)
		return w, false
	}
	return w, true
}
