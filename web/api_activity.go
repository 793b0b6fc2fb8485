package web

// When people play: the heatmap of a server's players by hour and day of
// the week, its time and players per map, and its rank among the
// monitored servers of its game. docs/api.md describes the answers.

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/store"
)

// Limits of the activity endpoints' parameters.
const (
	defaultHeatmapDays = 28
	maxHeatmapDays     = 91 // a quarter: a year of hours is 8,760 rows to read
	defaultMapStats    = 7 * 24 * time.Hour
	maxMapStats        = 366 * 24 * time.Hour
	// minuteMapStats is the longest range map-stats reads from minutes,
	// in buckets of 1 minute up to a day and 5 beyond; longer ones read
	// hours (minutes are kept 14 days by default).
	minuteMapStats  = 7 * 24 * time.Hour
	defaultRankDays = 30
	maxRankDays     = 90
	// rankWindow is BattleMetrics' (and GameTracker's) window: a server's
	// rank on a day is by its average players over the 7 days to it.
	rankWindow = 7
)

// zone returns the time zone a request asks for (?tz=Area/City), or the
// handler's (Options.TimeZone, the host's local zone by default).
func (h *Handler) zone(r *http.Request) (*time.Location, error) {
	name := r.URL.Query().Get("tz")
	if name == "" {
		return h.opts.TimeZone, nil
	}
	if len(name) > 64 {
		return nil, badParam("tz", "too long to be a time zone")
	}
	loc, err := time.LoadLocation(name)
	if err != nil || name == "Local" {
		return nil, badParam("tz", "%q is not a time zone: want an IANA name such as Europe/Berlin, or UTC", name)
	}
	return loc, nil
}

// dayCount reads a number of days from 1 to hi, or def.
func dayCount(s, name string, def, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > hi {
		return 0, badParam(name, "want a number of days from 1 to %d", hi)
	}
	return n, nil
}

// heatmapBody is the answer of GET /api/v1/servers/{name}/heatmap.
type heatmapBody struct {
	Server   string   `json:"server"`
	TimeZone string   `json:"time_zone"`
	From     jsonTime `json:"from"`
	To       jsonTime `json:"to"`
	Days     int      `json:"days"`
	// AvgPlayers[d][h] is the average players on weekday d (0 is Monday)
	// at hour h of the time zone, null where no hour had a poll; Hours
	// counts the hours with polls that went into it.
	AvgPlayers [7][24]*float64 `json:"avg_players"`
	Hours      [7][24]int      `json:"hours"`
	Max        float64         `json:"max"`
}

// apiHeatmap answers the average players by hour of day and day of week
// over the last days (default 28), read from hourly history. A poll down
// counts as no players, as GameTracker counts downtime. An hour of UTC is
// put in the local hour it starts in, so a zone half an hour off UTC
// shifts it by the half hour.
func (h *Handler) apiHeatmap(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	loc, err := h.zone(r)
	if err != nil {
		return nil, err
	}
	days, err := dayCount(r.URL.Query().Get("days"), "days", defaultHeatmapDays, maxHeatmapDays)
	if err != nil {
		return nil, err
	}
	to := time.Now().Truncate(time.Hour)
	from := to.Add(-time.Duration(days) * 24 * time.Hour)
	points, err := h.store.History(ctx, name, from, to, time.Hour)
	if err != nil {
		return nil, err
	}
	body := heatmapBody{Server: name, TimeZone: loc.String(), From: jsonTime(from), To: jsonTime(to), Days: days}
	var sum [7][24]float64
	for _, p := range points {
		if p.Samples == 0 {
			continue
		}
		local := p.Time.In(loc)
		d, hr := (int(local.Weekday())+6)%7, local.Hour()
		sum[d][hr] += playersCountingDown(p)
		body.Hours[d][hr]++
	}
	for d := range 7 {
		for hr := range 24 {
			if n := body.Hours[d][hr]; n > 0 {
				v := math.Round(sum[d][hr]/float64(n)*100) / 100
				body.AvgPlayers[d][hr] = &v
				body.Max = max(body.Max, v)
			}
		}
	}
	return body, nil
}

// playersCountingDown is a bucket's average players with its polls down
// counted as none (and polls without a count left out).
func playersCountingDown(p store.Point) float64 {
	if !p.Up || p.AvgPlayers < 0 {
		return 0
	}
	return p.AvgPlayers * p.Uptime
}

// mapStat is one map in the answer of map-stats.
type mapStat struct {
	Map        string  `json:"map"`
	Seconds    float64 `json:"seconds"` // time up on the map
	Share      float64 `json:"share"`   // of the time up in the range, 0..1
	AvgPlayers float64 `json:"avg_players"`
}

// mapStatsBody is the answer of GET /api/v1/servers/{name}/map-stats.
type mapStatsBody struct {
	Server      string    `json:"server"`
	From        jsonTime  `json:"from"`
	To          jsonTime  `json:"to"`
	StepSeconds float64   `json:"step_seconds"`
	Maps        []mapStat `json:"maps"`
}

// apiMapStats answers the time up and the average players on each map
// over [from, to) (default the last 7 days), most time first. The map of
// a moment is the last map change before it; time before the first
// change the store keeps is the map "" (unknown). Up time and players
// come from the history in buckets of 1 minute (5 beyond a day, an hour
// beyond 7 days), a bucket split between the maps by how much of it each
// had.
func (h *Handler) apiMapStats(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	q := r.URL.Query()
	from, to, err := timeRange(q.Get("from"), q.Get("to"), now, defaultMapStats)
	if err != nil {
		return nil, err
	}
	if to.After(now) {
		to = now
	}
	if to.Sub(from) > maxMapStats {
		return nil, badParam("from", "the range is longer than %d days", int(maxMapStats/(24*time.Hour)))
	}
	if !from.Before(to) {
		return nil, badParam("from", "must be before now")
	}
	step := time.Minute
	switch span := to.Sub(from); {
	case span > minuteMapStats:
		step = time.Hour
	case span > 24*time.Hour:
		step = 5 * time.Minute
	}
	points, err := h.store.History(ctx, name, from, to, step)
	if err != nil {
		return nil, err
	}
	// The changes from a day before from: the map at from is the last
	// one before it (servers change maps more often than daily).
	changes, err := h.store.Maps(ctx, name, from.Add(-24*time.Hour), to)
	if err != nil {
		return nil, err
	}
	return mapStatsBody{name, jsonTime(from), jsonTime(to), step.Seconds(), mapStats(points, changes, from, to, step)}, nil
}

// mapStats splits the buckets of points over the maps of changes (oldest
// first) in [from, to).
func mapStats(points []store.Point, changes []store.MapChange, from, to time.Time, step time.Duration) []mapStat {
	type acc struct{ up, counted, players float64 }
	by := map[string]*acc{}
	var total float64
	// spans are the maps' stretches: [start, next start).
	type span struct {
		m          string
		start, end int64
	}
	var spans []span
	cur, start := "", from.Unix()
	for _, c := range changes {
		t := c.Time.Unix()
		if t <= from.Unix() {
			cur = c.Map
			continue
		}
		spans = append(spans, span{cur, start, t})
		cur, start = c.Map, t
	}
	spans = append(spans, span{cur, start, to.Unix()})
	size := int64(step / time.Second)
	j := 0 // the first span that ends after the bucket starts
	for _, p := range points {
		if p.Samples == 0 || !p.Up {
			continue
		}
		b0 := max(p.Time.Unix(), from.Unix())
		b1 := min(p.Time.Unix()+size, to.Unix())
		for j < len(spans) && spans[j].end <= b0 {
			j++
		}
		for k := j; k < len(spans) && spans[k].start < b1; k++ {
			o := float64(min(b1, spans[k].end) - max(b0, spans[k].start))
			if o <= 0 {
				continue
			}
			a := by[spans[k].m]
			if a == nil {
				a = &acc{}
				by[spans[k].m] = a
			}
			up := o * p.Uptime
			a.up += up
			total += up
			if p.AvgPlayers >= 0 {
				a.counted += up
				a.players += up * p.AvgPlayers
			}
		}
	}
	out := make([]mapStat, 0, len(by))
	for m, a := range by {
		s := mapStat{Map: m, Seconds: math.Round(a.up)}
		if a.counted > 0 {
			s.AvgPlayers = math.Round(a.players/a.counted*100) / 100
		}
		if total > 0 {
			s.Share = math.Round(a.up/total*10000) / 10000
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b mapStat) int { return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Map, b.Map)) })
	return out
}
