package web

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/store"
)

// Limits of the incident lists.
const (
	defaultIncidents     = 100
	maxIncidents         = 1000
	defaultIncidentRange = 30 * 24 * time.Hour
)

// incidentJSON is an incident as the API shows it. kind is "outage", or
// "maintenance" for a server that went down inside a maintenance window.
type incidentJSON struct {
	Server          string   `json:"server"`
	Start           jsonTime `json:"start"`
	End             jsonTime `json:"end"` // null while it lasts
	Ongoing         bool     `json:"ongoing"`
	DurationSeconds float64  `json:"duration_seconds"`
	Cause           string   `json:"cause"`
	Message         string   `json:"message"`
	Kind            string   `json:"kind"`
}

// incidentsBody is the answer of GET /api/v1/incidents and
// /api/v1/servers/{name}/incidents.
type incidentsBody struct {
	From      jsonTime       `json:"from"`
	To        jsonTime       `json:"to"`
	Incidents []incidentJSON `json:"incidents"`
}

func (h *Handler) apiIncidents(ctx context.Context, r *http.Request) (any, error) {
	sel, err := parseSelector(r.URL.Query()["label"])
	if err != nil {
		return nil, err
	}
	return h.incidents(ctx, r, "", sel)
}

func (h *Handler) apiServerIncidents(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	return h.incidents(ctx, r, name, nil)
}

// incidents answers both incident lists: of one server, or of every
// server whose labels match sel.
func (h *Handler) incidents(ctx context.Context, r *http.Request, server string, sel selector) (any, error) {
	q := r.URL.Query()
	now := time.Now()
	from, to, err := timeRange(q.Get("from"), q.Get("to"), now, defaultIncidentRange)
	if err != nil {
		return nil, err
	}
	limit := defaultIncidents
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxIncidents {
			return nil, badParam("limit", "want 1 to %d", maxIncidents)
		}
	}
	query := store.IncidentQuery{Server: server, From: from, To: to, Limit: limit}
	if len(sel) > 0 {
		query.Limit = maxIncidents // filtered below, by label
	}
	list, err := h.store.Incidents(ctx, query)
	if err != nil {
		return nil, err
	}
	var labels func(string) (map[string]string, error)
	if len(sel) > 0 {
		labels = h.labelsOf(ctx)
	}
	out := make([]incidentJSON, 0, min(len(list), limit))
	for _, in := range list {
		if len(out) == limit {
			break
		}
		if len(sel) > 0 {
			l, err := labels(in.Server)
			if err != nil {
				return nil, err
			}
			if !sel.matches(l) {
				continue
			}
		}
		out = append(out, incidentOf(in, now))
	}
	return incidentsBody{jsonTime(from), jsonTime(to), out}, nil
}

// incidentOf is an incident as the API shows it, at now.
func incidentOf(in store.Incident, now time.Time) incidentJSON {
	end := now
	j := incidentJSON{Server: in.Server, Start: jsonTime(in.Start), Ongoing: in.End == nil, Cause: in.Cause, Message: in.Detail, Kind: "outage"}
	if in.End != nil {
		end = *in.End
		j.End = jsonTime(end)
	}
	if in.Maintenance {
		j.Kind = "maintenance"
	}
	j.DurationSeconds = math.Max(0, end.Sub(in.Start).Seconds())
	return j
}
