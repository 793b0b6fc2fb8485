package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits on what a server can make the store keep: server-supplied text
// is cut to a length, and a poll's player list to a number of entries.
const (
	maxText         = 256  // bytes of a map, version or player name
	maxNameText     = 512  // bytes of a server's announced name
	maxOpenSessions = 1024 // open sessions of a server, and players of one poll's list considered for their scores
)

// writerState is what the writer keeps between writes, loaded from the
// database at the first write or maintenance. Only the writer, holding
// db.mu, touches it, and it changes only once a transaction committed.
type writerState struct {
	loaded  bool
	servers map[string]*serverState // by name
	strs    map[string]internedString
	marks   marks
	late    map[int64]int64 // server id -> earliest sample written below the minute rollup
}

func (w *writerState) init() {
	w.servers = make(map[string]*serverState)
	w.strs = make(map[string]internedString)
	w.late = make(map[int64]int64)
}

type internedString struct {
	id   int64
	seen int64 // Unix day it was last marked used
}

// serverState is what the writer knows of a server.
type serverState struct {
	id        int64
	announced string
	record    int64 // -1 before any
	recordAt  int64
	lastMap   string
	lastVer   string // version of the latest sample, "" after a restart
	lastT     int64  // latest sample written; older ones only add history
	lastObs   int64  // last poll that listed the players, 0 if none
	open      []*openSession
	spent     spent // of the budget, this hour
	down      bool  // an incident is open
}

// openSession is a session the writer is tracking: open, or, in a plan,
// just closed. id is 0 until it is inserted.
type openSession struct {
	id     int64
	player string
	joined int64
	left   int64 // 0 while open
	score  int64
	// The score last written, and when (in sample time).
	savedScore, saved int64
}

// scoreEvery is how often, at most, the score of an open session is
// written; it is written too when the session ends and when the store
// closes. Scores change at nearly every poll, and each write costs as
// much as a sample: a kill -9 loses at most this much of them.
const scoreEvery = 300

func (st *serverState) clone() *serverState {
	c := *st
	c.open = make([]*openSession, len(st.open))
	for i, o := range st.open {
		oc := *o
		c.open[i] = &oc
	}
	return &c
}

// clean makes server-supplied text storable: valid UTF-8 (PostgreSQL
// refuses anything else), no NUL, at most max bytes.
func clean(s string, max int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	s = strings.ReplaceAll(s, "\x00", "")
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// loadWriter reads the writer's state once.
func (s *db) loadWriter(ctx context.Context) error {
	if s.w.loaded {
		return nil
	}
	meta, err := readMeta(ctx, s.wdb)
	if err != nil {
		return err
	}
	s.w.marks = marksFrom(meta)
	byID := make(map[int64]*serverState)
	err = eachRow(ctx, s.wdb, "SELECT id, name, announced, record, record_at FROM servers", nil, func(r *sql.Rows) error {
		st := &serverState{record: -1}
		var name string
		var record, recordAt sql.NullInt64
		if err := r.Scan(&st.id, &name, &st.announced, &record, &recordAt); err != nil {
			return err
		}
		if record.Valid {
			st.record, st.recordAt = record.Int64, recordAt.Int64
		}
		s.w.servers[name] = st
		byID[st.id] = st
		return nil
	})
	if err != nil {
		return err
	}
	if err := s.loadDetails(ctx, byID, true); err != nil {
		return err
	}
	s.w.loaded = true
	return nil
}

// loadDetails reads what the writer knows of the servers of byID beyond
// their row: the last map, when their players were last listed, their
// open sessions, and whether an incident is open; of every server when
// all is true, else of those of byID alone, a chunk of ids at a time.
func (s *db) loadDetails(ctx context.Context, byID map[int64]*serverState, all bool) error {
	if all {
		if err := s.loadDetailsOf(ctx, byID, ""); err != nil {
			return err
		}
	} else {
		ids := make([]any, 0, len(byID))
		for id := range byID {
			ids = append(ids, id)
		}
		for per := s.chunkRows(1); len(ids) > 0; {
			n := min(per, len(ids))
			if err := s.loadDetailsOf(ctx, byID, inList(n), ids[:n]...); err != nil {
				return err
			}
			ids = ids[n:]
		}
	}
	for _, st := range byID {
		sortSessions(st.open)
	}
	return nil
}

// loadDetailsOf runs loadDetails' queries, for the servers whose ids are
// the args of the list ids ("(?, ?)"), or for all when ids is "".
func (s *db) loadDetailsOf(ctx context.Context, byID map[int64]*serverState, ids string, args ...any) error {
	only := func(col string) string {
		if ids == "" {
			return ""
		}
		return " AND " + col + " IN " + ids
	}
	err := eachRow(ctx, s.wdb, s.q(`SELECT s.id, (SELECT st.value FROM maps m JOIN strings st ON st.id = m.map
			WHERE m.server = s.id ORDER BY m.t DESC LIMIT 1) FROM servers s WHERE TRUE`+only("s.id")), args, func(r *sql.Rows) error {
		var id int64
		var m sql.NullString
		if err := r.Scan(&id, &m); err != nil {
			return err
		}
		if st := byID[id]; st != nil {
			st.lastMap = m.String
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = eachRow(ctx, s.wdb, s.q("SELECT server, t FROM observed WHERE TRUE"+only("server")), args, func(r *sql.Rows) error {
		var id, t int64
		if err := r.Scan(&id, &t); err != nil {
			return err
		}
		if st := byID[id]; st != nil {
			st.lastObs = t
		}
		return nil
	})
	if err != nil {
		return err
	}
	err = eachRow(ctx, s.wdb, s.q(`SELECT x.id, x.server, p.name, x.joined_at, x.score
			FROM servers s JOIN sessions x ON x.server = s.id AND x.left_at IS NULL
			JOIN players p ON p.id = x.player WHERE TRUE`+only("s.id")), args, func(r *sql.Rows) error {
		o := &openSession{}
		var server int64
		if err := r.Scan(&o.id, &server, &o.player, &o.joined, &o.score); err != nil {
			return err
		}
		o.savedScore = o.score
		if st := byID[server]; st != nil {
			st.open = append(st.open, o)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return eachRow(ctx, s.wdb, s.q("SELECT DISTINCT server FROM incidents WHERE ended_at IS NULL"+only("server")), args, func(r *sql.Rows) error {
		var id int64
		if err := r.Scan(&id); err != nil {
			return err
		}
		if st := byID[id]; st != nil {
			st.down = true
		}
		return nil
	})
}

func sortSessions(list []*openSession) {
	slices.SortFunc(list, func(a, b *openSession) int {
		return cmp.Or(cmp.Compare(a.joined, b.joined), cmp.Compare(a.id, b.id))
	})
}

// eachRow runs a query and calls fn for each row.
func eachRow(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (s *db) SyncServers(ctx context.Context, servers []Server) error {
	if err := s.check(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.check(); err != nil { // closed while waiting
		return err
	}
	if err := s.checkFile("sync servers"); err != nil {
		return err
	}
	if err := s.loadWriter(ctx); err != nil {
		return s.fail("sync servers", err)
	}
	byName := make(map[string]Server, len(servers))
	var order []string
	for _, sv := range servers {
		name := clean(sv.Name, maxNameText)
		if name == "" {
			return &Error{Op: "sync servers", DB: s.name, Err: fmt.Errorf("a server has no name (target %q)", sv.Target)}
		}
		if _, dup := byName[name]; !dup {
			order = append(order, name)
		}
		byName[name] = sv
	}
	args := make([]any, 0, len(order)*5)
	for _, name := range order {
		sv := byName[name]
		labels := ""
		if len(sv.Labels) > 0 {
			b, err := json.Marshal(sv.Labels) // sorted keys
			if err != nil {
				return &Error{Op: "sync servers", DB: s.name, Err: err}
			}
			labels = clean(string(b), math.MaxInt32)
		}
		args = append(args, name, clean(sv.Target, maxNameText), clean(sv.Protocol, maxText), labels, "")
	}
	// The servers no longer watched: their sessions end when their
	// players were last listed.
	ended := make(map[string]*serverState)
	dirty := make(map[*openSession]bool)
	for name, st := range s.w.servers {
		if _, ok := byName[name]; ok || len(st.open) == 0 {
			continue
		}
		c := st.clone()
		for _, o := range c.open {
			o.left = max(c.lastObs, o.joined)
			dirty[o] = true
		}
		c.open = nil
		ended[name] = c
	}
	// The workers of a fleet sync the same servers into one PostgreSQL
	// database while others write their rounds, which lock the same rows
	// in another order: PostgreSQL may end the transaction as a deadlock,
	// and it is run again, a few times at most.
	var added map[string]int64
	for try := 1; ; try++ {
		var err error
		added, err = s.syncServersTx(ctx, args, dirty)
		if err == nil {
			break
		}
		if try == maxDeadlockTries || !isDeadlock(err) {
			return s.fail("sync servers", err)
		}
	}
	maps.Copy(s.w.servers, ended)
	for name, id := range added {
		s.w.servers[name] = &serverState{id: id, record: -1}
	}
	return nil
}

// maxDeadlockTries bounds the runs of a transaction that PostgreSQL ends
// as a deadlock.
const maxDeadlockTries = 5

// syncServersTx upserts the servers (args, 5 per row) and ends the
// dirty sessions in one transaction, and returns the ids of the servers
// new to this writer.
func (s *db) syncServersTx(ctx context.Context, args []any, dirty map[*openSession]bool) (map[string]int64, error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if err := s.writeSessions(ctx, tx, dirty, nil, nil); err != nil {
		return nil, err
	}
	added := make(map[string]int64)
	per := s.chunkRows(5)
	for len(args) > 0 {
		n := min(per, len(args)/5)
		query := "INSERT INTO servers (name, target, protocol, labels, announced) VALUES " + valuesRows(n, 5) +
			" ON CONFLICT (name) DO UPDATE SET target = excluded.target, protocol = excluded.protocol, labels = excluded.labels RETURNING id, name"
		err := eachRow(ctx, tx, s.q(query), args[:n*5], func(r *sql.Rows) error {
			var id int64
			var name string
			if err := r.Scan(&id, &name); err != nil {
				return err
			}
			if s.w.servers[name] == nil {
				added[name] = id
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		args = args[n*5:]
	}
	return added, tx.Commit()
}

func (s *db) Present(ctx context.Context) (map[string]Presence, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make(map[string]Presence)
	err := s.locked(ctx, func() error {
		for name, st := range s.w.servers {
			if len(st.open) > 0 {
				out[name] = st.presence()
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.fail("present", err)
	}
	return out, nil
}

// presence is who the server's open sessions say is on it.
func (st *serverState) presence() Presence {
	p := Presence{Players: make([]string, len(st.open))}
	if st.lastObs != 0 {
		p.Listed = time.Unix(st.lastObs, 0)
	}
	for i, o := range st.open {
		p.Players[i] = o.player
	}
	return p
}

func (s *db) Resume(ctx context.Context, servers []string) (map[string]Presence, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	out := make(map[string]Presence)
	err := s.locked(ctx, func() error {
		byID := make(map[int64]*serverState, len(servers))
		names := make(map[int64]string, len(servers))
		for _, name := range servers {
			name = clean(name, maxNameText)
			st := s.w.servers[name]
			if st == nil {
				continue
			}
			byID[st.id] = &serverState{id: st.id, announced: st.announced, record: st.record, recordAt: st.recordAt,
				lastT: st.lastT, spent: st.spent}
			names[st.id] = name
		}
		if err := s.loadDetails(ctx, byID, false); err != nil {
			return err
		}
		for id, st := range byID {
			s.w.servers[names[id]] = st
			if len(st.open) > 0 {
				out[names[id]] = st.presence()
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.fail("resume", err)
	}
	return out, nil
}

func (s *db) Servers(ctx context.Context) ([]Server, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	var list []Server
	err := eachRow(ctx, s.rdb, "SELECT name, target, protocol, labels, announced FROM servers", nil, func(r *sql.Rows) error {
		var sv Server
		var labels string
		if err := r.Scan(&sv.Name, &sv.Target, &sv.Protocol, &labels, &sv.Announced); err != nil {
			return err
		}
		if labels != "" {
			if err := json.Unmarshal([]byte(labels), &sv.Labels); err != nil {
				return fmt.Errorf("labels of %q: %w", sv.Name, err)
			}
		}
		list = append(list, sv)
		return nil
	})
	if err != nil {
		return nil, s.fail("servers", err)
	}
	// Sorted here, by bytes: the engines' collations differ.
	slices.SortFunc(list, func(a, b Server) int { return strings.Compare(a.Name, b.Name) })
	return list, nil
}
