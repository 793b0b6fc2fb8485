package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/internal/duration"
	"github.com/gsq-project/gsq/monitor"
	"github.com/gsq-project/gsq/store"
)

// Limits of the API's parameters.
const (
	maxHistoryPoints  = 10000 // (to-from)/step
	targetPoints      = 500   // what an automatic step aims for
	defaultSessions   = 100
	maxSessions       = 1000
	defaultHistory    = 24 * time.Hour
	defaultMapHistory = 7 * 24 * time.Hour
)

// autoSteps are the steps an automatic history step is chosen from.
var autoSteps = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// apiError is an error an API handler answers with.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

func badParam(name, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "bad_parameter", name + ": " + fmt.Sprintf(format, args...)}
}

// errorBody is the JSON of every API error.
type errorBody struct {
	Error struct {
		Status  int    `json:"status"`
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	var b errorBody
	b.Error.Status, b.Error.Code, b.Error.Message = status, code, message
	writeJSON(w, status, b)
}

// rawJSON is an answer already encoded.
type rawJSON []byte

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, ok := v.(rawJSON)
	var err error
	if !ok {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(`{"error":{"status":500,"code":"internal","message":"cannot encode the answer"}}`)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
	w.Write([]byte{'\n'})
}

// api adapts an API handler: it bounds the request's time, and writes the
// value or the error it returns as JSON.
func (h *Handler) api(fn func(ctx context.Context, r *http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), h.opts.RequestTimeout)
		defer cancel()
		v, err := fn(ctx, r)
		if err != nil {
			var ae *apiError
			switch {
			case errors.As(err, &ae):
			case errors.Is(err, context.DeadlineExceeded):
				ae = &apiError{http.StatusServiceUnavailable, "timeout", "the history store did not answer in time"}
			default:
				h.log.Printf("store", "web: %s: %v", r.URL.Path, err)
				ae = &apiError{http.StatusInternalServerError, "internal", "the history store failed; the monitor's log says why"}
			}
			writeError(w, ae.status, ae.code, ae.message)
			return
		}
		if c, ok := v.(created); ok {
			writeJSON(w, http.StatusCreated, c.v)
			return
		}
		writeJSON(w, http.StatusOK, v)
	})
}

func apiNotFound(_ context.Context, r *http.Request) (any, error) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return nil, &apiError{http.StatusMethodNotAllowed, "method_not_allowed", "the API only answers GET"}
	}
	return nil, &apiError{http.StatusNotFound, "not_found", "no such endpoint: " + r.URL.Path}
}

// jsonTime is a time in RFC 3339 with milliseconds, or null when zero.
type jsonTime time.Time

func (t jsonTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	if tt.IsZero() {
		return []byte("null"), nil
	}
	return appendTime(make([]byte, 0, 32), tt), nil
}

// apiServers answers GET /api/v1/servers: {"time", "servers": [...]},
// every server as appendServer writes it, without player lists; with
// ?label=KEY:VALUE (labels.go), the servers whose labels match.
func (h *Handler) apiServers(_ context.Context, r *http.Request) (any, error) {
	sel, err := parseSelector(r.URL.Query()["label"])
	if err != nil {
		return nil, err
	}
	states := sortedStates(h.live.Servers())
	b := make([]byte, 0, 64+600*len(states))
	b = append(b, `{"time":`...)
	b = appendTime(b, time.Now())
	b = append(b, `,"servers":[`...)
	first := true
	for i := range states {
		if !sel.matches(states[i].Labels) {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendServer(b, &states[i], false)
	}
	return rawJSON(append(b, "]}"...)), nil
}

// sortedStates returns states sorted by name, copying them only when the
// monitor did not already sort them.
func sortedStates(states []monitor.ServerState) []monitor.ServerState {
	less := func(a, b monitor.ServerState) int { return strings.Compare(a.Name, b.Name) }
	if slices.IsSortedFunc(states, less) {
		return states
	}
	states = slices.Clone(states)
	slices.SortFunc(states, less)
	return states
}

func (h *Handler) apiServer(_ context.Context, r *http.Request) (any, error) {
	name := r.PathValue("name")
	s, ok := h.live.Server(name)
	if !ok {
		return nil, notMonitored(name)
	}
	return rawJSON(appendServer(nil, &s, true)), nil
}

func notMonitored(name string) *apiError {
	return &apiError{http.StatusNotFound, "not_found", fmt.Sprintf("no server named %q", name)}
}

// knownServer returns the name in the request's path if the monitor
// watches that server now, or the store still has its history.
func (h *Handler) knownServer(ctx context.Context, r *http.Request) (string, error) {
	name := r.PathValue("name")
	if _, ok := h.live.Server(name); ok {
		return name, nil
	}
	servers, err := h.store.Servers(ctx)
	if err != nil {
		return "", err
	}
	if slices.ContainsFunc(servers, func(s store.Server) bool { return s.Name == name }) {
		return name, nil
	}
	return "", notMonitored(name)
}

// historyBody is the answer of GET /api/v1/servers/{name}/history.
type historyBody struct {
	Server      string        `json:"server"`
	From        jsonTime      `json:"from"`
	To          jsonTime      `json:"to"`
	StepSeconds float64       `json:"step_seconds"`
	Points      []store.Point `json:"points"`
}

func (h *Handler) apiHistory(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	q := r.URL.Query()
	from, to, err := timeRange(q.Get("from"), q.Get("to"), now, defaultHistory)
	if err != nil {
		return nil, err
	}
	step, err := historyStep(q.Get("step"), to.Sub(from))
	if err != nil {
		return nil, err
	}
	points, err := h.store.History(ctx, name, from, to, step)
	if err != nil {
		return nil, err
	}
	if points == nil {
		points = []store.Point{}
	}
	return historyBody{name, jsonTime(from), jsonTime(to), step.Seconds(), points}, nil
}

// historyStep parses step (a Go duration such as "5m", or seconds), or
// picks the smallest of autoSteps that gives at most 500 points.
func historyStep(s string, span time.Duration) (time.Duration, error) {
	if s == "" {
		for _, step := range autoSteps {
			if span/step <= targetPoints {
				return step, nil
			}
		}
		return autoSteps[len(autoSteps)-1] * time.Duration(1+span/(autoSteps[len(autoSteps)-1]*targetPoints)), nil
	}
	step, err := parseDuration(s)
	if err != nil {
		return 0, badParam("step", "%v", err)
	}
	if step < time.Second {
		return 0, badParam("step", "must be at least 1s")
	}
	if span/step > maxHistoryPoints {
		return 0, badParam("step", "%s over %s gives more than %d points; take a larger step", step, span, maxHistoryPoints)
	}
	return step, nil
}

// parseDuration reads a duration in gsq's grammar ("90s", "5m", "7d";
// package internal/duration), or a number of seconds.
func parseDuration(s string) (time.Duration, error) {
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if !(secs > 0) || secs > 1e9 {
			return 0, fmt.Errorf("%q is not a positive number of seconds", s)
		}
		return time.Duration(secs * float64(time.Second)), nil
	}
	d, err := duration.Parse(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not positive", s)
	}
	return d, nil
}

// timeRange parses from and to; to defaults to now and from to
// to-span.
func timeRange(fromS, toS string, now time.Time, span time.Duration) (from, to time.Time, err error) {
	to = now
	if toS != "" {
		if to, err = duration.ParseTime(toS, now); err != nil {
			return from, to, badParam("to", "%v", err)
		}
	}
	from = to.Add(-span)
	if fromS != "" {
		if from, err = duration.ParseTime(fromS, now); err != nil {
			return from, to, badParam("from", "%v", err)
		}
	}
	if !from.Before(to) {
		return from, to, badParam("from", "must be before to")
	}
	return from, to, nil
}

// uptimeWindow is the uptime over one window.
type uptimeWindow struct {
	From   jsonTime `json:"from"`
	Uptime *float64 `json:"uptime"` // null when there were no polls
	Polls  int      `json:"polls"`
}

// uptimeBody is the answer of GET /api/v1/servers/{name}/uptime.
type uptimeBody struct {
	Server string       `json:"server"`
	To     jsonTime     `json:"to"`
	Day    uptimeWindow `json:"24h"`
	Week   uptimeWindow `json:"7d"`
	Month  uptimeWindow `json:"30d"`
}

func (h *Handler) apiUptime(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	body := uptimeBody{Server: name, To: jsonTime(now)}
	for _, w := range []struct {
		span time.Duration
		dst  *uptimeWindow
	}{{24 * time.Hour, &body.Day}, {7 * 24 * time.Hour, &body.Week}, {30 * 24 * time.Hour, &body.Month}} {
		from := now.Add(-w.span)
		frac, polls, err := h.store.Uptime(ctx, name, from, now) // without maintenance
		if err != nil {
			return nil, err
		}
		*w.dst = uptimeWindow{From: jsonTime(from), Polls: polls}
		if polls > 0 {
			w.dst.Uptime = &frac
		}
	}
	return body, nil
}

// recordsBody is the answer of GET /api/v1/servers/{name}/records.
type recordsBody struct {
	Server    string   `json:"server"`
	Peak24h   int      `json:"peak_24h"`
	Peak24hAt jsonTime `json:"peak_24h_at"`
	AllTime   int      `json:"all_time"`
	AllTimeAt jsonTime `json:"all_time_at"`
}

func (h *Handler) apiRecords(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	rec, err := h.store.Records(ctx, name)
	if err != nil {
		return nil, err
	}
	return recordsBody{name, rec.Peak24h, jsonTime(rec.Peak24hAt), rec.AllTime, jsonTime(rec.AllTimeAt)}, nil
}

// mapsBody is the answer of GET /api/v1/servers/{name}/maps.
type mapsBody struct {
	Server string            `json:"server"`
	From   jsonTime          `json:"from"`
	To     jsonTime          `json:"to"`
	Maps   []store.MapChange `json:"maps"`
}

func (h *Handler) apiMaps(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	from, to, err := timeRange(q.Get("from"), q.Get("to"), time.Now(), defaultMapHistory)
	if err != nil {
		return nil, err
	}
	maps, err := h.store.Maps(ctx, name, from, to)
	if err != nil {
		return nil, err
	}
	if maps == nil {
		maps = []store.MapChange{}
	}
	return mapsBody{name, jsonTime(from), jsonTime(to), maps}, nil
}

// sessionJSON is a player session as the API shows it.
type sessionJSON struct {
	Server          string   `json:"server"`
	Player          string   `json:"player"`
	Joined          jsonTime `json:"joined"`
	Left            jsonTime `json:"left"` // null while online
	Online          bool     `json:"online"`
	DurationSeconds float64  `json:"duration_seconds"`
	LastScore       int64    `json:"last_score"`
}

// sessionsBody is the answer of the sessions endpoints.
type sessionsBody struct {
	From     jsonTime      `json:"from"`
	To       jsonTime      `json:"to"`
	Sessions []sessionJSON `json:"sessions"`
}

func (h *Handler) apiServerSessions(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	return h.sessions(ctx, r, name)
}

func (h *Handler) apiSessions(ctx context.Context, r *http.Request) (any, error) {
	return h.sessions(ctx, r, r.URL.Query().Get("server"))
}

func (h *Handler) sessions(ctx context.Context, r *http.Request, server string) (any, error) {
	q := r.URL.Query()
	now := time.Now()
	from, to, err := timeRange(q.Get("from"), q.Get("to"), now, defaultHistory)
	if err != nil {
		return nil, err
	}
	limit := defaultSessions
	if s := q.Get("limit"); s != "" {
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 || limit > maxSessions {
			return nil, badParam("limit", "want 1 to %d", maxSessions)
		}
	}
	list, err := h.store.Sessions(ctx, store.SessionQuery{Server: server, Player: q.Get("player"), From: from, To: to, Limit: limit})
	if err != nil {
		return nil, err
	}
	// A server whose player data is off shows none of what was kept
	// before (api_players.go).
	hidden := map[string]bool{}
	for _, s := range h.hiddenServers() {
		hidden[s] = true
	}
	out := make([]sessionJSON, 0, len(list))
	for _, s := range list {
		if !hidden[s.Server] {
			out = append(out, sessionOf(s, now))
		}
	}
	return sessionsBody{jsonTime(from), jsonTime(to), out}, nil
}
