package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// invariants are queries that count rows breaking a rule of the store.
var invariants = []struct{ rule, query string }{
	{"samples of unknown servers", "SELECT count(*) FROM samples WHERE server NOT IN (SELECT id FROM servers)"},
	{"samples with unknown texts", "SELECT count(*) FROM samples WHERE map NOT IN (SELECT id FROM strings) OR version NOT IN (SELECT id FROM strings)"},
	{"down samples with figures", "SELECT count(*) FROM samples WHERE up = 0 AND (players IS NOT NULL OR map IS NOT NULL OR ping IS NOT NULL)"},
	{"map changes of unknown servers or maps", "SELECT count(*) FROM maps WHERE server NOT IN (SELECT id FROM servers) OR map NOT IN (SELECT id FROM strings)"},
	{"sessions of unknown servers or players", "SELECT count(*) FROM sessions WHERE server NOT IN (SELECT id FROM servers) OR player NOT IN (SELECT id FROM players)"},
	{"sessions that end before they begin", "SELECT count(*) FROM sessions WHERE left_at < joined_at"},
	{"minute rollups with impossible counts", rollupInvariant("rollup_minute")},
	{"hour rollups with impossible counts", rollupInvariant("rollup_hour")},
	{"day rollups with impossible counts", rollupInvariant("rollup_day")},
}

func rollupInvariant(table string) string {
	return "SELECT count(*) FROM " + table + " WHERE down + nocount > polls OR min_players > max_players OR polls < 1"
}

func (s *db) Check(ctx context.Context) error {
	if err := s.check(); err != nil {
		return err
	}
	if err := s.d.integrity(ctx, s.rdb); err != nil {
		return &Error{Op: "check", DB: s.name, Kind: ErrCorrupt, Err: err}
	}
	var problems []string
	meta, err := readMeta(ctx, s.rdb)
	if err != nil {
		return s.fail("check", err)
	}
	if v, err := storedVersion(meta); err != nil {
		problems = append(problems, err.Error())
	} else if v != len(s.opts.migrations) {
		problems = append(problems, fmt.Sprintf("schema version %d, want %d", v, len(s.opts.migrations)))
	}
	m := marksFrom(meta)
	for l := LevelRaw; l < LevelDay; l++ {
		if m.kept[l] > m.rolled[l+1] {
			problems = append(problems, fmt.Sprintf("%v history deleted up to %d, rolled up only to %d", l, m.kept[l], m.rolled[l+1]))
		}
	}
	for l := LevelMinute; l <= LevelDay; l++ {
		var n int
		if err := s.rdb.QueryRowContext(ctx, s.q("SELECT count(*) FROM "+tables[l]+" WHERE t >= ?"), m.rolled[l]).Scan(&n); err != nil {
			return s.fail("check", err)
		}
		if n > 0 && m.rolled[l] > 0 {
			problems = append(problems, fmt.Sprintf("%d %v rollups beyond the rollup mark %d", n, l, m.rolled[l]))
		}
	}
	for _, inv := range invariants {
		var n int
		if err := s.rdb.QueryRowContext(ctx, inv.query).Scan(&n); err != nil {
			return s.fail("check", err)
		}
		if n > 0 {
			problems = append(problems, strconv.Itoa(n)+" "+inv.rule)
		}
	}
	if len(problems) > 0 {
		return &Error{Op: "check", DB: s.name, Kind: ErrCorrupt, Err: errors.New(strings.Join(problems, "; "))}
	}
	return nil
}
