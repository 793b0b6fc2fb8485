package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// viewsFixture fills a new database as 10,000 servers leave it after a
// year: 1.04 million incidents (two a week per server, one in ten in
// maintenance), and 90 days of sessions (what retention keeps): 200,000
// players, 2 million sessions spread over the servers, one busy server
// with 100,000 of them in the last 30 days, and a regular with 900
// sessions on three servers. The rows are written straight into the
// tables, a thousand a statement. It returns the store and its now.
func viewsFixture(b *testing.B, e engine, incidents bool) (*db, time.Time) {
	ctx := context.Background()
	now := t0.Add(365 * 24 * time.Hour)
	st, names := benchStore(b, e, 10000, WithClock(func() time.Time { return now }))
	s := st.(*db)
	ids := make(map[string]int64, len(names))
	err := eachRow(ctx, s.wdb, "SELECT id, name FROM servers", nil, func(r *sql.Rows) error {
		var id int64
		var name string
		if err := r.Scan(&id, &name); err != nil {
			return err
		}
		ids[name] = id
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	sid := func(i int) int64 { return ids[names[i%len(names)]] }
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	var rows []any
	insert := func(head string, cols int, force bool) {
		if len(rows) < 1000*cols && !force {
			return
		}
		if err := s.execRows(ctx, tx, head, "", cols, rows); err != nil {
			b.Fatal(err)
		}
		rows = rows[:0]
	}
	end := now.Unix()
	const week = 7 * 24 * 3600
	incHead := "INSERT INTO incidents (server, started_at, ended_at, cause, detail, maintenance)"
	for w := range 52 * incidents01(incidents) {
		for i := range len(names) {
			for k := range 2 {
				start := end - int64(52-w)*week + int64(k)*week/2 + int64(i%3600)
				m := 0
				if (i+w+k)%10 == 0 {
					m = 1
				}
				rows = append(rows, sid(i), start, start+int64(60+i%900), []string{"timeout", "unreachable", "protocol"}[(i+k)%3], "no answer in 2s", m)
				insert(incHead, 6, false)
			}
		}
	}
	insert(incHead, 6, true)
	const players, sessions = 200_000, 2_000_000
	for p := range players {
		rows = append(rows, p+1, fmt.Sprint("player-", p))
		insert("INSERT INTO players (id, name)", 2, false)
	}
	rows = append(rows, players+1, "Regular")
	insert("INSERT INTO players (id, name)", 2, true)
	sessHead := "INSERT INTO sessions (server, player, joined_at, left_at, score)"
	span := int64(90 * 24 * 3600)
	for i := range int64(sessions) {
		server := sid(int(i % 10000))
		joined := end - span + i*(span/sessions)
		if i%20 == 0 { // the busy server: 100,000 sessions in the last 30 days
			server = sid(42)
			joined = end - 30*24*3600 + (i/20)*(30*24*3600/(sessions/20))
		}
		rows = append(rows, server, i%players+1, joined, joined+1800, 0)
		insert(sessHead, 5, false)
	}
	for k := range int64(900) {
		joined := end - span + k*(span/900)
		rows = append(rows, sid(int(k%3)*1000+7), players+1, joined, joined+3600, 0)
		insert(sessHead, 5, false)
	}
	insert(sessHead, 5, true)
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if e.name == "postgres" {
		if _, err := s.wdb.ExecContext(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
	return s, now
}

func incidents01(b bool) int {
	if b {
		return 1
	}
	return 0
}

// BenchmarkViews10k times the store's part of the player and incident
// views on viewsFixture: 10,000 servers, a year of incidents, 90 days of
// sessions.
//
//	go test ./store/ -run '^$' -bench Views10k -benchtime 20x
//	GSQ_BENCH_VIEWS=-players-only go test ./store/ -run '^$' -bench 'Views10k/.*/(Search|Player|Regulars)' (no incidents: quicker to build)
func BenchmarkViews10k(b *testing.B) {
	for _, name := range benchEngines() {
		b.Run(name+os.Getenv("GSQ_BENCH_VIEWS"), func(b *testing.B) {
			st, now := viewsFixture(b, newDatabase(b, name), !strings.Contains(b.Name(), "players-only"))
			ctx := context.Background()
			day := 24 * time.Hour
			for _, q := range []struct {
				name string
				fn   func() error
			}{
				{"SearchPlayers-part", func() error { _, err := st.SearchPlayers(ctx, "er-1234", nil, 20); return err }},
				{"SearchPlayers-exact", func() error { _, err := st.SearchPlayers(ctx, "Regular", nil, 20); return err }},
				{"SearchPlayers-none", func() error { _, err := st.SearchPlayers(ctx, "nobody-at-all", nil, 20); return err }},
				{"Player-regular", func() error { _, err := st.Player(ctx, "Regular", nil, now.Add(-7*day)); return err }},
				{"Player-sessions-50", func() error {
					_, err := st.Sessions(ctx, SessionQuery{Player: "Regular", From: now.Add(-90 * day), Limit: 50})
					return err
				}},
				{"Regulars-busy-7d", func() error { _, err := st.Regulars(ctx, "server-42", now.Add(-7*day), now, 10); return err }},
				{"Regulars-busy-30d", func() error { _, err := st.Regulars(ctx, "server-42", now.Add(-30*day), now, 10); return err }},
				{"Regulars-typical-30d", func() error { _, err := st.Regulars(ctx, "server-4242", now.Add(-30*day), now, 10); return err }},
				{"Incidents-fleet-30d-100", func() error {
					_, err := st.Incidents(ctx, IncidentQuery{From: now.Add(-30 * day), Limit: 100})
					return err
				}},
				{"Incidents-fleet-30d-1000", func() error {
					_, err := st.Incidents(ctx, IncidentQuery{From: now.Add(-30 * day), Limit: 1000})
					return err
				}},
				{"Incidents-server-30d", func() error {
					_, err := st.Incidents(ctx, IncidentQuery{Server: "server-4242", From: now.Add(-30 * day), Limit: 50})
					return err
				}},
				{"Incidents-server-year", func() error {
					_, err := st.Incidents(ctx, IncidentQuery{Server: "server-4242", From: now.Add(-365 * day), Limit: 1000})
					return err
				}},
				{"Servers", func() error { _, err := st.Servers(ctx); return err }},
			} {
				b.Run(q.name, func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						if err := q.fn(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
