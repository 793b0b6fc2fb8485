package web

import (
	"context"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/gsq-project/gsq/monitor"
)

// rankDay is a server's rank on one day.
type rankDay struct {
	Day        jsonTime `json:"day"`  // the UTC day the rank is for
	Rank       *int     `json:"rank"` // null when the server had no poll in the 7 days
	Of         int      `json:"of"`   // servers of the group with polls in the 7 days
	AvgPlayers *float64 `json:"avg_players"`
}

// rankBody is the answer of GET /api/v1/servers/{name}/rank.
type rankBody struct {
	Server string `json:"server"`
	// Game is what the server is ranked among: the monitored servers
	// that announce the same game, or, for a server that announces none,
	// those of its protocol (By says which).
	Game string `json:"game"`
	By   string `json:"by"`
	rankDay
	History []rankDay `json:"history"` // oldest first; the last is the rank above
}

// rankRetry is how long after reading the daily history the ranks are
// read again while the day before today is not rolled up yet.
const rankRetry = 5 * time.Minute

// rankCache holds every server's 7-day average players for the
// maxRankDays days to end: ranks change once a day, and reading every
// server's days (a second or more for 10,000 servers over a year) is
// the costly part. A request the day after is answered from the old
// days while they are read again in the background.
type rankCache struct {
	mu    sync.Mutex
	end   int64                // the day after the last ranked, Unix seconds
	avgs  map[string][]float64 // by server, a day each, NaN for none
	tried time.Time            // when the days were last read
	busy  bool                 // a read runs in the background

	read sync.Mutex // one read of the days at a time
}

// apiRank answers a server's rank among the monitored servers of its
// game by average players over the 7 days to each day (BattleMetrics'
// rule), polls down counting as none (GameTracker's), for the last days
// complete days (default 30), the last being yesterday (UTC), or the day
// before while yesterday is read.
func (h *Handler) apiRank(ctx context.Context, r *http.Request) (any, error) {
	name := r.PathValue("name")
	me, ok := h.live.Server(name)
	if !ok {
		return nil, notMonitored(name)
	}
	days, err := dayCount(r.URL.Query().Get("days"), "days", defaultRankDays, maxRankDays)
	if err != nil {
		return nil, err
	}
	avgs, end, err := h.rankAverages(ctx, time.Now())
	if err != nil {
		return nil, err
	}
	skip := maxRankDays - days // the cache's days before those asked
	game, by := rankGroup(&me)
	var group [][]float64
	for _, s := range h.live.Servers() {
		if g, b := rankGroup(&s); g == game && b == by {
			if a, ok := avgs[s.Name]; ok {
				group = append(group, a[skip:])
			}
		}
	}
	var mine []float64
	if a := avgs[name]; a != nil {
		mine = a[skip:]
	}
	body := rankBody{Server: name, Game: game, By: by, History: make([]rankDay, days)}
	for i := range days {
		d := rankDay{Day: jsonTime(time.Unix(end-int64(days-i)*86400, 0).UTC())}
		better := 0
		for _, a := range group {
			if !math.IsNaN(a[i]) {
				d.Of++
				if mine != nil && !math.IsNaN(mine[i]) && a[i] > mine[i] {
					better++
				}
			}
		}
		if mine != nil && !math.IsNaN(mine[i]) {
			rank, avg := better+1, math.Round(mine[i]*100)/100
			d.Rank, d.AvgPlayers = &rank, &avg
		}
		body.History[i] = d
	}
	body.rankDay = body.History[days-1]
	return body, nil
}

// rankGroup is what a server is ranked among: its announced game, or its
// protocol.
func rankGroup(s *monitor.ServerState) (game, by string) {
	if s.Summary.Game != nil && *s.Summary.Game != "" {
		return *s.Summary.Game, "game"
	}
	return s.Protocol, "protocol"
}

// rankAverages returns the cached 7-day averages and the end of their
// last day: read now when there are none, or else as they are, read
// again in the background when a newer day may be rolled up.
func (h *Handler) rankAverages(ctx context.Context, now time.Time) (map[string][]float64, int64, error) {
	c := &h.ranks
	today := now.UTC().Truncate(24 * time.Hour).Unix()
	c.mu.Lock()
	if c.avgs != nil {
		if c.end < today && !c.busy && now.Sub(c.tried) >= rankRetry {
			c.busy = true
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				if err := h.readRanks(ctx, now); err != nil {
					h.log.Printf("store", "web: reading the ranks: %v", err)
				}
				c.mu.Lock()
				c.busy = false
				c.mu.Unlock()
			}()
		}
		avgs, end := c.avgs, c.end
		c.mu.Unlock()
		return avgs, end, nil
	}
	c.mu.Unlock()
	if err := h.readRanks(ctx, now); err != nil {
		return nil, 0, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.avgs, c.end, nil
}

// readRanks reads every server's days into the cache: the 7-day average
// of each of the maxRankDays days to the last rolled up before now, the
// mean of a server's daily averages over the days of the 7 it was polled.
func (h *Handler) readRanks(ctx context.Context, now time.Time) error {
	c := &h.ranks
	c.read.Lock()
	defer c.read.Unlock()
	today := now.UTC().Truncate(24 * time.Hour)
	c.mu.Lock()
	fresh := c.avgs != nil && c.end >= today.Unix()
	c.mu.Unlock()
	if fresh {
		return nil // read while this one waited
	}
	n := maxRankDays + rankWindow - 1
	start := today.Add(-time.Duration(n) * 24 * time.Hour)
	daily, through, err := h.store.DayAverages(ctx, start, today)
	if err != nil {
		return err
	}
	// The days end where the rollups do: yesterday, or the day before
	// just after midnight. The cache's last day is the last complete.
	shift := int(today.Sub(through) / (24 * time.Hour))
	avgs := make(map[string][]float64, len(daily))
	for server, d := range daily {
		a := make([]float64, maxRankDays)
		for j := range maxRankDays {
			a[j] = math.NaN()
			var sum float64
			var k int
			for i := j - shift; i < j-shift+rankWindow; i++ {
				if i >= 0 && !math.IsNaN(d[i]) {
					sum += d[i]
					k++
				}
			}
			if k > 0 {
				a[j] = sum / float64(k)
			}
		}
		avgs[server] = a
	}
	c.mu.Lock()
	c.avgs, c.end, c.tried = avgs, through.Unix(), time.Now()
	c.mu.Unlock()
	return nil
}

// WarmRanks reads the ranks' daily history now and again a few minutes
// after each UTC midnight, once the day is rolled up, until ctx ends, so
// that no request waits for it. gsq monitor runs it beside the server.
func (h *Handler) WarmRanks(ctx context.Context) {
	for {
		if err := h.readRanks(ctx, time.Now()); err != nil && ctx.Err() == nil {
			h.log.Printf("store", "web: reading the ranks: %v", err)
		}
		today := time.Now().UTC().Truncate(24 * time.Hour)
		next := today.Add(24*time.Hour + 5*time.Minute)
		h.ranks.mu.Lock()
		if h.ranks.end < today.Unix() {
			next = time.Now().Add(rankRetry) // not rolled up yet
		}
		h.ranks.mu.Unlock()
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
