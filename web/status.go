package web

import (
	"bytes"
	"context"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// Limits of the public status page.
const (
	maxStatusServers   = 200 // servers shown
	statusBarServers   = 100 // of which with a 30-day bar
	statusIncidentSpan = 14 * 24 * time.Hour
	statusIncidents    = 50
	statusUptimeSpan   = 30 * 24 * time.Hour
	statusCache        = 10 * time.Second
)

// statusServer is a server as the status page shows it: what anyone who
// queries it learns (name, status, players, map), its uptime and a bar
// per day. No address, no player name.
type statusServer struct {
	Name, Status, StatusText, Map, Players, Uptime string
	Maintenance                                    bool
	Days                                           []statusDay
}

type statusDay struct {
	Class, Title string
}

type statusIncident struct {
	Server, Kind, Cause, Start, Lasted string
	Ongoing, Maintenance               bool
}

type statusWindow struct {
	Servers, From, To, Reason string
	Active                    bool
}

type statusData struct {
	Title, Text, Summary, SummaryClass, Updated string
	Servers                                     []statusServer
	More                                        int
	Incidents                                   []statusIncident
	Windows                                     []statusWindow
}

// serveStatus serves the public status page: read-only, with no token,
// for the servers the config's status_page chooses. It is rendered on
// the server (html/template escapes every server-supplied string) and
// refreshes itself every minute; it runs no script.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
	defer cancel()
	cfg := h.opts.Config()
	if cfg == nil || cfg.StatusPage == nil {
		http.NotFound(w, r)
		return
	}
	// Anyone may ask for the page, so it is built at most once every
	// statusCache, whoever asks: the store sees one reader.
	h.statusMu.Lock()
	page := h.statusPage
	if page == nil || time.Since(h.statusAt) >= statusCache {
		data, err := h.statusData(ctx, cfg.StatusPage)
		if err != nil {
			h.statusMu.Unlock()
			h.log.Printf("store", "web: status page: %v", err)
			http.Error(w, "the status page is not available right now", http.StatusServiceUnavailable)
			return
		}
		var b bytes.Buffer
		if err := statusTemplate.Execute(&b, data); err != nil {
			h.statusMu.Unlock()
			http.Error(w, "the status page is not available right now", http.StatusInternalServerError)
			return
		}
		page, h.statusAt = b.Bytes(), time.Now()
		h.statusPage = page
	}
	h.statusMu.Unlock()
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "public, max-age=30")
	w.Write(page)
}

func (h *Handler) statusData(ctx context.Context, p *monitor.StatusPage) (*statusData, error) {
	now := time.Now()
	d := &statusData{Title: p.Title, Text: p.Text, Updated: now.UTC().Format("2006-01-02 15:04 UTC")}
	var shown []monitor.ServerState
	names := map[string]bool{}
	for _, s := range sortedStates(h.live.Servers()) {
		if p.Shows(s.Name, s.Labels) {
			if len(shown) == maxStatusServers {
				d.More++
				continue
			}
			shown = append(shown, s)
			names[s.Name] = true
		}
	}
	incidents, err := h.store.Incidents(ctx, store.IncidentQuery{From: now.Add(-statusUptimeSpan), To: now, Limit: 1000})
	if err != nil {
		return nil, err
	}
	maint := map[string]bool{} // servers with maintenance incidents in the uptime span
	for _, in := range incidents {
		if !names[in.Server] {
			continue
		}
		if in.Maintenance {
			maint[in.Server] = true
		}
		if len(d.Incidents) < statusIncidents && (in.End == nil || in.End.After(now.Add(-statusIncidentSpan))) {
			j := incidentOf(in, now)
			d.Incidents = append(d.Incidents, statusIncident{
				Server: in.Server, Kind: j.Kind, Cause: causeText(in.Cause), Start: in.Start.UTC().Format("Jan 2 15:04 UTC"),
				Lasted: (time.Duration(j.DurationSeconds) * time.Second).Round(time.Second).String(), Ongoing: j.Ongoing, Maintenance: in.Maintenance,
			})
		}
	}
	down := 0
	for i, s := range shown {
		ss := statusServer{Name: s.Name, Status: string(s.Status), StatusText: statusWord(s.Status)}
		if n := s.Summary.Name; n != nil && *n != "" {
			ss.Name = *n
		}
		if _, in := h.opts.Maintenance.In(s.Name, s.Labels, now); in {
			ss.Maintenance = true
			ss.StatusText += " · maintenance"
		}
		if s.Status == monitor.StatusDown && !ss.Maintenance {
			down++
		}
		if s.Status == monitor.StatusUp {
			if m := s.Summary.Map; m != nil {
				ss.Map = *m
			}
			if pl := s.Summary.Players; pl != nil {
				ss.Players = strconv.Itoa(*pl)
				if mx := s.Summary.MaxPlayers; mx != nil && *mx > 0 {
					ss.Players += " / " + strconv.Itoa(*mx)
				}
			}
		}
		days, frac, polls, err := h.statusDays(ctx, s.Name, now)
		if err != nil {
			return nil, err
		}
		if maint[s.Name] {
			if frac, polls, err = h.store.Uptime(ctx, s.Name, now.Add(-statusUptimeSpan), now); err != nil {
				return nil, err
			}
		}
		if polls > 0 {
			ss.Uptime = strconv.FormatFloat(frac*100, 'f', 2, 64) + "%"
		}
		if i < statusBarServers {
			ss.Days = days
		}
		d.Servers = append(d.Servers, ss)
	}
	switch {
	case len(shown) == 0:
		d.Summary, d.SummaryClass = "No servers to show yet.", "pending"
	case down == 0:
		d.Summary, d.SummaryClass = "All servers are up.", "up"
	case down == len(shown):
		d.Summary, d.SummaryClass = "All servers are down.", "down"
	default:
		d.Summary, d.SummaryClass = strconv.Itoa(down)+" of "+strconv.Itoa(len(shown))+" servers are down.", "down"
	}
	for _, w := range h.opts.Maintenance.Windows() {
		from, to, ok := w.Next(now)
		if !ok || from.After(now.Add(7*24*time.Hour)) {
			continue
		}
		var on []string
		for _, s := range shown {
			if w.Applies(s.Name, s.Labels) {
				on = append(on, s.Name)
			}
		}
		if len(on) == 0 {
			continue
		}
		if len(on) > 5 {
			on = append(on[:5], "…")
		}
		d.Windows = append(d.Windows, statusWindow{Servers: strings.Join(on, ", "), From: from.UTC().Format("Jan 2 15:04"), To: to.UTC().Format("15:04 UTC"),
			Reason: w.Reason, Active: w.Active(now)})
	}
	return d, nil
}

// statusDays is a server's last 30 days, a bar a day (UTC days), and
// its uptime over them: one read of the day rollups.
func (h *Handler) statusDays(ctx context.Context, server string, now time.Time) ([]statusDay, float64, int, error) {
	day := 24 * time.Hour
	to := now.Truncate(day).Add(day)
	points, err := h.store.History(ctx, server, to.Add(-30*day), to, day)
	if err != nil {
		return nil, 0, 0, err
	}
	out := make([]statusDay, 0, len(points))
	up, polls := 0.0, 0
	for _, p := range points {
		up += p.Uptime * float64(p.Samples)
		polls += p.Samples
		sd := statusDay{Class: "none", Title: p.Time.UTC().Format("Jan 2") + ": no data"}
		if p.Samples > 0 {
			sd.Class = "ok"
			switch {
			case p.Uptime < 0.95:
				sd.Class = "bad"
			case p.Uptime < 0.999:
				sd.Class = "meh"
			}
			sd.Title = p.Time.UTC().Format("Jan 2") + ": " + strconv.FormatFloat(p.Uptime*100, 'f', 2, 64) + "% up"
		}
		out = append(out, sd)
	}
	if polls == 0 {
		return out, 0, 0, nil
	}
	return out, up / float64(polls), polls, nil
}

func statusWord(s monitor.Status) string {
	switch s {
	case monitor.StatusUp:
		return "Up"
	case monitor.StatusDown:
		return "Down"
	}
	return "Pending"
}

// causeText says an incident's cause in words.
func causeText(kind string) string {
	switch kind {
	case "timeout":
		return "no answer (timeout)"
	case "unreachable":
		return "unreachable"
	case "protocol":
		return "not answering the protocol"
	}
	return kind
}

// statusTemplate is the public status page: no script, its own style
// sheet, a refresh every minute.
var statusTemplate = template.Must(template.New("status").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta http-equiv="refresh" content="60">
<title>{{.Title}}</title>
<link rel="icon" href="/assets/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/status.css">
</head><body>
<main class="sp">
<header><h1>{{.Title}}</h1>{{if .Text}}<p class="text">{{.Text}}</p>{{end}}</header>
<p class="summary summary-{{.SummaryClass}}" role="status">{{.Summary}}</p>
{{if .Windows}}<section aria-labelledby="mw"><h2 id="mw">Maintenance</h2><ul class="windows">
{{range .Windows}}<li{{if .Active}} class="active"{{end}}><b>{{if .Active}}Now{{else}}Planned{{end}}:</b> {{.From}}–{{.To}} · {{.Servers}}{{if .Reason}} · {{.Reason}}{{end}}</li>
{{end}}</ul></section>{{end}}
<section aria-labelledby="sv"><h2 id="sv">Servers</h2>
<ul class="servers">
{{range .Servers}}<li class="srv">
<div class="line"><span class="st st-{{.Status}}{{if .Maintenance}} st-maint{{end}}"><span class="dot" aria-hidden="true"></span>{{.StatusText}}</span>
<span class="name">{{.Name}}</span>
<span class="fig">{{if .Players}}{{.Players}} players{{end}}{{if .Map}} · {{.Map}}{{end}}</span>
<span class="up">{{if .Uptime}}{{.Uptime}} up, 30 days{{end}}</span></div>
{{if .Days}}<div class="days" role="img" aria-label="Uptime per day, last 30 days">{{range .Days}}<span class="d d-{{.Class}}" title="{{.Title}}"></span>{{end}}</div>{{end}}
</li>
{{end}}</ul>{{if .More}}<p class="more">and {{.More}} more servers</p>{{end}}</section>
<section aria-labelledby="inc"><h2 id="inc">Incidents, last 14 days</h2>
{{if .Incidents}}<table class="incidents"><thead><tr><th>Server</th><th>Started</th><th>Cause</th><th>Lasted</th></tr></thead><tbody>
{{range .Incidents}}<tr><td>{{.Server}}</td><td>{{.Start}}</td><td>{{if .Maintenance}}<span class="maint">Maintenance</span> {{end}}{{.Cause}}</td><td{{if .Ongoing}} class="ongoing"{{end}}>{{if .Ongoing}}ongoing, {{end}}{{.Lasted}}</td></tr>
{{end}}</tbody></table>{{else}}<p class="none">No incidents.</p>{{end}}
</section>
<footer>Updated {{.Updated}} · refreshes every minute · <a href="https://github.com/gsq-project/gsq">gsq monitor</a></footer>
</main>
</body></html>
`))
