package web

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gsq-project/gsq/monitor"
)

// maxWindowBody bounds the body of POST /api/v1/maintenance.
const maxWindowBody = 64 << 10

// windowJSON is a maintenance window as the API shows it: the window,
// where it was set ("config" or "api"; only the API's can be deleted),
// whether it is on now, and its current or next stretch.
type windowJSON struct {
	monitor.Window
	Source   string   `json:"source"`
	Active   bool     `json:"active"`
	NextFrom jsonTime `json:"next_from"`
	NextTo   jsonTime `json:"next_to"`
}

func windowOf(w monitor.Window, now time.Time) windowJSON {
	j := windowJSON{Window: w, Source: "config", Active: w.Active(now)}
	if w.ID != 0 {
		j.Source = "api"
	}
	if from, to, ok := w.Next(now); ok {
		j.NextFrom, j.NextTo = jsonTime(from), jsonTime(to)
	}
	return j
}

// apiWindows answers GET /api/v1/maintenance: every window, the config's
// first.
func (h *Handler) apiWindows(_ context.Context, _ *http.Request) (any, error) {
	now := time.Now()
	out := []windowJSON{}
	for _, w := range h.opts.Maintenance.Windows() {
		out = append(out, windowOf(w, now))
	}
	return map[string]any{"windows": out}, nil
}

// addWindow answers POST /api/v1/maintenance: a window as JSON
// ({"servers": [...], "labels": {...}, "from", "to"} or "every"), kept
// in the store and in force at once. It answers 201 with the window.
func (h *Handler) addWindow(ctx context.Context, r *http.Request) (any, error) {
	if h.opts.Maintenance == nil {
		return nil, &apiError{http.StatusNotImplemented, "not_implemented", "this monitor takes no maintenance windows"}
	}
	if mt, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(mt) != "application/json" {
		return nil, &apiError{http.StatusUnsupportedMediaType, "bad_content_type", "send the window as application/json"}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxWindowBody+1))
	if err != nil {
		return nil, badParam("body", "%v", err)
	}
	if len(body) > maxWindowBody {
		return nil, badParam("body", "larger than %d bytes", maxWindowBody)
	}
	var w monitor.Window
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return nil, badParam("body", "not a window: %v", err)
	}
	w.ID = 0
	if err := w.Check(); err != nil {
		return nil, badParam("body", "%v", err)
	}
	spec, _ := json.Marshal(w)
	h.windowsMu.Lock()
	defer h.windowsMu.Unlock()
	stored, err := h.store.Windows(ctx)
	if err != nil {
		return nil, err
	}
	if len(stored) >= monitor.MaxWindows {
		return nil, &apiError{http.StatusConflict, "too_many", fmt.Sprintf("%d windows already; delete some first", len(stored))}
	}
	if w.ID, err = h.store.AddWindow(ctx, string(spec)); err != nil {
		return nil, err
	}
	if err := h.reloadWindows(ctx); err != nil {
		return nil, err
	}
	return created{windowOf(w, time.Now())}, nil
}

// created is an answer with status 201.
type created struct{ v any }

// deleteWindow answers DELETE /api/v1/maintenance/{id}.
func (h *Handler) deleteWindow(ctx context.Context, r *http.Request) (any, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return nil, badParam("id", "want the number of a window set through the API")
	}
	h.windowsMu.Lock()
	defer h.windowsMu.Unlock()
	ok, err := h.store.DeleteWindow(ctx, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, &apiError{http.StatusNotFound, "not_found", fmt.Sprintf("no window %d set through the API (the config's are changed in the config)", id)}
	}
	if err := h.reloadWindows(ctx); err != nil {
		return nil, err
	}
	return map[string]any{"deleted": id}, nil
}

// LoadMaintenance reads the windows set through the API from the store
// into Options.Maintenance: the monitor calls it at start.
func (h *Handler) LoadMaintenance(ctx context.Context) error {
	h.windowsMu.Lock()
	defer h.windowsMu.Unlock()
	return h.reloadWindows(ctx)
}

// reloadWindows reads the API's windows from the store. A stored window
// that no longer passes Check (a gsq that reads the grammar otherwise)
// is left out, with a log line. h.windowsMu is held.
func (h *Handler) reloadWindows(ctx context.Context) error {
	if h.opts.Maintenance == nil {
		return nil
	}
	stored, err := h.store.Windows(ctx)
	if err != nil {
		return err
	}
	ws := make([]monitor.Window, 0, len(stored))
	for _, s := range stored {
		var w monitor.Window
		err := json.Unmarshal([]byte(s.Spec), &w)
		if err == nil {
			err = w.Check()
		}
		if err != nil {
			h.log.Printf("window", "web: maintenance window %d: %v; left out", s.ID, err)
			continue
		}
		w.ID = s.ID
		ws = append(ws, w)
	}
	h.opts.Maintenance.SetExtra(ws)
	return nil
}

// maxStretches bounds the stretches of one answer of
// GET /api/v1/servers/{name}/maintenance.
const maxStretches = 5000

// stretchJSON is one stretch of a maintenance window on a server: when
// the window was on, and which window it was.
type stretchJSON struct {
	From   jsonTime `json:"from"`
	To     jsonTime `json:"to"`
	Source string   `json:"source"`
	ID     int64    `json:"id,omitempty"`
	Every  string   `json:"every,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// apiServerWindows answers GET /api/v1/servers/{name}/maintenance
// ?from=&to= (the last 24 hours by default): the stretches of the
// maintenance windows that apply to the server, by name or by its
// labels, and overlap the range, whether or not it went down in them,
// in order of their start. Its chart shades them. "truncated" is true
// when more than maxStretches would have been listed.
func (h *Handler) apiServerWindows(ctx context.Context, r *http.Request) (any, error) {
	name, err := h.knownServer(ctx, r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	from, to, err := timeRange(q.Get("from"), q.Get("to"), time.Now(), 24*time.Hour)
	if err != nil {
		return nil, err
	}
	labels, err := h.labelsOf(ctx)(name)
	if err != nil {
		return nil, err
	}
	out := []stretchJSON{}
	truncated := false
	for _, w := range h.opts.Maintenance.Windows() {
		if !w.Applies(name, labels) {
			continue
		}
		j := windowOf(w, from)
		for t := from; t.Before(to); {
			a, b, ok := w.Next(t)
			if !ok || !a.Before(to) {
				break
			}
			if len(out) == maxStretches {
				truncated = true
				break
			}
			out = append(out, stretchJSON{From: jsonTime(a), To: jsonTime(b), Source: j.Source, ID: w.ID, Every: w.Every, Reason: w.Reason})
			t = b
		}
	}
	slices.SortStableFunc(out, func(a, b stretchJSON) int { return time.Time(a.From).Compare(time.Time(b.From)) })
	return map[string]any{"server": name, "from": jsonTime(from), "to": jsonTime(to), "windows": out, "truncated": truncated}, nil
}
