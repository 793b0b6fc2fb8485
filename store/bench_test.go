package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// benchEngines are the engines the benchmarks run on.
func benchEngines() []string {
	if os.Getenv("GSQ_TEST_POSTGRES") != "" {
		return []string{"sqlite", "postgres"}
	}
	return []string{"sqlite"}
}

// newDatabase is a new, empty database of the engine: a benchmark's
// function runs more than once, each time from scratch.
func newDatabase(b *testing.B, name string) engine {
	if name == "postgres" {
		return engine{name: name, dsn: postgresTestDSN(b, os.Getenv("GSQ_TEST_POSTGRES"))}
	}
	return engine{name: name, dsn: filepath.Join(b.TempDir(), "monitor.db")}
}

// benchRound is poll round i of n servers, each listing players.
func benchRound(names []string, i, players int) []Sample {
	at := t0.Add(time.Duration(i) * 30 * time.Second)
	round := make([]Sample, len(names))
	for s, name := range names {
		smp := up(name, at.Add(time.Duration(s%30)*time.Second), 10+i%5)
		smp.Map = fmt.Sprint("map", (i/60+s)%8)
		if players > 0 {
			smp.PlayerList = make([]PlayerSeen, players)
			for p := range players {
				smp.PlayerList[p] = PlayerSeen{Name: fmt.Sprint("player", p), Score: int64(i + p)}
				if i == 0 {
					smp.Sessions = append(smp.Sessions, SessionChange{Player: smp.PlayerList[p].Name})
				}
			}
		}
		round[s] = smp
	}
	return round
}

func benchStore(b *testing.B, e engine, n int, opts ...Option) (Store, []string) {
	ctx := context.Background()
	st, err := Open(ctx, e.dsn, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	names := make([]string, n)
	servers := make([]Server, n)
	for i := range names {
		names[i] = fmt.Sprint("server-", i)
		servers[i] = Server{Name: names[i], Target: "127.0.0.1:27015", Protocol: "a2s"}
	}
	if err := st.SyncServers(ctx, servers); err != nil {
		b.Fatal(err)
	}
	return st, names
}

// BenchmarkWriteRound is the cost of one poll round of 10,000 servers:
// info only, and with 10 players listed per server whose scores all
// change (the worst case for sessions).
func BenchmarkWriteRound(b *testing.B) {
	for _, players := range []int{0, 10} {
		for _, name := range benchEngines() {
			b.Run(fmt.Sprintf("%s/10000-servers/%d-players", name, players), func(b *testing.B) {
				ctx := context.Background()
				st, names := benchStore(b, newDatabase(b, name), 10000)
				if err := st.Write(ctx, benchRound(names, 0, players)); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 1; i <= b.N; i++ {
					round := benchRound(names, i, players)
					if err := st.Write(ctx, round); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*len(names))/b.Elapsed().Seconds(), "samples/s")
			})
		}
	}
}

// BenchmarkMaintain10k is the cost of the Maintain call that rolls up ten
// minutes of 10,000 servers' samples (a minute rollup batch), the
// busiest one but the hourly and daily ones.
func BenchmarkMaintain10k(b *testing.B) {
	for _, name := range benchEngines() {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			st, names := benchStore(b, newDatabase(b, name), 10000)
			round := 0
			b.ReportAllocs()
			for range b.N {
				b.StopTimer()
				for range 20 {
					if err := st.Write(ctx, benchRound(names, round, 0)); err != nil {
						b.Fatal(err)
					}
					round++
				}
				b.StartTimer()
				if err := st.Maintain(ctx, t0.Add(time.Duration(round)*30*time.Second+90*time.Second)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkQueries10k times the web page's queries on 10,000 servers
// with two hours of history: the raw samples of every server lie
// interleaved in time, so a server's recent history is a scan of all.
func BenchmarkQueries10k(b *testing.B) {
	for _, name := range benchEngines() {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			now := t0.Add(2 * time.Hour)
			st, names := benchStore(b, newDatabase(b, name), 10000, WithClock(func() time.Time { return now }))
			for i := range 240 {
				if err := st.Write(ctx, benchRound(names, i, 0)); err != nil {
					b.Fatal(err)
				}
				if i%20 == 19 {
					if err := st.Maintain(ctx, t0.Add(time.Duration(i+1)*30*time.Second+90*time.Second)); err != nil {
						b.Fatal(err)
					}
				}
			}
			for _, q := range []struct {
				name string
				fn   func() error
			}{
				{"History-1h-by-30s", func() error {
					_, err := st.History(ctx, names[5000], now.Add(-time.Hour), now, 30*time.Second)
					return err
				}},
				{"History-2h-by-5m", func() error {
					_, err := st.History(ctx, names[5000], now.Add(-2*time.Hour), now, 5*time.Minute)
					return err
				}},
				{"Uptime-24h", func() error { _, _, err := st.Uptime(ctx, names[5000], now.Add(-24*time.Hour), now); return err }},
				{"UptimeAll-24h", func() error { _, err := st.UptimeAll(ctx, now.Add(-24*time.Hour), now); return err }},
				{"Records", func() error { _, err := st.Records(ctx, names[5000]); return err }},
			} {
				b.Run(q.name, func(b *testing.B) {
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

// sessionsFixture fills a new database with 2.5 million sessions as a
// store of 150 servers keeps them after an attack: 50 hostile servers
// whose every poll listed 64 new names (2.4 million sessions in the last
// 13 minutes), and 100 honest servers with 100,000 sessions of half an
// hour over the 90 days before, 2,000 of them still open. The rows are
// written straight into the tables, a thousand a statement: Write would
// take an hour. It returns the store and its clock's now.
func sessionsFixture(b *testing.B, e engine) (*db, time.Time) {
	ctx := context.Background()
	now := t0.Add(90 * 24 * time.Hour)
	st, names := benchStore(b, e, 150, WithClock(func() time.Time { return now }))
	s := st.(*db)
	ids := make([]int64, len(names))
	for i, name := range names {
		err := s.wdb.QueryRowContext(ctx, s.q("SELECT id FROM servers WHERE name = ?"), name).Scan(&ids[i])
		if err != nil {
			b.Fatal(err)
		}
	}
	const hostile, honest = 2_400_000, 100_000
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	var players, sessions []any
	flush := func(force bool) {
		if len(sessions) < 5000 && !force {
			return
		}
		if err := s.execRows(ctx, tx, "INSERT INTO players (id, name)", "", 2, players); err != nil {
			b.Fatal(err)
		}
		if err := s.execRows(ctx, tx, "INSERT INTO sessions (server, player, joined_at, left_at, score)", "", 5, sessions); err != nil {
			b.Fatal(err)
		}
		players, sessions = players[:0], sessions[:0]
	}
	end := now.Unix()
	for i := range int64(hostile + honest) {
		var server, joined int64
		var left any
		if i < hostile {
			// A poll every 10 s for 13 minutes; each name stays one poll.
			server = ids[i%50]
			joined = end - 13*60 + (i/50/64)*10%(13*60)
			left = joined + 10
		} else {
			server = ids[50+i%100]
			joined = end - 90*24*3600 + (i-hostile)*(90*24*3600/honest)
			left = joined + 1800
			if i >= hostile+honest-2000 {
				left = nil
			}
		}
		players = append(players, i+1, fmt.Sprint("player-", i))
		sessions = append(sessions, server, i+1, joined, left, 0)
		flush(false)
	}
	flush(true)
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

// BenchmarkSessions2500k times the sessions query of the API on 2.5
// million sessions (sessionsFixture): across all servers, the page's
// default (the last 24 hours, 100 sessions), all time, an hour a week
// ago, a window in the future; one server's and one player's.
//
//	go test ./store/ -run '^$' -bench Sessions2500k -benchtime 20x
func BenchmarkSessions2500k(b *testing.B) {
	for _, name := range benchEngines() {
		b.Run(name, func(b *testing.B) {
			st, now := sessionsFixture(b, newDatabase(b, name))
			ctx := context.Background()
			day := 24 * time.Hour
			for _, q := range []struct {
				name string
				q    SessionQuery
			}{
				{"all-24h", SessionQuery{From: now.Add(-day), Limit: 100}},
				{"all-time", SessionQuery{Limit: 100}},
				{"all-1h-a-week-ago", SessionQuery{From: now.Add(-7 * day), To: now.Add(-7*day + time.Hour), Limit: 100}},
				{"all-future", SessionQuery{From: now.Add(day), To: now.Add(2 * day), Limit: 100}},
				{"one-server-24h", SessionQuery{Server: "server-7", From: now.Add(-day), Limit: 100}},
				{"one-player", SessionQuery{Player: "player-2400123", Limit: 100}},
			} {
				b.Run(q.name, func(b *testing.B) {
					b.ReportAllocs()
					for range b.N {
						if _, err := st.Sessions(ctx, q.q); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
