package monitor

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Window is a maintenance window: a time when some servers are expected
// down, so that their alerts are silenced, their incidents are marked as
// maintenance rather than outages, and the time is left out of their
// uptime. It applies to the servers it names and to those whose labels
// match all of Labels; it is either one stretch of time (From, To) or a
// schedule (Every: "day 04:00-04:15 UTC").
type Window struct {
	// ID numbers the windows set through the API (0 for the config's).
	ID      int64             `json:"id,omitempty"`
	Servers []string          `json:"servers,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	From    time.Time         `json:"from,omitzero"`
	To      time.Time         `json:"to,omitzero"`
	Every   string            `json:"every,omitempty"`
	Reason  string            `json:"reason,omitempty"`

	sched *schedule
}

// Limits of a window.
const (
	maxWindowServers = 1000
	maxWindowReason  = 512
	// MaxWindows bounds the windows set through the API.
	MaxWindows = 1000
)

// Check validates a window and prepares its schedule: it names servers
// or labels, and is either From and To, or Every.
func (w *Window) Check() error {
	switch {
	case len(w.Servers) == 0 && len(w.Labels) == 0:
		return errors.New("name the servers (servers) or labels (labels) it applies to")
	case len(w.Servers) > maxWindowServers:
		return fmt.Errorf("more than %d servers", maxWindowServers)
	case len(w.Labels) > maxLabels:
		return fmt.Errorf("more than %d labels", maxLabels)
	case len(w.Reason) > maxWindowReason:
		return fmt.Errorf("reason: longer than %d bytes", maxWindowReason)
	case w.Every != "" && (!w.From.IsZero() || !w.To.IsZero()):
		return errors.New("give from and to, or every, not both")
	case w.Every != "":
		s, err := parseSchedule(w.Every)
		if err != nil {
			return fmt.Errorf("every: %w", err)
		}
		w.sched = s
		return nil
	case w.From.IsZero() || w.To.IsZero():
		return errors.New("give from and to (RFC 3339 times), or every (\"day 04:00-04:15 UTC\")")
	case !w.From.Before(w.To):
		return errors.New("from must be before to")
	}
	return nil
}

// Applies reports whether the window covers the named server, with its
// labels.
func (w *Window) Applies(server string, labels map[string]string) bool {
	if slices.Contains(w.Servers, server) {
		return true
	}
	if len(w.Labels) == 0 {
		return false
	}
	for k, v := range w.Labels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// Active reports whether t is inside the window. A window not yet
// checked (Check) is never active.
func (w *Window) Active(t time.Time) bool {
	if w.Every != "" {
		return w.sched != nil && w.sched.active(t)
	}
	return !t.Before(w.From) && t.Before(w.To)
}

// Next returns the window's current or next stretch after t, and false
// when there is none (a one-off window that ended).
func (w *Window) Next(t time.Time) (from, to time.Time, ok bool) {
	if w.Every != "" {
		if w.sched == nil {
			return from, to, false
		}
		return w.sched.next(t)
	}
	return w.From, w.To, t.Before(w.To)
}

// schedule is a repeating window: on some weekdays (all for "day"), from
// a time of day for a duration, in a time zone.
type schedule struct {
	days  [7]bool // by time.Weekday
	start time.Duration
	span  time.Duration
	loc   *time.Location
}

var weekdays = map[string]time.Weekday{
	"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday,
	"thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday,
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// parseSchedule reads "[every] DAYS HH:MM-HH:MM [ZONE]": DAYS is "day"
// (or "daily"), "weekday", "weekend", or weekdays joined by commas
// ("mon,thu"); ZONE is UTC (the default) or an IANA zone
// ("Europe/Berlin"). An end before the start is on the next day.
func parseSchedule(s string) (*schedule, error) {
	f := strings.Fields(strings.ToLower(s))
	if len(f) > 0 && f[0] == "every" {
		f = f[1:]
	}
	if len(f) < 2 || len(f) > 3 {
		return nil, fmt.Errorf("%q: want [every] DAYS HH:MM-HH:MM [ZONE], such as \"every day 04:00-04:15 UTC\"", s)
	}
	sc := &schedule{loc: time.UTC}
	switch f[0] {
	case "day", "daily":
		sc.days = [7]bool{true, true, true, true, true, true, true}
	case "weekday", "weekdays":
		sc.days = [7]bool{false, true, true, true, true, true, false}
	case "weekend", "weekends":
		sc.days[time.Saturday], sc.days[time.Sunday] = true, true
	default:
		for _, d := range strings.Split(f[0], ",") {
			wd, ok := weekdays[strings.TrimSuffix(d, "s")]
			if !ok {
				wd, ok = weekdays[d]
			}
			if !ok {
				return nil, fmt.Errorf("%q is not day, weekday, weekend or a day of the week", d)
			}
			sc.days[wd] = true
		}
	}
	a, b, ok := strings.Cut(f[1], "-")
	if !ok {
		return nil, fmt.Errorf("%q: want HH:MM-HH:MM", f[1])
	}
	start, err := clock(a)
	if err != nil {
		return nil, err
	}
	end, err := clock(b)
	if err != nil {
		return nil, err
	}
	sc.start, sc.span = start, end-start
	if sc.span <= 0 {
		sc.span += 24 * time.Hour
	}
	if len(f) == 3 {
		zone := strings.Fields(s)[len(strings.Fields(s))-1] // as written: zone names are case-sensitive
		if strings.EqualFold(zone, "utc") {
			zone = "UTC"
		}
		if sc.loc, err = time.LoadLocation(zone); err != nil {
			return nil, fmt.Errorf("%q is not a time zone (UTC, or an IANA name such as Europe/Berlin)", zone)
		}
	}
	return sc, nil
}

// clock reads HH:MM.
func clock(s string) (time.Duration, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || hh < 0 || hh > 24 || mm < 0 || mm > 59 || hh == 24 && mm != 0 || len(m) != 2 {
		return 0, fmt.Errorf("%q is not a time of day (HH:MM)", s)
	}
	return time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute, nil
}

// startOn is the window's start on the day of t (in its zone).
func (sc *schedule) startOn(t time.Time) (time.Time, bool) {
	t = t.In(sc.loc)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, sc.loc)
	return day.Add(sc.start), sc.days[day.Weekday()]
}

func (sc *schedule) active(t time.Time) bool {
	// The window that began today, or yesterday and runs past midnight.
	for _, d := range []time.Time{t, t.AddDate(0, 0, -1)} {
		if s, ok := sc.startOn(d); ok && !t.Before(s) && t.Before(s.Add(sc.span)) {
			return true
		}
	}
	return false
}

func (sc *schedule) next(t time.Time) (from, to time.Time, ok bool) {
	for i := -1; i <= 7; i++ {
		if s, on := sc.startOn(t.AddDate(0, 0, i)); on && t.Before(s.Add(sc.span)) {
			return s, s.Add(sc.span), true
		}
	}
	return from, to, false
}

// Maintenance is the maintenance windows a monitor knows: its config's
// and those set through the API. The poller asks it whether a server
// that goes down is in maintenance, the Alerter whether to silence an
// alert, the web page what to show. Safe for concurrent use; a nil
// *Maintenance has no window.
type Maintenance struct {
	mu     sync.RWMutex
	config []Window
	extra  []Window
}

// SetConfig replaces the config's windows (checked by the config).
func (m *Maintenance) SetConfig(ws []Window) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.config = slices.Clone(ws)
	m.mu.Unlock()
}

// SetExtra replaces the windows set through the API; each must have
// passed Check.
func (m *Maintenance) SetExtra(ws []Window) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.extra = slices.Clone(ws)
	m.mu.Unlock()
}

// Windows returns every window: the config's, then the API's.
func (m *Maintenance) Windows() []Window {
	if m == nil {
		return nil
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Window, 0, len(m.config)+len(m.extra))
	for _, list := range [][]Window{m.config, m.extra} {
		for _, w := range list {
			w.Servers, w.Labels = slices.Clone(w.Servers), maps.Clone(w.Labels)
			out = append(out, w)
		}
	}
	return out
}

// In returns the window the server is in at t, if any.
func (m *Maintenance) In(server string, labels map[string]string, t time.Time) (Window, bool) {
	if m == nil {
		return Window{}, false
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, list := range [][]Window{m.config, m.extra} {
		for _, w := range list {
			if w.Active(t) && w.Applies(server, labels) {
				return w, true
			}
		}
	}
	return Window{}, false
}

// Silences reports whether a server with these labels is in a
// maintenance window at t: its alerts are silenced (the Alerter's
// [AlerterOptions.Silenced]).
func (m *Maintenance) Silences(server string, labels map[string]string, t time.Time) bool {
	_, in := m.In(server, labels, t)
	return in
}
