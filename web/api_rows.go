package web

import (
	"context"
	"math"
	"net/http"
	"time"
)

// maxSparklines bounds the servers of one sparklines request: a list asks
// for the rows it shows.
const maxSparklines = 200

// sparklinesBody is the answer of GET /api/v1/sparklines.
type sparklinesBody struct {
	From        jsonTime `json:"from"`
	To          jsonTime `json:"to"`
	StepSeconds float64  `json:"step_seconds"`
	// Servers are each server's average players by hour, oldest first,
	// null for an hour with no poll up.
	Servers map[string][]*float64 `json:"servers"`
}

// apiSparklines answers the players of the last 24 whole hours, by
// hour, of the servers named (server=A&server=B…, at most 200), for the
// list's sparklines, which end with the players now from the list's own
// data: whole hours are read from the hourly rollups alone, without the
// recent samples of every server (a scan of them all), in one read for
// all the servers. Names the store does not know are left out.
func (h *Handler) apiSparklines(ctx context.Context, r *http.Request) (any, error) {
	names := r.URL.Query()["server"]
	if len(names) == 0 || len(names) > maxSparklines {
		return nil, badParam("server", "name 1 to %d servers (server=A&server=B)", maxSparklines)
	}
	to := time.Now().Truncate(time.Hour)
	from := to.Add(-24 * time.Hour)
	hist, err := h.store.HistoryMany(ctx, names, from, to, time.Hour)
	if err != nil {
		return nil, err
	}
	body := sparklinesBody{From: jsonTime(from), To: jsonTime(to), StepSeconds: 3600, Servers: make(map[string][]*float64, len(hist))}
	for name, points := range hist {
		line := make([]*float64, len(points))
		for i, p := range points {
			if p.Up && p.AvgPlayers >= 0 {
				v := math.Round(p.AvgPlayers*10) / 10
				line[i] = &v
			}
		}
		body.Servers[name] = line
	}
	return body, nil
}
