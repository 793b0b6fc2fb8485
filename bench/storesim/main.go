// Command storesim measures the monitor's history store on a simulated
// clock: it writes the polls of a number of servers over days or months
// as quickly as the store takes them, calling Maintain as the monitor
// does, and prints the database's size as it goes, then the time of the
// queries the web page makes, on the full database.
//
//	go -C bench run ./storesim -servers 50 -days 400
//	go -C bench run ./storesim -dsn postgres://postgres@127.0.0.1/test?search_path=sim -days 30
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/gsq-project/gsq/protocol"
	"github.com/gsq-project/gsq/store"
)

func main() {
	dsn := flag.String("dsn", "", "database (default: a new SQLite file in a temporary directory)")
	servers := flag.Int("servers", 50, "servers polled")
	days := flag.Int("days", 400, "days simulated")
	interval := flag.Duration("interval", 30*time.Second, "poll interval")
	batch := flag.Int("batch", 20, "poll rounds written per Write (1 is the monitor's way; more runs faster)")
	players := flag.Bool("players", false, "list the players of each poll (sessions)")
	every := flag.Int("report", 10, "print the size every this many days")
	flag.Parse()

	path := *dsn
	if path == "" {
		dir, err := os.MkdirTemp("", "storesim")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		path = filepath.Join(dir, "monitor.db")
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := start
	ctx := context.Background()
	st, err := store.Open(ctx, path, store.WithClock(func() time.Time { return clock }))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	names := make([]string, *servers)
	list := make([]store.Server, *servers)
	for i := range names {
		names[i] = fmt.Sprintf("server-%04d", i)
		list[i] = store.Server{Name: names[i], Target: fmt.Sprintf("10.0.%d.%d:%d", i/250, i%250, protocol.Default.DefaultPort), Protocol: protocol.Default.Name}
	}
	if err := st.SyncServers(ctx, list); err != nil {
		log.Fatal(err)
	}
	sim := newFleet(names, *players)
	fmt.Printf("%d servers, poll every %v, %d rounds a write, players listed: %v, %s\n", *servers, *interval, *batch, *players, path)
	fmt.Printf("%6s %12s %12s %14s %10s\n", "day", "db bytes", "wal bytes", "db bytes/server", "write ms")
	var round []store.Sample
	var writeTime time.Duration
	end := start.Add(time.Duration(*days) * 24 * time.Hour)
	nextMaintain := start.Add(time.Minute)
	nextReport := start.Add(time.Duration(*every) * 24 * time.Hour)
	writes := 0
	for t := start; t.Before(end); t = t.Add(*interval) {
		round = append(round, sim.poll(t)...)
		if len(round) < *batch**servers {
			continue
		}
		began := time.Now()
		if err := st.Write(ctx, round); err != nil {
			log.Fatal(err)
		}
		writeTime += time.Since(began)
		writes++
		round = round[:0]
		now := t.Add(*interval)
		if !now.Before(nextMaintain) {
			clock = now
			if err := st.Maintain(ctx, now); err != nil {
				log.Fatal(err)
			}
			nextMaintain = now.Add(time.Minute)
		}
		if !now.Before(nextReport) {
			size, wal := fileSize(path), fileSize(path+"-wal")
			fmt.Printf("%6d %12d %12d %14d %10.2f\n", int(now.Sub(start).Hours()/24), size, wal, size/int64(*servers), float64(writeTime.Microseconds())/1000/float64(writes))
			nextReport = nextReport.Add(time.Duration(*every) * 24 * time.Hour)
		}
	}
	clock = end
	if _, n, err := st.PlayTime(ctx, store.SessionQuery{}); err == nil {
		fmt.Printf("player sessions kept: %d (%d per server)\n", n, n / *servers)
	}
	queries(ctx, st, names[0], end)
}

// fleet simulates servers whose players come and go, with outages.
type fleet struct {
	rng       *rand.Rand
	names     []string
	players   []int
	downUntil []time.Time
	list      bool
	maps      []string
	// online are the players each server's last list had, and listed
	// when: the sessions are the changes between lists, as the monitor's
	// tracker makes them.
	online [][]string
	listed []time.Time
}

func newFleet(names []string, list bool) *fleet {
	return &fleet{rng: rand.New(rand.NewPCG(1, 2)), names: names, players: make([]int, len(names)),
		downUntil: make([]time.Time, len(names)), list: list,
		online: make([][]string, len(names)), listed: make([]time.Time, len(names)),
		maps: []string{"de_dust2", "de_inferno", "de_nuke", "de_mirage", "de_overpass", "de_ancient", "de_vertigo", "cs_office"}}
}

func (f *fleet) poll(t time.Time) []store.Sample {
	out := make([]store.Sample, 0, len(f.names))
	for i, name := range f.names {
		at := t.Add(time.Duration(i%30) * time.Second)
		if f.rng.IntN(20000) == 0 {
			f.downUntil[i] = at.Add(time.Duration(f.rng.IntN(60)) * time.Minute)
		}
		if at.Before(f.downUntil[i]) {
			smp := store.Sample{Server: name, Time: at}
			for _, p := range f.online[i] { // down: they left when last listed
				smp.Sessions = append(smp.Sessions, store.SessionChange{Player: p, Left: true, Time: f.listed[i]})
			}
			f.online[i] = nil
			out = append(out, smp)
			continue
		}
		// Busier in the evening (UTC), 0 to 24 of 32.
		target := 4 + 10*(1+int(8*sinDay(at)))/2
		f.players[i] = max(0, min(32, f.players[i]+f.rng.IntN(3)-1+sign(target-f.players[i])*f.rng.IntN(2)))
		smp := store.Sample{Server: name, Time: at, Up: true, Players: f.players[i], MaxPlayers: 32, Bots: 0,
			Map: f.maps[(at.Unix()/1800+int64(i))%int64(len(f.maps))], Version: "1.40.2.1",
			Name: name, Ping: time.Duration(20+f.rng.IntN(30)) * time.Millisecond}
		if f.list {
			smp.PlayerList = make([]store.PlayerSeen, 0, f.players[i])
			now := make([]string, 0, f.players[i])
			for p := range f.players[i] {
				name := fmt.Sprintf("player-%d-%d", i, p+int(at.Unix()/86400)%50)
				now = append(now, name)
				smp.PlayerList = append(smp.PlayerList, store.PlayerSeen{Name: name, Score: int64(p)})
			}
			smp.Sessions = changes(f.online[i], now)
			f.online[i], f.listed[i] = now, at
		}
		out = append(out, smp)
	}
	return out
}

// changes are the sessions between two lists of distinct names: a leave
// for each name gone, a join for each name new.
func changes(prev, now []string) []store.SessionChange {
	var out []store.SessionChange
	for _, p := range prev {
		if !slices.Contains(now, p) {
			out = append(out, store.SessionChange{Player: p, Left: true})
		}
	}
	for _, p := range now {
		if !slices.Contains(prev, p) {
			out = append(out, store.SessionChange{Player: p})
		}
	}
	return out
}

func sign(n int) int {
	switch {
	case n > 0:
		return 1
	case n < 0:
		return -1
	}
	return 0
}

// sinDay is a day's cycle, -1 at 06:00 UTC, 1 at 18:00.
func sinDay(t time.Time) float64 {
	h := float64(t.Hour()) + float64(t.Minute())/60
	x := (h - 12) / 12 // -1..1
	return -1 + 2*(1-abs(x))
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// fileSize is the size of a file, 0 for none (or PostgreSQL).
func fileSize(path string) int64 {
	if info, err := os.Stat(path); err == nil {
		return info.Size()
	}
	return 0
}

// queries times the queries the web page makes, on the full database:
// the median of 15 runs each.
func queries(ctx context.Context, st store.Store, server string, now time.Time) {
	fmt.Println("\nquery times on the full database (median of 15):")
	for _, q := range []struct {
		name string
		fn   func() error
	}{
		{"History 1 h by 30 s", func() error { _, err := st.History(ctx, server, now.Add(-time.Hour), now, 30*time.Second); return err }},
		{"History 24 h by 5 min", func() error {
			_, err := st.History(ctx, server, now.Add(-24*time.Hour), now, 5*time.Minute)
			return err
		}},
		{"History 7 d by 1 h", func() error { _, err := st.History(ctx, server, now.Add(-7*24*time.Hour), now, time.Hour); return err }},
		{"History 30 d by 6 h", func() error {
			_, err := st.History(ctx, server, now.Add(-30*24*time.Hour), now, 6*time.Hour)
			return err
		}},
		{"History 365 d by 1 d", func() error {
			_, err := st.History(ctx, server, now.Add(-365*24*time.Hour), now, 24*time.Hour)
			return err
		}},
		{"Uptime 24 h", func() error { _, _, err := st.Uptime(ctx, server, now.Add(-24*time.Hour), now); return err }},
		{"Uptime 30 d", func() error { _, _, err := st.Uptime(ctx, server, now.Add(-30*24*time.Hour), now); return err }},
		{"UptimeAll 24 h", func() error { _, err := st.UptimeAll(ctx, now.Add(-24*time.Hour), now); return err }},
		{"Records", func() error { _, err := st.Records(ctx, server); return err }},
		{"Sessions (last 50)", func() error {
			_, err := st.Sessions(ctx, store.SessionQuery{Server: server, Limit: 50})
			return err
		}},
	} {
		var times []time.Duration
		for range 15 {
			began := time.Now()
			if err := q.fn(); err != nil {
				log.Fatal(q.name, ": ", err)
			}
			times = append(times, time.Since(began))
		}
		slices.Sort(times)
		fmt.Printf("  %-24s %10v\n", q.name, times[len(times)/2].Round(time.Microsecond))
	}
}
