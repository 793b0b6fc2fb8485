package store

import (
	"cmp"
	"context"
	"database/sql"
	"slices"
	"time"
)

// orDefault is b with DefaultBudget's value in every zero field
// (negative stays: no limit).
func (b Budget) orDefault() Budget {
	return Budget{
		Sessions:  cmp.Or(b.Sessions, DefaultBudget.Sessions),
		NameBytes: cmp.Or(b.NameBytes, DefaultBudget.NameBytes),
		Changes:   cmp.Or(b.Changes, DefaultBudget.Changes),
	}
}

// spent is what a server used of its budget in one clock hour.
type spent struct {
	hour                     int64 // Unix hours
	sessions, names, changes int
	warned                   bool // the log said it went over this hour
}

// take charges n to one of the counts of the hour of t (sample time),
// within limit (negative: none), and reports whether it fit. A sample
// older than the hour counted is charged to that hour: going back in
// time starts no hour afresh.
func (sp *spent) take(t int64, count *int, n, limit int) bool {
	if h := floorDiv(t, hour); h > sp.hour {
		*sp = spent{hour: h}
	}
	if limit >= 0 && *count+n > limit {
		return false
	}
	*count += n
	return true
}

// session charges a session opened at t.
func (sp *spent) session(t int64, b Budget) bool { return sp.take(t, &sp.sessions, 1, b.Sessions) }

// change charges a map or version change at t.
func (sp *spent) change(t int64, b Budget) bool { return sp.take(t, &sp.changes, 1, b.Changes) }

// name charges a new player name of n bytes at t.
func (sp *spent) name(t int64, n int, b Budget) bool { return sp.take(t, &sp.names, n, b.NameBytes) }

// refusal is what a round refused of one server, and when.
type refusal struct {
	Refusals
	at int64 // the latest sample time refused
}

// refuse counts a refusal of server st's at t; kind picks the count.
func (p *roundPlan) refuse(st *serverState, t int64, kind func(*Refusals) *int64) {
	r := p.refused[st]
	if r == nil {
		r = &refusal{}
		p.refused[st] = r
	}
	*kind(&r.Refusals)++
	r.at = max(r.at, t)
}

func sessionsOf(r *Refusals) *int64 { return &r.Sessions }
func namesOf(r *Refusals) *int64    { return &r.Names }
func changesOf(r *Refusals) *int64  { return &r.Changes }

// limitNames refuses the sessions that would bring a player name the
// store has never seen when their server has spent its hour's name
// bytes: they are not opened, and leave their server's state. It
// returns the ids of the names the store has.
func (p *roundPlan) limitNames(ctx context.Context, s *db, tx *sql.Tx) (map[string]int64, error) {
	if len(p.joins) == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(p.joins))
	for _, j := range p.joins {
		names = append(names, j.s.player)
	}
	ids, err := s.lookup(ctx, tx, "players", "name", names)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*serverState, len(p.states))
	for _, st := range p.states {
		byID[st.id] = st
	}
	added := make(map[string]bool)
	refused := make(map[*openSession]bool)
	kept := p.joins[:0]
	for _, j := range p.joins {
		name, st := j.s.player, byID[j.server]
		if _, ok := ids[name]; ok || added[name] || st.spent.name(j.s.joined, len(name), s.opts.budget) {
			added[name] = true
			kept = append(kept, j)
			continue
		}
		refused[j.s] = true
		p.refuse(st, j.s.joined, namesOf)
		if st.spent.hour == floorDiv(j.s.joined, hour) {
			st.spent.sessions-- // the session was not opened after all
		}
	}
	p.joins = kept
	if len(refused) > 0 {
		for _, st := range p.states {
			st.open = slices.DeleteFunc(st.open, func(o *openSession) bool { return refused[o] })
		}
	}
	return ids, nil
}

// noteRefused adds a committed round's refusals to the store's counts,
// and logs each server that went over its budget, once an hour.
func (s *db) noteRefused(p *roundPlan) {
	if len(p.refused) == 0 {
		return
	}
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	if s.refused == nil {
		s.refused = make(map[string]Refusals)
	}
	for name, st := range p.states {
		r := p.refused[st]
		if r == nil {
			continue
		}
		total := s.refused[name]
		total.Sessions += r.Sessions
		total.Names += r.Names
		total.Changes += r.Changes
		s.refused[name] = total
		if !st.spent.warned && st.spent.hour == floorDiv(r.at, hour) {
			st.spent.warned = true
			b := s.opts.budget
			s.log.Printf("budget", "store: server %q went over its budget for the hour from %s (%d sessions, %d bytes of new player names, %d map or version changes an hour): what goes over is not kept; refused so far: %d sessions, %d names, %d changes",
				name, time.Unix(st.spent.hour*hour, 0).UTC().Format("2006-01-02 15:04 MST"), b.Sessions, b.NameBytes, b.Changes,
				total.Sessions, total.Names, total.Changes)
		}
	}
}

func (s *db) Refused() map[string]Refusals {
	s.refusedMu.Lock()
	defer s.refusedMu.Unlock()
	out := make(map[string]Refusals, len(s.refused))
	for name, r := range s.refused {
		out[name] = r
	}
	return out
}
