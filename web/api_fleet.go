package web

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/store"
)

// Limits of a server's fleet events.
const (
	defaultFleetEvents = 20
	maxFleetEvents     = 200
)

// fleetEventJSON is a fleet event as the API shows it (issue 23): kind
// "partial" when some of a server's vantage points said down but fewer
// than its quorum, with each vantage point's view then.
type fleetEventJSON struct {
	At       jsonTime      `json:"at"`
	Kind     string        `json:"kind"`
	Region   string        `json:"region"` // the worker's that recorded it
	Vantages []vantageJSON `json:"vantages"`
}

// vantageJSON is a vantage point's view, as in a server's "vantages".
type vantageJSON struct {
	Region string   `json:"region"`
	Status string   `json:"status"`
	At     jsonTime `json:"at"`
	PingMS *float64 `json:"ping_ms"`
}

// fleetEventsBody is the answer of GET /api/v1/servers/{name}/fleet-events.
// fleet is false, and events empty, on a monitor that is not a fleet's
// (a SQLite store).
type fleetEventsBody struct {
	Fleet  bool             `json:"fleet"`
	Events []fleetEventJSON `json:"events"`
}

// apiFleetEvents answers a server's newest fleet events, oldest first.
func (h *Handler) apiFleetEvents(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	limit := defaultFleetEvents
	if s := r.URL.Query().Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxFleetEvents {
			return nil, badParam("limit", "want 1 to %d", maxFleetEvents)
		}
	}
	body := fleetEventsBody{Events: []fleetEventJSON{}}
	shared, err := store.ClusterOf(h.store)
	if err != nil {
		return body, nil
	}
	body.Fleet = true
	evs, err := shared.Events(ctx, name, limit)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		body.Events = append(body.Events, fleetEventJSON{At: jsonTime(e.At), Kind: e.Kind, Region: e.Region, Vantages: eventViews(e.Views)})
	}
	return body, nil
}

// eventViews decodes the views a worker recorded with an event (region →
// observation, as package cluster writes them), by region; a record it
// cannot read shows none.
func eventViews(raw string) []vantageJSON {
	var obs map[string]struct {
		State  string    `json:"state"`
		At     time.Time `json:"at"`
		PingUS int64     `json:"ping_us"`
	}
	out := []vantageJSON{}
	if json.Unmarshal([]byte(raw), &obs) != nil {
		return out
	}
	for region, o := range obs {
		v := vantageJSON{Region: region, Status: o.State, At: jsonTime(o.At)}
		if v.Status != "up" && v.Status != "down" {
			v.Status = "unknown"
		}
		if v.Status == "up" && o.PingUS > 0 {
			ms := math.Round(float64(o.PingUS)/10) / 100
			v.PingMS = &ms
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b vantageJSON) int { return strings.Compare(a.Region, b.Region) })
	return out
}
