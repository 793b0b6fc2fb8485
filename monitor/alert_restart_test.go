package monitor

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gsq-project/gsq/internal/testutil"
	"github.com/gsq-project/gsq/result"
	"github.com/gsq-project/gsq/store"
	"github.com/gsq-project/gsq/store/storetest"
)

// eachJournal runs fn on a SQLite file, and on PostgreSQL when
// GSQ_TEST_POSTGRES names one: the DSN a monitor opens, and opens again.
func eachJournal(t *testing.T, fn func(t *testing.T, dsn string)) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, filepath.Join(t.TempDir(), "monitor.db"))
	})
	if dsn := storetest.PostgresDSN(t); dsn != "" {
		t.Run("postgres", func(t *testing.T) {
			t.Parallel()
			fn(t, dsn)
		})
	}
}

// run is one run of a monitor of one server on a store: what the
// poller does with its Alerter across a restart.
type run struct {
	st store.Store
	*testMonitor
}

// startRun opens the store and an Alerter that carries on from it, with
// a fresh Tracker, as a monitor that starts does.
func startRun(t *testing.T, dsn string, cfg *Config, now time.Time) *run {
	t.Helper()
	st, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SyncServers(context.Background(), []store.Server{{Name: "eu-1", Target: "127.0.0.1:27015", Protocol: "a2s"}}); err != nil {
		t.Fatal(err)
	}
	a, err := OpenAlerter(testutil.Context(t), cfg, AlerterOptions{Logf: t.Logf, Journal: st, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := cfg.Server("eu-1")
	return &run{st: st, testMonitor: &testMonitor{t: t, tracker: NewTracker(srv, cfg.Policy(srv), now), alerts: a, now: now}}
}

// stop closes the Alerter, giving up at once when abandon is set (what
// is left stays in the store), and the store.
func (r *run) stop(abandon bool) {
	r.t.Helper()
	ctx := testutil.Context(r.t)
	if abandon {
		c, cancel := context.WithCancel(ctx)
		cancel()
		ctx = c
	}
	if err := r.alerts.Close(ctx); err != nil && !abandon {
		r.t.Fatal(err)
	}
	if err := r.st.Close(); err != nil {
		r.t.Fatal(err)
	}
}

// TestRestartMidOutageNoRepeat: a monitor restarted in the middle of an
// outage it announced does not announce it again; when the server comes
// back, the one up alert says how long it was down in all. Issue 19: "a
// restart pages again".
func TestRestartMidOutageNoRepeat(t *testing.T) {
	eachJournal(t, func(t *testing.T, dsn string) {
		rc := testutil.NewReceiver(t, nil)
		cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
		r := startRun(t, dsn, cfg, t0)
		r.polls(30*time.Second, "+---") // down at t0+2m, announced
		testutil.Await(t, rc.Got, "the down alert")
		r.stop(false)

		r = startRun(t, dsn, cfg, r.now.Add(time.Minute))
		r.polls(30*time.Second, "------") // down again to a fresh tracker
		r.polls(30*time.Second, "+")
		r.stop(false)

		got := alertsOf(t, rc)
		if len(got) != 2 || got[0].Kind != AlertDown || got[1].Kind != AlertUp {
			t.Fatalf("got %d alerts %+v, want the down once and the up", len(got), got)
		}
		// From the last answer (t0+30s) to the up (t0+2m, +1m, +3m30s).
		if want := (6*time.Minute + 30*time.Second - 30*time.Second).Seconds(); got[1].DowntimeSeconds != want {
			t.Errorf("up after %vs, want %vs: the outage as a whole", got[1].DowntimeSeconds, want)
		}
	})
}

// TestRestartKeepsUndelivered: alerts raised while the receiver did not
// take them, when the monitor stops, go once it starts again: once
// each, in order, with the idempotency key of their first attempt, and
// nothing is raised twice.
func TestRestartKeepsUndelivered(t *testing.T) {
	eachJournal(t, func(t *testing.T, dsn string) {
		down := make(chan struct{})
		rc := testutil.NewReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-down: // the receiver is back
				w.WriteHeader(http.StatusNoContent)
			default:
				http.Error(w, "unavailable", http.StatusServiceUnavailable)
			}
		})
		cfg := configWith(t, oneServer("  - "+rc.URL+"\n"))
		r := startRun(t, dsn, cfg, t0)
		r.polls(30*time.Second, "+---") // down: raised, not taken
		testutil.Await(t, rc.Got, "a first attempt")
		r.stop(true)
		if s := r.alerts.Stats()[0]; s.Kept != 1 || s.Sent+s.Failed+s.Dropped != 0 {
			t.Fatalf("stats at stop %+v, want the down kept", s)
		}
		refused := rc.Count()

		close(down)
		r = startRun(t, dsn, cfg, r.now.Add(time.Minute))
		r.polls(30*time.Second, "----")
		r.polls(30*time.Second, "+")
		r.stop(false)
		got := alertsOf(t, rc)[refused:]
		if len(got) != 2 || got[0].Kind != AlertDown || got[1].Kind != AlertUp {
			t.Fatalf("after the restart the receiver took %+v, want the kept down, then the up", got)
		}
		// The down sent again after the restart carries the key of its
		// first attempt (its outbox row): a receiver can tell it is one.
		first := rc.Request(0).Header.Get("X-Gsq-Delivery")
		again := rc.Request(refused).Header.Get("X-Gsq-Delivery")
		up := rc.Request(refused + 1).Header.Get("X-Gsq-Delivery")
		if !strings.HasPrefix(first, "eu-1:") || again != first || up == "" || up == first {
			t.Errorf("idempotency keys: first attempt %q, after the restart %q, the up %q; want the down's the same, the up's its own", first, again, up)
		}
		log, err := func() (store.AlertLog, error) {
			st, err := store.Open(context.Background(), dsn)
			if err != nil {
				return store.AlertLog{}, err
			}
			defer st.Close()
			return st.LoadAlerts(context.Background())
		}()
		if err != nil || len(log.Outbox) != 0 || len(log.States) != 1 {
			t.Errorf("the journal after: %v, %d alerts left, %d states", err, len(log.Outbox), len(log.States))
		}
	})
}

// BenchmarkAlerterHandlePollJournal is BenchmarkAlerterHandlePoll with
// the journal of a SQLite store: what a poll costs when the rules' state
// is snapshotted after every event (and written only when it changed,
// here never).
func BenchmarkAlerterHandlePollJournal(b *testing.B) {
	cfg, err := Parse([]byte("webhooks: ['http://127.0.0.1:1/']\nalerts: [down, up, map, {on: players, threshold: 10}]\nservers:\n  - {name: s, address: 127.0.0.1:27015}\n"), "b.yaml")
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "monitor.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	a, err := OpenAlerter(context.Background(), cfg, AlerterOptions{Journal: st})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close(context.Background())
	players, mapName := 5, "de_dust2"
	state := &ServerState{Name: "s", Status: StatusUp, LastSuccess: t0, Summary: result.Summary{Players: &players, Map: &mapName}}
	ev := Event{Kind: EventPoll, Server: "s", Time: t0, State: state}
	b.ReportAllocs()
	for b.Loop() {
		a.Handle(ev)
	}
}
