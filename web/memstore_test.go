package web

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gsq-project/gsq/store"
)

// memStore is a small in-memory store.Store for the handler's tests:
// package store's SQLite implementation is not on main yet. It keeps raw
// samples only and computes every answer from them, which is what the
// handler needs to be checked against (the store's own tests check the
// rollups).
type memStore struct {
	store.Store // the methods the handler does not call: nil, they panic

	mu       sync.Mutex
	servers  map[string]store.Server
	samples  map[string][]store.Sample // by server, oldest first
	sessions []store.Session
	open     map[[2]string]int // server, player → index into sessions
	maps     map[string][]store.MapChange
	fail     error // returned by every read when set
}

var _ store.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{
		servers: map[string]store.Server{},
		samples: map[string][]store.Sample{},
		open:    map[[2]string]int{},
		maps:    map[string][]store.MapChange{},
	}
}

func (m *memStore) SyncServers(_ context.Context, servers []store.Server) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range servers {
		m.servers[s.Name] = s
	}
	return nil
}

func (m *memStore) Servers(context.Context) ([]store.Server, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []store.Server
	for _, s := range m.servers {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b store.Server) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (m *memStore) Write(_ context.Context, samples []store.Sample) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range samples {
		prev := m.samples[s.Server]
		m.samples[s.Server] = append(prev, s)
		if !s.Up {
			continue
		}
		if mc := m.maps[s.Server]; s.Map != "" && (len(mc) == 0 || mc[len(mc)-1].Map != s.Map) {
			m.maps[s.Server] = append(mc, store.MapChange{Time: s.Time, Map: s.Map})
		}
		if s.PlayerList == nil {
			continue
		}
		seen := map[string]bool{}
		for _, p := range s.PlayerList {
			seen[p.Name] = true
			key := [2]string{s.Server, p.Name}
			if i, ok := m.open[key]; ok {
				m.sessions[i].LastScore = p.Score
				continue
			}
			m.open[key] = len(m.sessions)
			m.sessions = append(m.sessions, store.Session{Server: s.Server, Player: p.Name, Joined: s.Time, LastScore: p.Score})
		}
		for key, i := range m.open {
			if key[0] == s.Server && !seen[key[1]] {
				left := s.Time
				m.sessions[i].Left = &left
				delete(m.open, key)
			}
		}
	}
	return nil
}

func (m *memStore) History(_ context.Context, server string, from, to time.Time, step time.Duration) ([]store.Point, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []store.Point
	var cur *store.Point
	sum, ups := 0, 0
	for _, s := range m.samples[server] {
		if s.Time.Before(from) || !s.Time.Before(to) {
			continue
		}
		start := s.Time.Truncate(step)
		if cur == nil || !cur.Time.Equal(start) {
			out = append(out, store.Point{Time: start})
			cur = &out[len(out)-1]
			sum, ups = 0, 0
		}
		cur.Samples++
		if s.Up {
			if ups == 0 || s.Players < cur.MinPlayers {
				cur.MinPlayers = s.Players
			}
			cur.MaxPlayers = max(cur.MaxPlayers, s.Players)
			cur.Capacity = max(cur.Capacity, s.MaxPlayers)
			cur.Up = true
			sum += s.Players
			ups++
			cur.AvgPlayers = float64(sum) / float64(ups)
		}
		cur.Uptime = float64(ups) / float64(cur.Samples)
	}
	return out, nil
}

func (m *memStore) Uptime(_ context.Context, server string, from, to time.Time) (float64, int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return 0, 0, m.fail
	}
	polls, up := 0, 0
	for _, s := range m.samples[server] {
		if !s.Time.Before(from) && s.Time.Before(to) {
			polls++
			if s.Up {
				up++
			}
		}
	}
	if polls == 0 {
		return 0, 0, nil
	}
	return float64(up) / float64(polls), polls, nil
}

func (m *memStore) Sessions(_ context.Context, q store.SessionQuery) ([]store.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	to := q.To
	if to.IsZero() {
		to = time.Now()
	}
	limit := q.Limit
	if limit == 0 {
		limit = 1000
	}
	var out []store.Session
	for i := len(m.sessions) - 1; i >= 0 && len(out) < limit; i-- {
		s := m.sessions[i]
		if q.Server != "" && s.Server != q.Server || q.Player != "" && s.Player != q.Player {
			continue
		}
		if !s.Joined.Before(to) || s.Left != nil && s.Left.Before(q.From) {
			continue
		}
		out = append(out, s)
	}
	return out, nil
}

func (m *memStore) Records(_ context.Context, server string) (store.Records, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return store.Records{}, m.fail
	}
	var r store.Records
	dayAgo := time.Now().Add(-24 * time.Hour)
	for _, s := range m.samples[server] {
		if !s.Up {
			continue
		}
		if s.Players > r.AllTime || r.AllTimeAt.IsZero() {
			r.AllTime, r.AllTimeAt = s.Players, s.Time
		}
		if s.Time.After(dayAgo) && (s.Players > r.Peak24h || r.Peak24hAt.IsZero()) {
			r.Peak24h, r.Peak24hAt = s.Players, s.Time
		}
	}
	return r, nil
}

func (m *memStore) Maps(_ context.Context, server string, from, to time.Time) ([]store.MapChange, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return nil, m.fail
	}
	var out []store.MapChange
	for _, c := range m.maps[server] {
		if !c.Time.Before(from) && c.Time.Before(to) {
			out = append(out, c)
		}
	}
	return out, nil
}

func (m *memStore) Maintain(context.Context, time.Time) error { return nil }
func (m *memStore) Close() error                              { return nil }
