package web

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gsq-project/gsq/store"
)

// Limits and periods of the player endpoints.
const (
	defaultPlayerMatches = 20
	maxPlayerMatches     = 200
	maxPlayerQuery       = 128 // bytes of ?q=
	playerRecent         = 7 * 24 * time.Hour
	playerSessionsShown  = 50
	regularsShown        = 10
)

// playerMatchJSON is a player a search found.
type playerMatchJSON struct {
	Name      string   `json:"name"`
	Sessions  int      `json:"sessions"`
	Servers   int      `json:"servers"`
	FirstSeen jsonTime `json:"first_seen"`
	LastSeen  jsonTime `json:"last_seen"`
	Online    bool     `json:"online"`
}

// playersBody is the answer of GET /api/v1/players?q=NAME.
type playersBody struct {
	Query   string            `json:"query"`
	Players []playerMatchJSON `json:"players"`
}

// hiddenServers names the servers whose player data is off: their
// sessions are left out of every player view.
func (h *Handler) hiddenServers() []string {
	if h.opts.Config == nil {
		return nil
	}
	cfg := h.opts.Config()
	if cfg == nil {
		return nil
	}
	var out []string
	for i := range cfg.Servers {
		if !cfg.Servers[i].PlayerData {
			out = append(out, cfg.Servers[i].Name)
		}
	}
	return out
}

func (h *Handler) apiPlayers(ctx context.Context, r *http.Request) (any, error) {
	q := r.URL.Query()
	name := q.Get("q")
	if name == "" {
		return nil, badParam("q", "give a part of a player's name")
	}
	if len(name) > maxPlayerQuery {
		return nil, badParam("q", "at most %d bytes", maxPlayerQuery)
	}
	limit := defaultPlayerMatches
	if s := q.Get("limit"); s != "" {
		var err error
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxPlayerMatches {
			return nil, badParam("limit", "want 1 to %d", maxPlayerMatches)
		}
	}
	found, err := h.store.SearchPlayers(ctx, name, h.hiddenServers(), limit)
	if err != nil {
		return nil, err
	}
	out := make([]playerMatchJSON, len(found))
	for i, m := range found {
		out[i] = playerMatchJSON{m.Name, m.Sessions, m.Servers, jsonTime(m.FirstSeen), jsonTime(m.LastSeen), m.Online}
	}
	return playersBody{name, out}, nil
}

// playerServerJSON is what a player did on one server.
type playerServerJSON struct {
	Server        string   `json:"server"`
	Sessions      int      `json:"sessions"`
	TotalSeconds  float64  `json:"total_seconds"`
	RecentSeconds float64  `json:"recent_seconds"`
	FirstSeen     jsonTime `json:"first_seen"`
	LastSeen      jsonTime `json:"last_seen"`
	Online        bool     `json:"online"`
}

// playerBody is the answer of GET /api/v1/players/{name}: the player's
// time in total and over the last 7 days (recent_from), every server
// they were seen on, and their latest sessions.
type playerBody struct {
	Name          string             `json:"name"`
	Sessions      int                `json:"sessions"`
	TotalSeconds  float64            `json:"total_seconds"`
	RecentSeconds float64            `json:"recent_seconds"`
	RecentFrom    jsonTime           `json:"recent_from"`
	FirstSeen     jsonTime           `json:"first_seen"`
	LastSeen      jsonTime           `json:"last_seen"`
	Online        bool               `json:"online"`
	Servers       []playerServerJSON `json:"servers"`
	Recent        []sessionJSON      `json:"recent_sessions"`
}

func (h *Handler) apiPlayer(ctx context.Context, r *http.Request) (any, error) {
	name := r.PathValue("name")
	now := time.Now()
	recent := now.Add(-playerRecent)
	hidden := h.hiddenServers()
	p, err := h.store.Player(ctx, name, hidden, recent)
	if errors.Is(err, store.ErrUnknownPlayer) {
		return nil, &apiError{http.StatusNotFound, "not_found", "no sessions of a player named " + strconv.Quote(name)}
	}
	if err != nil {
		return nil, err
	}
	body := playerBody{
		Name: p.Name, Sessions: p.Sessions, TotalSeconds: p.Total.Seconds(), RecentSeconds: p.Recent.Seconds(),
		RecentFrom: jsonTime(recent), FirstSeen: jsonTime(p.FirstSeen), LastSeen: jsonTime(p.LastSeen), Online: p.Online,
		Servers: make([]playerServerJSON, len(p.Servers)), Recent: []sessionJSON{},
	}
	for i, s := range p.Servers {
		body.Servers[i] = playerServerJSON{s.Server, s.Sessions, s.Total.Seconds(), s.Recent.Seconds(), jsonTime(s.FirstSeen), jsonTime(s.LastSeen), s.Online}
	}
	skip := make(map[string]bool, len(hidden))
	for _, s := range hidden {
		skip[s] = true
	}
	list, err := h.store.Sessions(ctx, store.SessionQuery{Player: name, From: p.FirstSeen, To: now, Limit: playerSessionsShown + len(hidden)*playerSessionsShown})
	if err != nil {
		return nil, err
	}
	for _, s := range list {
		if !skip[s.Server] && len(body.Recent) < playerSessionsShown {
			body.Recent = append(body.Recent, sessionOf(s, now))
		}
	}
	return body, nil
}

// regularJSON is a player with much time on a server.
type regularJSON struct {
	Player   string   `json:"player"`
	Seconds  float64  `json:"seconds"`
	Sessions int      `json:"sessions"`
	LastSeen jsonTime `json:"last_seen"`
	Online   bool     `json:"online"`
}

// regularsBody is the answer of GET /api/v1/servers/{name}/regulars: the
// players with the most time on the server over the last 7 and 30 days.
// player_data is false, and the lists empty, for a server whose player
// data is off.
type regularsBody struct {
	Server     string        `json:"server"`
	PlayerData bool          `json:"player_data"`
	Week       []regularJSON `json:"7d"`
	Month      []regularJSON `json:"30d"`
}

func (h *Handler) apiRegulars(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	body := regularsBody{Server: name, PlayerData: true, Week: []regularJSON{}, Month: []regularJSON{}}
	for _, s := range h.hiddenServers() {
		if s == name {
			body.PlayerData = false
			return body, nil
		}
	}
	// A busy server's regulars add up some 100,000 sessions (0.1 to 0.5
	// s): the answer is kept a minute, for every page that shows it.
	h.regularsMu.Lock()
	defer h.regularsMu.Unlock()
	if c, ok := h.regulars[name]; ok && time.Since(c.at) < regularsCache {
		return c.body, nil
	}
	now := time.Now()
	for _, w := range []struct {
		span time.Duration
		dst  *[]regularJSON
	}{{7 * 24 * time.Hour, &body.Week}, {30 * 24 * time.Hour, &body.Month}} {
		regs, err := h.store.Regulars(ctx, name, now.Add(-w.span), now, regularsShown)
		if err != nil {
			return nil, err
		}
		for _, g := range regs {
			*w.dst = append(*w.dst, regularJSON{g.Player, g.Time.Seconds(), g.Sessions, jsonTime(g.LastSeen), g.Online})
		}
	}
	if h.regulars == nil || len(h.regulars) >= maxRegularsCached {
		h.regulars = make(map[string]cachedRegulars)
	}
	h.regulars[name] = cachedRegulars{body, now}
	return body, nil
}

// cachedRegulars is a server's regulars as last added up.
type cachedRegulars struct {
	body regularsBody
	at   time.Time
}

// How long regulars are kept, and for how many servers at most.
const (
	regularsCache     = time.Minute
	maxRegularsCached = 1000
)

// sessionOf is a session as the API shows it, at now.
func sessionOf(s store.Session, now time.Time) sessionJSON {
	end := now
	if s.Left != nil {
		end = *s.Left
	}
	j := sessionJSON{
		Server: s.Server, Player: s.Player, Joined: jsonTime(s.Joined), Online: s.Left == nil,
		DurationSeconds: math.Max(0, end.Sub(s.Joined).Seconds()), LastScore: s.LastScore,
	}
	if s.Left != nil {
		j.Left = jsonTime(*s.Left)
	}
	return j
}
